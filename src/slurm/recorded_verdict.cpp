#include "slurm/recorded_verdict.hpp"

#include <fmt/core.h>

#include "core/json.hpp"
#include "diagnose/bottleneck.hpp"
#include "diagnose/profile_job.hpp"
#include "store/recording.hpp"

namespace dltune::slurm {

namespace {

// The Slurm job a recording is of, from its documents; empty when it names none.
Result<std::string> recorded_job(const std::string& path) {
  auto recording = store::Recording::open(path);
  if (!recording) return tl::unexpected(recording.error());
  auto slurm = (*recording)->document("slurm");  // dltune record --slurm-job J
  if (!slurm) return tl::unexpected(slurm.error());
  if (*slurm && (*slurm)->contains("job_id") && (**slurm)["job_id"].is_string())
    return (**slurm)["job_id"].get<std::string>();
  auto summary = (*recording)->document("summary");  // dltune run --record, inside the job
  if (!summary) return tl::unexpected(summary.error());
  if (*summary && (*summary)->contains("slurm") && (**summary)["slurm"].is_object() &&
      (**summary)["slurm"].value("job_id", nlohmann::json()).is_string())
    return (**summary)["slurm"]["job_id"].get<std::string>();
  return std::string();
}

}  // namespace

Result<RecordedVerdict> recorded_verdict(const std::string& path, const std::string& job_id) {
  auto of = recorded_job(path);
  if (!of) return fail("--recording " + path + ": " + of.error().message());
  if (*of != job_id)
    return fail(fmt::format(
        "--recording {}: not a recording of Slurm job {} ({}; record one with "
        "`dltune record --slurm-job {} -o FILE`, or `dltune run --record FILE` "
        "inside the job)",
        path, job_id,
        of->empty() ? std::string("it names no Slurm job") : "it is job " + *of + "'s", job_id));
  auto job = diagnose::read_recorded_job(path);
  if (!job) return fail("--recording " + path + ": " + job.error().error.message());
  const auto& rules = diagnose::builtin_rules();
  if (!rules) return tl::unexpected(rules.error());
  diagnose::JudgeRequest request;
  // As `dltune profile RECORDING` judges it: a job dltune started has its start-up left out.
  request.skip_ns = job->launched ? diagnose::kLaunchedSkipNs : 0;
  request.source = "recording " + path;
  auto report = diagnose::judge_job(*rules, job->windows, request);
  if (!report || report->parts.empty())
    return fail("--recording " + path + ": " +
                (report ? std::string("no verdict") : report.error().error.message()));
  const auto& lead = report->parts.front().profile;
  RecordedVerdict v;
  v.path = path;
  v.rule = lead.verdict.rule;
  v.verdict = lead.verdict.verdict;
  v.title = lead.verdict.title;
  v.summary = lead.verdict.summary;
  v.confidence = lead.verdict.confidence;
  v.action = lead.verdict.action;
  v.healthy = lead.verdict.healthy;
  v.samples = lead.samples;
  return v;
}

inventory::Json to_json(const RecordedVerdict& v) {
  return inventory::Json{
      {"recording", v.path}, {"rule", v.rule},       {"verdict", v.verdict},
      {"title", v.title},    {"summary", v.summary}, {"confidence", v.confidence},
      {"action", v.action},  {"healthy", v.healthy}, {"samples", v.samples}};
}

std::string render_text(const RecordedVerdict& v) {
  std::string out = fmt::format("Bottleneck ({} samples of recording {}): {} ({} confidence)\n",
                                v.samples, v.path, v.verdict, v.confidence);
  if (!v.summary.empty()) out += "  " + v.summary + "\n";
  if (!v.action.empty() && !v.healthy) out += "  Try first: " + v.action + "\n";
  return out;
}

}  // namespace dltune::slurm
