// SeriesBuilder (series_builder.hpp): Model::from(now, previous) for each sample, as in top; this
// file only picks fields, sums them per role and places them on the time axis. A rate without a
// previous sample, and an absent source, are NaN (null in the output), never 0.
#include "report/series_builder.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/core.h>

#include "monitor/model.hpp"

namespace dltune::report {

namespace {

using monitor::Model;
using monitor::Role;
using monitor::Sample;

template <class T>
double opt(const std::optional<T>& v) {
  return v ? static_cast<double>(*v) : kNull;
}

// The series being filled: one column per id, created on first use with every earlier sample
// null (a disk or GPU that appears later).
class Columns {
 public:
  explicit Columns(std::size_t samples) : samples_(samples) {}

  std::size_t handle(const std::string& id, const std::string& label, const std::string& unit) {
    if (auto it = index_.find(id); it != index_.end()) return it->second;
    series_.push_back(Series{id, label, unit, std::vector<double>(samples_, kNull), {}});
    index_.emplace(id, series_.size() - 1);
    return series_.size() - 1;
  }
  void set(std::size_t h, std::size_t k, double v) { series_[h].values[k] = v; }
  std::vector<Series> take() { return std::move(series_); }

 private:
  std::size_t samples_;
  std::vector<Series> series_;
  std::unordered_map<std::string, std::size_t> index_;
};

// The handles of a device's series, found once per device name.
struct DiskHandles {
  std::size_t read, write;
};
struct GpuHandles {
  std::size_t util, mem_used, mem_total, power, temperature, sm_clock, mem_clock, pcie_tx, pcie_rx,
      nvlink_tx, nvlink_rx;
};
// A GPU's last NVLink rates and the NVML reading they came from (its sampled_at_ns).
struct NvLinkRates {
  std::int64_t reading_ns = 0;
  std::optional<double> tx, rx;
};

// Clock event reasons in the report's four kinds (NVML reference, nvmlClocksEventReasons):
// the power cap, heat (software and hardware thermal slowdown), the board's or the system's
// slowdown (HwSlowdown, HwPowerBrakeSlowdown), and settings (application clocks, sync boost,
// display clocks). GpuIdle is not a slowdown: an idle GPU counts in none.
struct ReasonKind {
  const char* id;
  const char* label;
  std::uint64_t bits;
};
constexpr ReasonKind kReasonKinds[] = {
    {"gpu.held.power_cap", "power cap (SwPowerCap)", 0x4},
    {"gpu.held.thermal", "heat (Sw/HwThermalSlowdown)", 0x20 | 0x40},
    {"gpu.held.hw_slowdown", "board or power brake (HwSlowdown, HwPowerBrake)", 0x8 | 0x80},
    {"gpu.held.settings", "settings (application clocks, sync boost)", 0x2 | 0x10 | 0x100},
};

class Extractor {
 public:
  Extractor(std::size_t samples, bool job_launched) : job_launched_(job_launched), c_(samples) {
    cpu_user_ = c_.handle("cpu.user_pct", "user", "percent");
    cpu_system_ = c_.handle("cpu.system_pct", "system", "percent");
    cpu_iowait_ = c_.handle("cpu.iowait_pct", "iowait", "percent");
    cpu_steal_ = c_.handle("cpu.steal_pct", "steal", "percent");
    mem_used_ = c_.handle("memory.used_bytes", "used", "bytes");
    mem_cache_ = c_.handle("memory.cache_bytes", "page cache", "bytes");
    mem_available_ = c_.handle("memory.available_bytes", "available", "bytes");
    swap_used_ = c_.handle("swap.used_bytes", "swap used", "bytes");
    swap_in_ = c_.handle("swap.in_bytes_s", "swap in", "bytes/s");
    swap_out_ = c_.handle("swap.out_bytes_s", "swap out", "bytes/s");
    major_faults_ = c_.handle("memory.major_faults_s", "major faults", "1/s");
    for (const char* res : {"cpu", "memory", "io"})
      for (const char* line : {"some", "full"})
        psi_.push_back(c_.handle(fmt::format("pressure.{}.{}_pct", res, line),
                                 fmt::format("{} {}", res, line), "percent"));
    disk_read_ = c_.handle("disk.read_bytes_s", "read (all disks)", "bytes/s");
    disk_write_ = c_.handle("disk.write_bytes_s", "write (all disks)", "bytes/s");
    net_rx_ = c_.handle("net.rx_bytes_s", "received (all)", "bytes/s");
    net_tx_ = c_.handle("net.tx_bytes_s", "sent (all)", "bytes/s");
    job_main_cpu_ = c_.handle("job.main.cpu_pct", "main process", "percent");
    job_workers_cpu_ = c_.handle("job.workers.cpu_pct", "workers (sum)", "percent");
    job_children_cpu_ = c_.handle("job.children.cpu_pct", "other children (sum)", "percent");
    job_main_rss_ = c_.handle("job.main.rss_bytes", "main process RSS", "bytes");
    job_workers_rss_ = c_.handle("job.workers.rss_bytes", "workers RSS (sum)", "bytes");
    job_workers_ = c_.handle("job.workers.count", "workers", "count");
    cg_cpu_ = c_.handle("cgroup.cpu_pct", "CPU", "percent");
    cg_quota_ = c_.handle("cgroup.quota_pct", "quota", "percent");
    cg_throttled_ = c_.handle("cgroup.throttled_pct", "throttled", "percent");
    cg_memory_ = c_.handle("cgroup.memory_bytes", "memory", "bytes");
    cg_limit_ = c_.handle("cgroup.memory_limit_bytes", "limit", "bytes");
    cg_failcnt_ = c_.handle("cgroup.failcnt", "limit hits (failcnt)", "count");
    cg_oom_ = c_.handle("cgroup.oom_kills", "OOM kills", "count");
  }

