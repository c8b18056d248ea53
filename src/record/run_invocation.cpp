#include "record/run_invocation.hpp"

#include <unistd.h>

#include <ctime>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/local_file.hpp"
#include "monitor/scope.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"

namespace dltune::record {

Result<RunInvocation> make_invocation(RunChoices choices, std::vector<std::string> command,
                                      const host::Root& root, RunContext context) {
  RunInvocation inv;
  if (!choices.record.empty()) {
    const auto target = local_file::output_target(choices.record, choices.force);
    if (!target) return fail("--record: " + target.error().message());
    if (*target == "-") return fail("--record -: a recording is a SQLite file, not a stream");
    auto sampler = monitor::sampler_options({}, choices.record_interval_ns, true,
                                            context.collect.nvml_library);
    inv.recording =
        job_recording(*target, choices.force, choices.record_interval_ns, context.collect,
                      std::move(sampler), choices.quiet, std::move(context.notice));
  }
  auto profile = settings::load_profile(choices.profile, root, settings::validate_key);
  if (!profile) return fail("profile: " + profile.error().message());
  if (!choices.rate_regex.empty()) {
    auto rate = launch::compile_rate_regex(choices.rate_regex);
    if (!rate) return tl::unexpected(rate.error());
    inv.request.rate_regex = std::move(*rate);
  }
  inv.request.options = std::move(choices.options);
  inv.request.options.command = std::move(command);
  inv.request.profile = std::move(*profile);
  inv.request.environment = std::move(context.environment);
  inv.request.keep_root = choices.as_root;
  inv.request.watch_stdout = choices.watch_stdout;
  // The cgroup's default name: the time and this process, unique on the host.
  inv.request.unique = fmt::format("{}-{}", std::time(nullptr), ::getpid());
  if (!choices.json_path.empty()) {
    const auto target = local_file::output_target(choices.json_path, choices.force);
    if (!target) return fail("--json: " + target.error().message());
    inv.json_path = *target;
    // With --json -, standard output holds the summary alone: the job's goes to stderr.
    inv.request.stdout_to_stderr = *target == "-";
  }
  inv.force = choices.force;
  inv.quiet = choices.quiet;
  return inv;
}

Result<void> write_summary(const RunInvocation& invocation, const launch::RunSummary& summary) {
  if (invocation.json_path.empty()) return {};
  const auto doc = launch::to_json(summary);
  return local_file::write(
      invocation.json_path, invocation.force,
      [&](std::ostream& out) { out << doc.dump(2) << "\n"; }, "the summary");
}

}  // namespace dltune::record
