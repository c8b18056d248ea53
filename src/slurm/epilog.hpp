#pragma once
// Slurm's Epilog: what happened to a job on this node, once it has ended. Its use of what it was
// given (the watcher's record, job_watch.hpp: CPU time against its CPUs, memory peak against
// --mem, its busiest process), judged as `slurm efficiency` judges a running job; and `doctor`
// over the job's time on the node: the OOM kills in the job's own cgroup with their victims,
// and what went wrong on the node meanwhile (Xid errors, a GPU lost, hung tasks, PCIe). Written
// to a per-job file (schema dltune.slurm-job-report/1) that `slurm efficiency J` reads back for
// a finished job.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json_fwd.hpp"
#include "diagnose/doctor.hpp"
#include "host/root.hpp"
#include "slurm/efficiency.hpp"
#include "slurm/job_watch.hpp"

namespace dltune::slurm {

struct EpilogRequest {
  std::string job_id;     // SLURM_JOB_ID
  std::string user;       // SLURM_JOB_USER
  std::string node;       // SLURMD_NODENAME
  std::string exit_code;  // SLURM_JOB_EXIT_CODE2 ("0:125": the job's exit status and signal)
  std::string state_dir = "/run/dltune/slurm";
  std::string report_dir = kJobReportDir;
  // When set: node_exporter's textfile collector file (NAME.prom) rewritten with the metrics of
  // the last kTextfileJobs reports in report_dir (job_metrics).
  std::string textfile = {};
};

inline constexpr std::size_t kTextfileJobs = 50;

struct JobReport {
  std::string job_id, user, node, exit_code;
  std::int64_t start_ns = 0, end_ns = 0;  // the window read from the kernel log (0: since boot)
  std::optional<JobRecord> record;        // none: no watcher ran for the job here
  std::optional<Efficiency> efficiency;   // from the record
  // The job's OOM kills (victims in its cgroup) and the node's hardware and kernel trouble in
  // its window; the node's other processes' kills and crashes are not the job's and left out.
  std::vector<diagnose::LoggedEvent> events;
  std::vector<std::string> notes;  // what could not be read, said once each
  std::string action;              // the one thing to do, or ""
};

// The events of `doctor` that belong in job `job_id`'s report: OOM kills whose victim or limit
// was in the job's cgroup (a path component job_J), and every event of the node's hardware and
// kernel (xid, gpu_lost, aer, pcie_link, hung_task, soft_lockup, page_alloc_failure, fs_error,
// nvme_timeout); with `node_events` false (no window known) only the job's OOM kills.
[[nodiscard]] std::vector<diagnose::LoggedEvent> job_events(
    const std::vector<diagnose::LoggedEvent>& events, const std::string& job_id, bool node_events);

// The report from what was read (pure): the efficiency of the record, with the OOM kills the
// kernel logged counted when the watcher missed them, and the one action (OOM kills first).
[[nodiscard]] JobReport build_report(const EpilogRequest& request, std::optional<JobRecord> record,
                                     const diagnose::DoctorReport& log, std::int64_t end_ns);

// The Epilog: stops the job's watcher and takes its record, reads the kernel log over the job's
// time, writes REPORT_DIR/job-J.json (atomically) and removes the watcher's state file.
// Errors: a job id that is not one, a report that cannot be written.
[[nodiscard]] Result<JobReport> run_epilog(const host::Root& root, const EpilogRequest& request,
                                           const diagnose::XidTable& xids);

// REPORT_DIR/job-J.json.
[[nodiscard]] std::string report_path(const std::string& report_dir, const std::string& job_id);

// schema dltune.slurm-job-report/1, and the text.
[[nodiscard]] inventory::Json to_json(const JobReport& r);
[[nodiscard]] std::string render_text(const JobReport& r);

// The metrics of job reports (dltune.slurm-job-report/1 documents), in Prometheus's text format,
// one sample per job and family, labelled slurm_job_id and user: dltune_slurm_job_end_time_seconds,
// _cpus, _cpus_used, _memory_peak_bytes, _memory_limit_bytes, _oom_kills, _node_events. A value
// the report lacks is left out; a document that is not a report is skipped.
[[nodiscard]] std::string job_metrics(const std::vector<inventory::Json>& reports);
// Rewrites `textfile` (atomically) with job_metrics of the newest `keep` reports in
// `report_dir` (by modification time). Errors: the file cannot be written.
[[nodiscard]] Result<void> write_textfile(const std::string& report_dir,
                                          const std::string& textfile,
                                          std::size_t keep = kTextfileJobs);

// The Epilog's request as slurmd runs it, from its environment `env`: the job from
// `given.job_id` or SLURM_JOB_ID, the user (SLURM_JOB_USER), the node (SLURMD_NODENAME, else
// `host_name`) and the exit code (SLURM_JOB_EXIT_CODE2). Refused with the reason: no valid job
// id; run by hand (SLURM_SCRIPT_CONTEXT is not epilog_slurmd), a job that still runs here (its
// report would end its watch early).
[[nodiscard]] Result<EpilogRequest> epilog_request(const host::Root& root, EpilogRequest given,
                                                   const std::map<std::string, std::string>& env,
                                                   const std::string& host_name);

// A finished job's report as `slurm efficiency J` prints it, from the file the Epilog wrote:
// the text, or with `json` the document as it is. Errors: no report for the job in
// `report_dir`, a file that is not a report.
[[nodiscard]] Result<std::string> finished_job_efficiency(const std::string& report_dir,
                                                          const std::string& job_id, bool json);

}  // namespace dltune::slurm