  // Sample number k of the window, with the sample before it (null for the recording's first).
  void add(std::size_t k, const Sample& now, const Sample* previous) {
    const Model m = Model::from(now, previous);
    host(k, m);
    devices(k, m, previous);
    gpus(k, m, now);
    job(k, m);
    cgroup(k, m);
  }

  std::vector<Series> take() { return c_.take(); }
  std::vector<Marker>& markers() { return markers_; }
  bool saw_gpu = false, saw_job = false, saw_cgroup = false, saw_pressure = false;
  std::set<std::string> disk_names, net_names;
  std::set<unsigned> gpu_indices;

 private:
  void host(std::size_t k, const Model& m) {
    if (m.has_rates) {
      c_.set(cpu_user_, k, m.cpu.user_pct);
      c_.set(cpu_system_, k, m.cpu.system_pct);
      c_.set(cpu_iowait_, k, m.cpu.iowait_pct);
      c_.set(cpu_steal_, k, m.cpu.steal_pct);
      c_.set(swap_in_, k, m.memory.swap_in_bytes_s);
      c_.set(swap_out_, k, m.memory.swap_out_bytes_s);
      c_.set(major_faults_, k, m.memory.major_faults_s);
      if (m.memory.oom_kills > 0)
        mark(m.wall_ns, "oom_kill",
             fmt::format("{} OOM kill{} on the host (/proc/vmstat oom_kill)", m.memory.oom_kills,
                         m.memory.oom_kills == 1 ? "" : "s"));
    }
    c_.set(mem_used_, k, static_cast<double>(m.memory.used));
    c_.set(mem_cache_, k, static_cast<double>(m.memory.cache));
    c_.set(mem_available_, k, static_cast<double>(m.memory.available));
    if (m.memory.swap_total > 0) c_.set(swap_used_, k, static_cast<double>(m.memory.swap_used));
    const std::optional<monitor::PressureModel>* res[] = {&m.pressure.cpu, &m.pressure.memory,
                                                          &m.pressure.io};
    for (std::size_t r = 0; r < 3; ++r) {
      if (!*res[r]) continue;
      saw_pressure = true;
      c_.set(psi_[r * 2], k, (*res[r])->some_pct);
      c_.set(psi_[r * 2 + 1], k, opt((*res[r])->full_pct));
    }
  }

