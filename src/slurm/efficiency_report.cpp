#include "slurm/efficiency_report.hpp"

#include <optional>

#include <fmt/format.h>

#include "core/json.hpp"
#include "slurm/epilog.hpp"
#include "slurm/job_watch.hpp"
#include "slurm/recorded_verdict.hpp"

namespace dltune::slurm {

tl::expected<std::string, Failure> efficiency_report(const host::Root& root,
                                                     const EfficiencyReportRequest& request) {
  const auto& job = request.measure.job_id;
  std::optional<RecordedVerdict> verdict;
  if (!request.recording.empty()) {
    if (auto ok = check_job_id(job); !ok) return refused(ok.error());
    auto v = recorded_verdict(request.recording, job);
    if (!v) return refused(v.error());
    verdict = std::move(*v);
  }
  auto e = measure_efficiency(root, request.measure);
  if (e) {
    if (!request.json) return render_text(*e) + (verdict ? render_text(*verdict) : "");
    auto doc = to_json(*e);
    if (verdict) doc["bottleneck"] = to_json(*verdict);
    return doc.dump(2) + "\n";
  }
  // A job that ended here has the Epilog's report instead.
  if (!e.error().bad_input || !check_job_id(job)) return tl::unexpected(e.error());
  auto done = finished_job_efficiency(request.report_dir, job, request.json);
  if (!done)
    return refused(
        fmt::format("{}; and no report of it in {} (the Epilog writes one when a job ends)",
                    e.error().error.message(), request.report_dir));
  if (!verdict) return *done;
  if (!request.json) return *done + render_text(*verdict);
  auto doc = inventory::Json::parse(*done);
  doc["bottleneck"] = to_json(*verdict);
  return doc.dump(2) + "\n";
}

}  // namespace dltune::slurm
