#pragma once
// One Slurm job across every node it ran on, from the series `dltune serve` exported there and
// Prometheus kept (jobstats' role, `dltune slurm report JOB --prometheus URL`): per node the CPUs
// it used against the CPUs Slurm gave it (its cpuset), its memory peak against its limit, its OOM
// kills, its CPU throttling and stalls, and how busy its GPUs were; for the job, the node that
// held the others back and the one action to take. Nothing on any node is read or changed: all
// of it comes from Prometheus.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json_fwd.hpp"
#include "slurm/prometheus_api.hpp"

namespace dltune::slurm {

struct ClusterReportRequest {
  std::string job_id;
  std::string prometheus_url;
  std::string ca_file;                                     // for https; empty: the system's CAs
  std::int64_t lookback_ns = 7LL * 86400 * 1'000'000'000;  // how far back to look for the job
  std::chrono::milliseconds timeout{10000};                // each request to Prometheus
  std::optional<double> now;                               // unix seconds; empty: the clock's
};

struct NodeGpuUse {
  std::string gpu, uuid;               // the series' labels: NVML's index and the GPU's UUID
  std::optional<double> utilization;   // the job's share of the GPU, its mean (0 to 1)
  std::optional<double> memory_bytes;  // the most the job's processes held on it
};

// What Prometheus has of the job's group on one node (its series labelled slurm_job_id, the
// job's own group, not its steps').
struct NodeUse {
  std::string instance;  // the scrape target
  std::string node;      // dltune_build_info's Hostname there; the instance when unknown
  double first_seen = 0, last_seen = 0;  // unix seconds: the job's first and last sample there
  std::optional<double> cpus;            // given: its cpuset (dltune_job_cpus)
  std::optional<double> cpus_used;       // its CPU time over first_seen..last_seen
  std::optional<double> quota_cpus;
  std::optional<double> throttled_share;  // of the CFS periods it ran in, throttled
  std::optional<double> cpu_stall_share;  // cpu.pressure "some": time some of its tasks waited
  std::optional<double> memory_peak_bytes, memory_limit_bytes;
  std::optional<double> oom_kills;
  std::vector<NodeGpuUse> gpus;
  // The mean of its GPUs' utilisation; empty without any.
  [[nodiscard]] std::optional<double> gpu_utilization() const;
};

struct ClusterUse {
  std::string job_id;
  std::string source;  // the Prometheus URL, without credentials
  double start = 0, end = 0;
  bool running = false;        // its series are current at the report's time
  std::vector<NodeUse> nodes;  // sorted by node name
};

struct ClusterReport {
  ClusterUse use;
  std::optional<double> cpu_pct;      // all nodes' CPUs used over all given
  std::optional<double> memory_pct;   // the highest node's peak over its limit
  std::optional<double> gpu_pct;      // the mean of every GPU's utilisation
  std::string held_back_by;           // the node that held the others back, or ""
  std::string held_back_why;          // its evidence
  std::vector<std::string> findings;  // what is wrong, each with its reason
  std::string action;                 // the one thing to do ("" when nothing stands out)
};

// The judgement (pure). The node that held the others back: with GPUs on two or more nodes, the
// least busy if its GPUs were busy under 0.6 x the median of the other nodes' (that median above
// 20%: in a synchronous job the others' GPUs stay busy in the collective while they wait for
// it; DltuneSlurmJobStragglerNode alerts on the median over all nodes, which on two nodes needs
// a larger gap); without GPUs, one whose CPU quota throttled it, or whose
// tasks stalled for CPU, in 10% or more of the time and more than twice the others' median. Then
// OOM kills, GPUs busy under half the time, CPUs under 70% used, a memory peak under a third of
// its limit; the action for the first of these.
[[nodiscard]] ClusterReport judge_cluster(const ClusterUse& use);

// Asks Prometheus for the job's series and judges them. Bad input: the job id, the URL, or no
// such job in the window.
[[nodiscard]] tl::expected<ClusterReport, Failure> cluster_report(
    const ClusterReportRequest& request);

// schema dltune.slurm-report/1 (docs/json.md), and the text.
[[nodiscard]] Json to_json(const ClusterReport& r);
[[nodiscard]] std::string render_text(const ClusterReport& r);

}  // namespace dltune::slurm