  // Disks and NICs: a device's rates are null until it has been in two samples in a row.
  void devices(std::size_t k, const Model& m, const Sample* previous) {
    for (const auto& d : m.disks) disk_names.insert(d.name);
    for (const auto& n : m.net) net_names.insert(n.name);
    auto was_there = [&](const auto& list, const std::string& name) {
      return std::any_of(list.begin(), list.end(), [&](const auto& d) { return d.name == name; });
    };
    if (!m.has_rates) return;
    double read = 0, write = 0, rx = 0, tx = 0;
    bool any_disk = false, any_net = false;
    for (const auto& d : m.disks) {
      if (!was_there(previous->system.disks, d.name)) continue;
      auto& h = disk_handles(d.name);
      c_.set(h.read, k, d.read_bytes_s);
      c_.set(h.write, k, d.write_bytes_s);
      read += d.read_bytes_s;
      write += d.write_bytes_s;
      any_disk = true;
    }
    for (const auto& n : m.net) {
      if (!was_there(previous->system.net, n.name)) continue;
      auto& h = net_handles(n.name);
      c_.set(h.read, k, n.rx_bytes_s);
      c_.set(h.write, k, n.tx_bytes_s);
      rx += n.rx_bytes_s;
      tx += n.tx_bytes_s;
      any_net = true;
    }
    if (any_disk) {
      c_.set(disk_read_, k, read);
      c_.set(disk_write_, k, write);
    }
    if (any_net) {
      c_.set(net_rx_, k, rx);
      c_.set(net_tx_, k, tx);
    }
  }

  DiskHandles& disk_handles(const std::string& name) {
    if (auto it = disks_.find(name); it != disks_.end()) return it->second;
    DiskHandles h{c_.handle("disk." + name + ".read_bytes_s", name + " read", "bytes/s"),
                  c_.handle("disk." + name + ".write_bytes_s", name + " write", "bytes/s")};
    return disks_.emplace(name, h).first->second;
  }
  DiskHandles& net_handles(const std::string& name) {
    if (auto it = nets_.find(name); it != nets_.end()) return it->second;
    DiskHandles h{c_.handle("net." + name + ".rx_bytes_s", name + " received", "bytes/s"),
                  c_.handle("net." + name + ".tx_bytes_s", name + " sent", "bytes/s")};
    return nets_.emplace(name, h).first->second;
  }

  void gpus(std::size_t k, const Model& m, const Sample& now) {
    // How many GPUs each kind of reason holds below their clocks at this sample; the columns
    // are made when a GPU first reports its reasons.
    std::size_t reporting = 0;
    double held[std::size(kReasonKinds)] = {};
    for (const auto& g : m.gpus) {
      if (!g.clock_event_reasons) continue;
      ++reporting;
      for (std::size_t r = 0; r < std::size(kReasonKinds); ++r)
        if (*g.clock_event_reasons & kReasonKinds[r].bits) held[r] += 1;
    }
    if (reporting > 0) {
      if (held_.empty())
        for (const auto& r : kReasonKinds) held_.push_back(c_.handle(r.id, r.label, "count"));
      for (std::size_t r = 0; r < std::size(kReasonKinds); ++r) c_.set(held_[r], k, held[r]);
    }
    for (std::size_t i = 0; i < m.gpus.size(); ++i) {
      const auto& g = m.gpus[i];
      saw_gpu = true;
      gpu_indices.insert(g.index);
      auto& h = gpu_handles(g.index);
      c_.set(h.util, k, opt(g.utilization_gpu_pct));
      c_.set(h.mem_used, k, opt(g.memory_used_bytes));
      c_.set(h.mem_total, k, opt(g.memory_total_bytes));
      c_.set(h.power, k, opt(g.power_watts));
      c_.set(h.temperature, k, opt(g.temperature_celsius));
      c_.set(h.sm_clock, k, opt(g.sm_clock_mhz));
      c_.set(h.mem_clock, k, opt(g.memory_clock_mhz));
      c_.set(h.pcie_tx, k, opt(g.pcie_tx_bytes_s));
      c_.set(h.pcie_rx, k, opt(g.pcie_rx_bytes_s));
      // m.gpus follows now.gpus, one for one.
      nvlink(k, g, i < now.gpus.size() ? now.gpus[i].sampled_at_ns : std::nullopt, h);
      // Xid errors: the collector's counter, whose growth is an event worth a marker.
      if (g.xid_errors) {
        auto [it, first] = xids_.emplace(g.index, *g.xid_errors);
        if (!first && *g.xid_errors > it->second)
          mark(m.wall_ns, "xid",
               fmt::format("GPU {}: {} Xid error{}{}", g.index, *g.xid_errors - it->second,
                           *g.xid_errors - it->second == 1 ? "" : "s",
                           g.last_xid ? fmt::format(" (last: Xid {})", *g.last_xid) : ""));
        it->second = *g.xid_errors;
      }
    }
  }

