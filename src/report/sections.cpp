// The report's sections and charts, in page order (docs/report.md lists them).
#include <fmt/format.h>

#include "report/sections.hpp"

namespace dltune::report {

namespace {

// Adds a chart with those of `ids` that the data has; none when it has none of them.
class Builder {
 public:
  explicit Builder(const ReportData& data) : data_(data) {}

  void chart(Section& section, std::string id, std::string title,
             const std::vector<std::string>& ids) {
    Chart c{std::move(id), std::move(title), {}};
    for (const auto& s : ids)
      if (data_.find(s) != nullptr) c.series.push_back(s);
    if (!c.series.empty()) section.charts.push_back(std::move(c));
  }

 private:
  const ReportData& data_;
};

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
          {"cpu.user_pct", "cpu.system_pct", "cpu.iowait_pct", "cpu.steal_pct"});
  b.chart(host, "memory", "Memory",
          {"memory.used_bytes", "memory.cache_bytes", "memory.available_bytes", "swap.used_bytes"});
  b.chart(host, "paging", "Swap traffic and major page faults",
          {"swap.in_bytes_s", "swap.out_bytes_s", "memory.major_faults_s"});
  if (host.charts.empty()) host.absent = "no sample with a previous one to compute rates from";
  out.push_back(std::move(host));

  Section psi{"pressure", "Pressure stall (PSI, % of time)", {}, {}};
  b.chart(psi, "pressure", "Pressure stall: share of time some (or all) tasks waited",
          {"pressure.cpu.some_pct", "pressure.cpu.full_pct", "pressure.memory.some_pct",
           "pressure.memory.full_pct", "pressure.io.some_pct", "pressure.io.full_pct"});
  if (psi.charts.empty())
    psi.absent = f.saw_pressure ? "only one sample: pressure is a rate between two samples"
                                : "the host had no /proc/pressure (Linux 4.20+ with PSI enabled; "
                                  "some kernels need psi=1 on the command line)";
  out.push_back(std::move(psi));

  Section io{"io", "Disks and network", {}, {}};
  std::vector<std::string> disk{"disk.read_bytes_s", "disk.write_bytes_s"};
  if (f.disks.size() > 1)
    for (const auto& d : f.disks) {
      disk.push_back("disk." + d + ".read_bytes_s");
      disk.push_back("disk." + d + ".write_bytes_s");
    }
  b.chart(io, "disk", "Disk throughput", disk);
  std::vector<std::string> net{"net.rx_bytes_s", "net.tx_bytes_s"};
  if (f.nets.size() > 1)
    for (const auto& n : f.nets) {
      net.push_back("net." + n + ".rx_bytes_s");
      net.push_back("net." + n + ".tx_bytes_s");
    }
  b.chart(io, "net", "Network throughput (all interfaces but lo)", net);
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
  b.chart(gpu, "gpu_util", "GPU utilisation (% of time a kernel ran, NVML)", per_gpu("util_pct"));
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
          {"gpu.held.power_cap", "gpu.held.thermal", "gpu.held.hw_slowdown", "gpu.held.settings"});
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
          {"job.main.cpu_pct", "job.workers.cpu_pct", "job.children.cpu_pct"});
  b.chart(job, "job_memory", "Job memory (RSS) and DataLoader workers",
          {"job.main.rss_bytes", "job.workers.rss_bytes", "job.workers.count"});
  if (job.charts.empty()) job.absent = job_absent(f.scope);
  out.push_back(std::move(job));

  Section cg{"cgroup", "The job's cgroup", {}, {}};
  b.chart(cg, "cgroup_cpu", "cgroup CPU, quota and throttling (% of one CPU)",
          {"cgroup.cpu_pct", "cgroup.quota_pct", "cgroup.throttled_pct"});
  b.chart(
      cg, "cgroup_memory", "cgroup memory against its limit",
      {"cgroup.memory_bytes", "cgroup.memory_limit_bytes", "cgroup.failcnt", "cgroup.oom_kills"});
  if (cg.charts.empty())
    cg.absent = f.saw_cgroup ? "the cgroup gave no CPU or memory figures"
                             : "the recording has no cgroup (dltune run --record, or record "
                               "--cgroup PATH, records the job's cgroup)";
  out.push_back(std::move(cg));
  return out;
}

}  // namespace dltune::report
