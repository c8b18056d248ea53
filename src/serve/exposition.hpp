#pragma once
// The metrics of `dltune serve`: one pure function from a snapshot of the host to the
// metric families, written through a sink. The text sink writes the Prometheus text exposition
// format 0.0.4; the JSON sink the same families for `serve --once --json`.
//
// The names, types, units and labels are the contract that dashboards and alerts are written
// against: docs/metrics.md documents each family, in the order they are written here (the fixed
// order of the exposition). Values are the Sample's raw counters converted to base units
// (seconds, bytes, joules, hertz, ratios 0..1); Prometheus computes rates itself (rate()), so no
// rate is exported and the Model is not needed. A value that the kernel or NVML did not give is
// left out, never written as 0; NaN and infinities are never written.
//
// Text format: https://prometheus.io/docs/instrumenting/exposition_formats/ (HELP and TYPE once
// per family, the family's samples together, label values with \\, \" and \n escaped).
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inventory/json.hpp"
#include "monitor/sample.hpp"

namespace dltune::serve {

enum class MetricType { kCounter, kGauge };
[[nodiscard]] const char* type_name(MetricType t);  // "counter", "gauge"

struct Label {
  std::string_view name, value;
};
using Labels = std::initializer_list<Label>;

// Where families go. A family's header is given first, then its samples; a family without
// samples is not written at all (an optional value that is absent leaves no trace).
class MetricSink {
 public:
  virtual ~MetricSink() = default;
  virtual void family(std::string_view name, MetricType type, std::string_view help) = 0;
  virtual void sample(Labels labels, std::uint64_t value) = 0;
  // Skipped when not finite.
  virtual void sample(Labels labels, double value) = 0;
};

// The text format into a string that is reused: after the first render of a snapshot of the
// same shape, rendering allocates nothing.
class TextSink final : public MetricSink {
 public:
  explicit TextSink(std::string& out) : out_(out) {}
  void family(std::string_view name, MetricType type, std::string_view help) override;
  void sample(Labels labels, std::uint64_t value) override;
  void sample(Labels labels, double value) override;

 private:
  void line_start(Labels labels);
  std::string& out_;
  std::string_view name_, help_;
  MetricType type_ = MetricType::kGauge;
  bool header_written_ = true;
};

// {"name", "type", "help", "samples": [{"labels": {...}, "value": N}]} per family.
class JsonSink final : public MetricSink {
 public:
  void family(std::string_view name, MetricType type, std::string_view help) override;
  void sample(Labels labels, std::uint64_t value) override;
  void sample(Labels labels, double value) override;
  // {"schema": "dltune.serve/1", "families": [...]} (docs/json.md).
  [[nodiscard]] inventory::Json take();