  GpuHandles& gpu_handles(unsigned index) {
    if (auto it = gpu_.find(index); it != gpu_.end()) return it->second;
    const std::string p = fmt::format("gpu.{}.", index), l = fmt::format("GPU {}", index);
    GpuHandles h{c_.handle(p + "util_pct", l, "percent"),
                 c_.handle(p + "memory_used_bytes", l + " used", "bytes"),
                 c_.handle(p + "memory_total_bytes", l + " total", "bytes"),
                 c_.handle(p + "power_w", l, "watts"),
                 c_.handle(p + "temperature_c", l, "celsius"),
                 c_.handle(p + "sm_clock_mhz", l + " SM", "MHz"),
                 c_.handle(p + "memory_clock_mhz", l + " memory", "MHz"),
                 c_.handle(p + "pcie_tx_bytes_s", l + " sent", "bytes/s"),
                 c_.handle(p + "pcie_rx_bytes_s", l + " received", "bytes/s"),
                 c_.handle(p + "nvlink_tx_bytes_s", l + " NVLink sent", "bytes/s"),
                 c_.handle(p + "nvlink_rx_bytes_s", l + " NVLink received", "bytes/s")};
    return gpu_.emplace(index, h).first->second;
  }

  // NVLink bytes/s from the Model (NVML's counters between two readings of the GPU). NVML is
  // read at its own rate, often slower than the samples: a sample that repeats the reading its
  // rates came from keeps them (the line would otherwise be broken between readings); any other
  // sample without rates (a counter that went down: the driver reloaded) has no point.
  void nvlink(std::size_t k, const monitor::GpuModel& g, std::optional<std::int64_t> reading_ns,
              const GpuHandles& h) {
    if (g.nvlink_tx_bytes_s || g.nvlink_rx_bytes_s) {
      if (reading_ns)
        nvlink_[g.index] = NvLinkRates{*reading_ns, g.nvlink_tx_bytes_s, g.nvlink_rx_bytes_s};
      else
        nvlink_.erase(g.index);
      c_.set(h.nvlink_tx, k, opt(g.nvlink_tx_bytes_s));
      c_.set(h.nvlink_rx, k, opt(g.nvlink_rx_bytes_s));
      return;
    }
    const auto it = nvlink_.find(g.index);
    if (it == nvlink_.end()) return;
    if (!reading_ns || *reading_ns != it->second.reading_ns) {
      nvlink_.erase(it);
      return;
    }
    c_.set(h.nvlink_tx, k, opt(it->second.tx));
    c_.set(h.nvlink_rx, k, opt(it->second.rx));
  }

  // The job's processes by role: CPU summed over those with rates (a process first seen has
  // none), RSS over all; a role with no process at that moment is null, the worker count 0.
  void job(std::size_t k, const Model& m) {
    double cpu[4] = {0, 0, 0, 0}, rss[4] = {0, 0, 0, 0};
    int with_rates[4] = {0, 0, 0, 0}, count[4] = {0, 0, 0, 0};
    std::set<pid_t> mains;
    for (const auto& p : m.processes) {
      // A rank's main process counts as the job's main work (its ranks' together).
      const auto r = static_cast<std::size_t>(p.role == Role::kRank ? Role::kMain : p.role);
      if (r >= 4 || p.role == Role::kOther) continue;
      ++count[r];
      rss[r] += static_cast<double>(p.rss_bytes);
      if (p.has_rates) {
        cpu[r] += p.cpu_pct;
        ++with_rates[r];
      }
      if (p.role == Role::kMain) {
        mains.insert(p.pid);
        if (!main_seen_.count(p.pid) && k > 0 && !recorded_command())
          mark(m.wall_ns, "job_start", fmt::format("main process {} ({}) appeared", p.pid, p.comm));
        main_seen_[p.pid] = p.comm;
      }
    }
    for (const auto& [pid, comm] : main_seen_)
      if (!mains.count(pid) && main_live_.count(pid) && !recorded_command())
        mark(m.wall_ns, "job_end", fmt::format("main process {} ({}) ended", pid, comm));
    main_live_ = mains;
    const auto main = static_cast<std::size_t>(Role::kMain);
    const auto worker = static_cast<std::size_t>(Role::kWorker);
    const auto child = static_cast<std::size_t>(Role::kChild);
    if (count[main] + count[worker] + count[child] == 0) return;
    saw_job = true;
    if (with_rates[main] > 0) c_.set(job_main_cpu_, k, cpu[main]);
    if (with_rates[worker] > 0) c_.set(job_workers_cpu_, k, cpu[worker]);
    if (with_rates[child] > 0) c_.set(job_children_cpu_, k, cpu[child]);
    if (count[main] > 0) c_.set(job_main_rss_, k, rss[main]);
    if (count[worker] > 0) c_.set(job_workers_rss_, k, rss[worker]);
    c_.set(job_workers_, k, count[worker]);
  }

