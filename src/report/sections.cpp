// The report's sections and charts, in page order (docs/report.md lists them).
#include <algorithm>
#include <cmath>
#include <initializer_list>

#include <fmt/core.h>

#include "report/sections.hpp"

namespace dltune::report {

namespace {

// True when the series is absent from the window or zero wherever it has a value.
bool idle(const ReportData& data, const std::string& id) {
  const Series* s = data.find(id);
  return s == nullptr || std::all_of(s->values.begin(), s->values.end(),
                                     [](double v) { return std::isnan(v) || v == 0; });
}

// An axis title with its unit, for a series' unit (series.hpp lists them).
std::string unit_title(const std::string& unit) {
  if (unit == "percent") return "%";
  if (unit == "watts") return "W";
  if (unit == "celsius") return "°C";
  if (unit == "1/s") return "per second";
  return unit;  // "bytes", "bytes/s", "MHz", "count"
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A unit's axis title where the default one would not say enough ("% of one CPU").
using AxisTitles = std::vector<std::pair<std::string, std::string>>;

// Adds a chart with those of `ids` that the data has; none when it has none of them. A chart
// whose series are all zero in the window is kept as one line of text, `empty` (without one,
// that its title's figures stayed at zero).
class Builder {
 public:
  explicit Builder(const ReportData& data) : data_(data) {}

  Chart* chart(Section& section, std::string id, std::string title,
               const std::vector<std::string>& ids, std::string empty = {},
               const AxisTitles& titles = {}) {
    Chart c;
    c.id = std::move(id);
    c.title = std::move(title);
    std::vector<std::string> units;
    for (const auto& s : ids)
      if (const Series* series = data_.find(s)) {
        c.series.push_back(s);
        if (std::find(units.begin(), units.end(), series->unit) == units.end())
          units.push_back(series->unit);
      }
    if (c.series.empty()) return nullptr;
    for (const auto& u : units) {
      const auto it =
          std::find_if(titles.begin(), titles.end(), [&](const auto& t) { return t.first == u; });
      c.axes.push_back(it != titles.end() ? it->second : unit_title(u));
    }
    if (std::all_of(c.series.begin(), c.series.end(),
                    [&](const std::string& s) { return idle(data_, s); }))
      c.empty = empty.empty() ? fmt::format("{}: zero throughout this window", c.title) : empty;
    section.charts.push_back(std::move(c));
    return &section.charts.back();
  }

 private:
  const ReportData& data_;
};

// Devices (disks or interfaces) whose series in `fields` are all idle in the window.
std::vector<std::string> idle_devices(const ReportData& data, const std::string& kind,
                                      const std::vector<std::string>& names,
                                      std::initializer_list<const char*> fields) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (std::all_of(fields.begin(), fields.end(),
                    [&](const char* f) { return idle(data, kind + "." + n + "." + f); }))
      out.push_back(n);
  return out;
}

// A device chart: the totals, and each device's own lines where more than one device was busy.
// Idle devices are left out and named in a note; with none busy, the chart is one line.
void device_chart(const ReportData& data, Builder& b, Section& section, const std::string& kind,
                  const std::vector<std::string>& names, const char* first, const char* second,
                  std::string id, std::string title, const std::string& what,
                  const std::string& activity) {
  const auto quiet = idle_devices(data, kind, names, {first, second});
  std::vector<std::string> busy;
  for (const auto& n : names)
    if (std::find(quiet.begin(), quiet.end(), n) == quiet.end()) busy.push_back(n);
  std::vector<std::string> ids{kind + "." + first, kind + "." + second};
  if (busy.size() > 1)
    for (const auto& n : busy) {
      ids.push_back(kind + "." + n + "." + first);
      ids.push_back(kind + "." + n + "." + second);
    }
  Chart* c = b.chart(section, std::move(id), std::move(title), ids,
                     fmt::format("{}: no {} on {} in this window", what, activity, joined(names)));
  if (c != nullptr && c->empty.empty() && !quiet.empty() && names.size() > 1)
    c->note = fmt::format("No {} on {} in this window (left out).", activity, joined(quiet));
}

// Stretches of the window in which a series is above zero: from the sample that shows it to
// the next sample (the state is known to hold until a sample says otherwise).
std::vector<Band> bands_of(const ReportData& data, const std::string& id,
                           const std::string& label) {
  std::vector<Band> out;
  const Series* s = data.find(id);
  if (s == nullptr || s->values.size() != data.time_ms.size()) return out;
  const auto& v = s->values;
  const auto& t = data.time_ms;
  for (std::size_t k = 0; k < v.size();) {
    if (!(v[k] > 0)) {
      ++k;
      continue;
    }
    std::size_t end = k;
    while (end < v.size() && v[end] > 0) ++end;
    Band band;
    band.series = id;
    band.label = label;
    band.from_ms = t[k];
    band.to_ms = end < t.size() ? t[end] : t.back();
    out.push_back(std::move(band));
    k = end;
  }
  return out;
}

std::string job_absent(const std::string& scope) {
  // record writes "HOST  host" (monitor::describe); "host" alone too.
  std::string_view what = scope;
  if (const auto sep = what.find("  "); sep != std::string_view::npos) what = what.substr(sep + 2);
  if (what == "host" || what.empty())
    return "the recording followed the host only (record --pid, --cgroup or a COMMAND follows a "
           "job)";
  return fmt::format("no process of the job was seen (scope: {})", scope);
}

}  // namespace

std::vector<Section> make_sections(const ReportData& data, const SectionFacts& f) {
  Builder b(data);
  std::vector<Section> out;

  Section host{"host", "Host: CPU and memory", {}, {}};
  b.chart(host, "cpu", "CPU (% of all CPUs)",
          {"cpu.user_pct", "cpu.system_pct", "cpu.iowait_pct", "cpu.steal_pct"}, {},
          {{"percent", "% of all CPUs"}});
  // Swap that stayed unused (or a host without swap) is a note, not a line along zero.
  const bool swap_used = !idle(data, "swap.used_bytes");
  const bool swap_traffic = !idle(data, "swap.in_bytes_s") || !idle(data, "swap.out_bytes_s");
  std::vector<std::string> host_memory{"memory.used_bytes", "memory.cache_bytes",
                                       "memory.available_bytes"};
  if (swap_used) host_memory.push_back("swap.used_bytes");
  if (Chart* c = b.chart(host, "memory", "Memory", host_memory);
      c != nullptr && !swap_used && data.find("swap.used_bytes") != nullptr)
    c->note = "Swap: none used in this window.";
  std::vector<std::string> paging{"memory.major_faults_s"};
  if (swap_traffic) paging.insert(paging.begin(), {"swap.in_bytes_s", "swap.out_bytes_s"});
  if (Chart* c = b.chart(host, "paging", "Swap traffic and major page faults", paging,
                         "Swap: none used, and no major page fault, in this window",
                         {{"1/s", "faults/s"}});
      c != nullptr && c->empty.empty() && !swap_traffic)
    c->note = "Swap: none used in this window (no swap in or out).";
  if (host.charts.empty()) host.absent = "no sample with a previous one to compute rates from";
  out.push_back(std::move(host));

  Section psi{"pressure", "Pressure stall (PSI, % of time)", {}, {}};
  b.chart(psi, "pressure", "Pressure stall: share of time some (or all) tasks waited",
          {"pressure.cpu.some_pct", "pressure.cpu.full_pct", "pressure.memory.some_pct",
           "pressure.memory.full_pct", "pressure.io.some_pct", "pressure.io.full_pct"},
          "Pressure stall: no task waited for CPU, memory or I/O in this window",
          {{"percent", "% of time"}});
  if (psi.charts.empty())
    psi.absent = f.saw_pressure ? "only one sample: pressure is a rate between two samples"
                                : "the host had no /proc/pressure (Linux 4.20+ with PSI enabled; "
                                  "some kernels need psi=1 on the command line)";
  out.push_back(std::move(psi));

  Section io{"io", "Disks and network", {}, {}};
  device_chart(data, b, io, "disk", f.disks, "read_bytes_s", "write_bytes_s", "disk",
               "Disk throughput", "Disks", "reads or writes");
  device_chart(data, b, io, "net", f.nets, "rx_bytes_s", "tx_bytes_s", "net",
               "Network throughput (all interfaces but lo)", "Network", "traffic");
  if (io.charts.empty())
    io.absent = f.disks.empty() && f.nets.empty()
                    ? "no disk or network interface in the recording"
                    : "only one sample: throughput is a rate between two samples";
  out.push_back(std::move(io));

  Section gpu{"gpu", "GPUs", {}, {}};
  auto per_gpu = [&](const char* field) {
    std::vector<std::string> ids;
    for (unsigned g : f.gpus) ids.push_back(fmt::format("gpu.{}.{}", g, field));
    return ids;
  };
  b.chart(gpu, "gpu_util", "GPU utilisation (% of time a kernel ran, NVML)", per_gpu("util_pct"),
          {}, {{"percent", "% of time"}});
  auto memory = per_gpu("memory_used_bytes");
  for (auto& id : per_gpu("memory_total_bytes")) memory.push_back(id);
  b.chart(gpu, "gpu_memory", "GPU memory: used and total", memory);
  b.chart(gpu, "gpu_power", "GPU power", per_gpu("power_w"));
  b.chart(gpu, "gpu_temperature", "GPU temperature", per_gpu("temperature_c"));
  auto clocks = per_gpu("sm_clock_mhz");
  for (auto& id : per_gpu("memory_clock_mhz")) clocks.push_back(id);
  b.chart(gpu, "gpu_clocks", "GPU clocks: SM and memory", clocks);
  b.chart(gpu, "gpu_held",
          "GPUs held below their clocks, by reason (NVML clock event reasons; idle is none)",
          {"gpu.held.power_cap", "gpu.held.thermal", "gpu.held.hw_slowdown", "gpu.held.settings"},
          "GPU clocks: never held down (by power, heat, the board or settings) in this window",
          {{"count", "GPUs"}});
  // The reasons that slow a GPU down, as bands behind its utilisation and clocks: where the
  // lines drop, the band says whether power, heat or the board held it.
  std::vector<Band> bands;
  for (const auto& [id, label] : {std::pair{"gpu.held.power_cap", "power cap"},
                                  std::pair{"gpu.held.thermal", "thermal slowdown"},
                                  std::pair{"gpu.held.hw_slowdown", "hardware slowdown"}})
    for (auto& band : bands_of(data, id, label)) bands.push_back(std::move(band));
  for (auto& c : gpu.charts)
    if ((c.id == "gpu_util" || c.id == "gpu_clocks") && c.empty.empty()) c.bands = bands;
  auto pcie = per_gpu("pcie_rx_bytes_s");
  for (auto& id : per_gpu("pcie_tx_bytes_s")) pcie.push_back(id);
  b.chart(gpu, "gpu_pcie", "GPU PCIe throughput: received (host to GPU) and sent (NVML)", pcie);
  // Only where a GPU has NVLink (and NVML's data counters): no series, no chart.
  auto nvlink = per_gpu("nvlink_rx_bytes_s");
  for (auto& id : per_gpu("nvlink_tx_bytes_s")) nvlink.push_back(id);
  b.chart(gpu, "gpu_nvlink", "GPU NVLink throughput: data received and sent (NVML)", nvlink);
  if (gpu.charts.empty())
    gpu.absent = f.saw_gpu ? "NVML gave no utilisation, memory, power, temperature or clocks"
                           : "no GPU in the recording (no NVIDIA GPU, or NVML could not be "
                             "loaded)";
  out.push_back(std::move(gpu));

  Section job{"job", "The job's processes", {}, {}};
  b.chart(job, "job_cpu", "Job CPU by role (% of one CPU)",
          {"job.main.cpu_pct", "job.workers.cpu_pct", "job.children.cpu_pct"}, {},
          {{"percent", "% of one CPU"}});
  b.chart(job, "job_memory", "Job memory (RSS) and DataLoader workers",
          {"job.main.rss_bytes", "job.workers.rss_bytes", "job.workers.count"}, {},
          {{"count", "workers"}});
  if (job.charts.empty()) job.absent = job_absent(f.scope);
  out.push_back(std::move(job));

  Section cg{"cgroup", "The job's cgroup", {}, {}};
  b.chart(cg, "cgroup_cpu", "cgroup CPU, quota and throttling (% of one CPU)",
          {"cgroup.cpu_pct", "cgroup.quota_pct", "cgroup.throttled_pct"}, {},
          {{"percent", "% of one CPU"}});
  b.chart(
      cg, "cgroup_memory", "cgroup memory against its limit",
      {"cgroup.memory_bytes", "cgroup.memory_limit_bytes", "cgroup.failcnt", "cgroup.oom_kills"},
      {}, {{"count", "events per sample"}});
  if (cg.charts.empty())
    cg.absent = f.saw_cgroup ? "the cgroup gave no CPU or memory figures"
                             : "the recording has no cgroup (dltune run --record, or record "
                               "--cgroup PATH, records the job's cgroup)";
  out.push_back(std::move(cg));
  return out;
}

}  // namespace dltune::report