 private:
  void add(Labels labels, inventory::Json value);
  inventory::Json families_ = inventory::Json::array();
  inventory::Json current_;
};

// Appends `value` to `out` with \\, \" and \n escaped (the text format's label value escapes).
void append_escaped_label(std::string& out, std::string_view value);
// A double as the shortest text that reads back as the same double ("0.87", "1e+20", "5").
void append_double(std::string& out, double value);

// One check finding that is not ok.
// A check id's findings of one severity (several GPUs, file systems or variables can share an
// id and severity: one series, their count).
struct CheckFinding {
  std::string id, severity, area;
  std::uint64_t count = 1;
};
struct CheckState {
  bool ran = false;  // a run has finished, well or not (no check family is written before)
  bool ok = false;   // the last run completed; false: it failed (counts are then 0)
  std::vector<CheckFinding> findings;
  std::array<std::uint64_t, 4> counts{};  // by severity: ok, info, warn, critical
  // The findings that could not be judged (NVML did not answer, ...), by id, area and stakes
  // (the severity the profile gives the id when it is not met): `severity` holds the stakes.
  std::vector<CheckFinding> unknown;
  std::uint64_t unknown_count = 0;
  std::optional<std::int64_t> finished_wall_ns;  // of the last completed run
  double duration_s = 0;
};
inline constexpr std::array<const char*, 4> kSeverities = {"ok", "info", "warn", "critical"};

struct ExporterStats {
  std::uint64_t samples = 0;
  double sample_duration_s = 0;
};

// A Slurm job's group, or one of its steps' groups: its job id, its user (the name, or the uid
// where this host has no name for it) and the step ("0", "batch", "extern"; empty for the job's
// own group), the labels its series carry besides cgroup.
struct SlurmJobLabels {
  std::string job_id, user, step;
};
using SlurmJobs = std::map<std::string, SlurmJobLabels>;  // by the group's path
// Kubernetes pods' groups: the pod's UID by the group's path (label pod_uid).
using PodUids = std::map<std::string, std::string>;

// Which of the host's families are written: all, or (serve --no-host-metrics, on a host whose
// node_exporter already exports its CPUs, memory, disks, network and pressure) only those that
// node_exporter's default collectors do not: the /proc/vmstat counters its vmstat collector
// leaves out by default (--collector.vmstat.fields).
enum class HostFamilies { kAll, kBeyondNodeExporter };

struct Snapshot {
  std::string_view version;                 // dltune's
  std::string_view hostname;                // the host's: the Hostname label (dcgm-exporter's)
  const monitor::Sample* sample = nullptr;  // null before the first sample
  std::span<const monitor::Cgroup> jobs;    // the job groups' counters
  const SlurmJobs* slurm = nullptr;         // which of them are Slurm's jobs
  const PodUids* pods = nullptr;            // which of them are Kubernetes pods
  bool gpus = true;                         // NVML is read (not --no-gpus)
  HostFamilies host = HostFamilies::kAll;   // --no-host-metrics: kBeyondNodeExporter
  const CheckState* check = nullptr;        // null: the check is off (--no-check)
  ExporterStats stats;
  // Beside jobs, each group's member pids, sorted (JobGroups::members); read only when some GPU
  // lists a compute process, else empty.
  std::span<const std::vector<pid_t>> job_members;
};

// Every family of the snapshot, in the documented order. The exporter's own scrape counter is
// not part of it (it changes with every scrape): see render_scrapes.
void render(const Snapshot& s, MetricSink& sink);
void render_scrapes(std::uint64_t scrapes, MetricSink& sink);

// NVML's clock event reason bits (nvml.h, nvmlClocksEventReason*; the same bits as the older
// nvmlClocksThrottleReason* names) and the label each has in dltune_gpu_throttled.
struct ThrottleReason {
  std::uint64_t bit;
  const char* label;
};
inline constexpr ThrottleReason kThrottleReasons[] = {
    {0x1, "gpu_idle"},             // nvmlClocksEventReasonGpuIdle
    {0x2, "applications_clocks"},  // nvmlClocksEventReasonApplicationsClocksSetting
    {0x4, "sw_power_cap"},         // nvmlClocksEventReasonSwPowerCap
    {0x8, "hw_slowdown"},          // nvmlClocksThrottleReasonHwSlowdown
    {0x10, "sync_boost"},          // nvmlClocksEventReasonSyncBoost
    {0x20, "sw_thermal"},          // nvmlClocksEventReasonSwThermalSlowdown
    {0x40, "hw_thermal"},          // nvmlClocksThrottleReasonHwThermalSlowdown
    {0x80, "hw_power_brake"},      // nvmlClocksThrottleReasonHwPowerBrakeSlowdown
    {0x100, "display_clocks"},     // nvmlClocksEventReasonDisplayClockSetting
};

// Calls emit(resource, kind, seconds) for each stall line there is: resource "cpu", "memory" or
// "io", kind "some" or "full", the line's total= in seconds. The host's and the jobs' pressure
// families both write through it.
template <class Emit>
void for_each_stall(const monitor::Pressures& p, Emit&& emit) {
  const std::pair<const char*, const std::optional<monitor::Pressure>*> resources[] = {
      {"cpu", &p.cpu}, {"memory", &p.memory}, {"io", &p.io}};
  for (const auto& [resource, r] : resources) {
    if (!*r) continue;
    emit(resource, "some", static_cast<double>((*r)->some.total_us) / 1e6);
    if ((*r)->full) emit(resource, "full", static_cast<double>((*r)->full->total_us) / 1e6);
  }
}

// The parts of render (exposition_host.cpp, exposition_gpu.cpp, exposition_jobs.cpp).
void render_host(const monitor::Sample& s, MetricSink& sink,
                 HostFamilies which = HostFamilies::kAll);
void render_gpus(const monitor::Sample* s, bool gpus, std::string_view hostname, MetricSink& sink);
void render_jobs(std::span<const monitor::Cgroup> jobs, const SlurmJobs* slurm, MetricSink& sink,
                 const PodUids* pods = nullptr);
// The jobs' GPU families (exposition_jobs.cpp): the GPU memory of each group's processes by GPU,
// and how many GPUs they use, from the GPUs' process lists and the groups' member pids.
void render_job_gpus(const Snapshot& s, MetricSink& sink);

}  // namespace dltune::serve