  void cgroup(std::size_t k, const Model& m) {
    if (!m.cgroup) return;
    saw_cgroup = true;
    const auto& g = *m.cgroup;
    c_.set(cg_cpu_, k, opt(g.cpu_pct));
    if (g.cpu_quota_cpus) c_.set(cg_quota_, k, *g.cpu_quota_cpus * 100);
    c_.set(cg_throttled_, k, opt(g.throttled_pct));
    c_.set(cg_memory_, k, opt(g.memory_bytes));
    c_.set(cg_limit_, k, opt(g.memory_limit_bytes));
    c_.set(cg_failcnt_, k, opt(g.failcnt_delta));
    c_.set(cg_oom_, k, opt(g.oom_kills_delta));
    if (g.oom_kills_delta && *g.oom_kills_delta > 0)
      mark(m.wall_ns, "cgroup_oom_kill",
           fmt::format("{} OOM kill{} in the cgroup {} (memory.events oom_kill)",
                       *g.oom_kills_delta, *g.oom_kills_delta == 1 ? "" : "s", g.path));
  }

  bool recorded_command() const { return job_launched_; }

  void mark(std::int64_t wall_ns, std::string kind, std::string text) {
    markers_.push_back(Marker{to_ms(wall_ns), std::move(kind), std::move(text)});
  }

  bool job_launched_;
  Columns c_;
  std::vector<Marker> markers_;
  std::size_t cpu_user_, cpu_system_, cpu_iowait_, cpu_steal_, mem_used_, mem_cache_,
      mem_available_, swap_used_, swap_in_, swap_out_, major_faults_, disk_read_, disk_write_,
      net_rx_, net_tx_, job_main_cpu_, job_workers_cpu_, job_children_cpu_, job_main_rss_,
      job_workers_rss_, job_workers_, cg_cpu_, cg_quota_, cg_throttled_, cg_memory_, cg_limit_,
      cg_failcnt_, cg_oom_;
  std::vector<std::size_t> psi_;
  std::map<std::string, DiskHandles> disks_, nets_;
  std::map<unsigned, GpuHandles> gpu_;
  std::vector<std::size_t> held_;  // kReasonKinds' columns, once a GPU reports its reasons
  std::map<unsigned, std::uint64_t> xids_;
  std::map<unsigned, NvLinkRates> nvlink_;  // per GPU index, while its reading repeats
  std::map<pid_t, std::string> main_seen_;
  std::set<pid_t> main_live_;
};

}  // namespace

struct SeriesBuilder::State {
  Extractor x;
};

SeriesBuilder::SeriesBuilder(std::size_t samples, bool job_launched)
    : state_(new State{Extractor(samples, job_launched)}) {}

SeriesBuilder::~SeriesBuilder() = default;

void SeriesBuilder::add(std::size_t k, const Sample& now, const Sample* previous) {
  state_->x.add(k, now, previous);
}

std::vector<Series> SeriesBuilder::take_series() {
  return state_->x.take();
}

std::vector<Marker> SeriesBuilder::take_markers() {
  return std::move(state_->x.markers());
}

SectionFacts SeriesBuilder::facts(const std::string& scope) const {
  const Extractor& x = state_->x;
  SectionFacts f;
  f.scope = scope;
  f.saw_gpu = x.saw_gpu;
  f.saw_job = x.saw_job;
  f.saw_cgroup = x.saw_cgroup;
  f.saw_pressure = x.saw_pressure;
  f.disks = {x.disk_names.begin(), x.disk_names.end()};
  f.nets = {x.net_names.begin(), x.net_names.end()};
  f.gpus = {x.gpu_indices.begin(), x.gpu_indices.end()};
  return f;
}

}  // namespace dltune::report
