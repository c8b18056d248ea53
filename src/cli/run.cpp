// `dltune run [OPTIONS] -- COMMAND [ARGS...]`: a training job in its own cgroup, on the CPUs
// and memory nearest its GPUs, as the invoking user, with a summary at exit.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "launch/run_job.hpp"
#include "options/options.hpp"
#include "record/recorded_run.hpp"
#include "settings/catalog.hpp"

namespace dltune::cli {

namespace {

class RunCommand : public Command {
 public:
  RunCommand(CLI::App& app, GlobalOptions& global) : Command(app, "run"), global_(global) {
    options::add_value(*sub_, "--cpu-quota", opts_.cpu_quota);
    options::add_value(*sub_, "--cpu-weight", opts_.cpu_weight);
    options::add_value(*sub_, "--memory", opts_.memory);
    options::add_value(*sub_, "--memory-swap", opts_.memory_swap);
    options::add_value(*sub_, "--cpus", opts_.cpus);
    options::add_value(*sub_, "--numa", opts_.numa);
    options::add_value(*sub_, "--gpus", opts_.gpus);
    options::add_value(*sub_, "--io-weight", opts_.io_weight);
    options::add_value(*sub_, "--name", opts_.name);
    options::add_value(*sub_, "--env", opts_.env);
    options::add_integer(*sub_, "--nproc", opts_.nproc, 1, 4096);
    options::add_integer(*sub_, "--workers", opts_.workers, 0, 1024);
    options::add_value(*sub_, "--allocator", opts_.allocator);
    options::add_value(*sub_, "-p,--profile", profile_);
    options::add_flag(*sub_, "--as-root", as_root_);
    options::add_value(*sub_, "--rate-regex", rate_regex_);
    options::add_flag(*sub_, "--watch-stdout", watch_stdout_);
    options::add_value(*sub_, "--json", json_path_);
    options::add_flag(*sub_, "-q,--quiet", quiet_);
    options::add_flag(*sub_, "--force", force_);
    options::add_value(*sub_, "--record", record_);
    options::add_duration(*sub_, "--record-interval", record_interval_ns_, 10'000'000,
                          3'600'000'000'000);
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after -- (or after the last option).");
  }

  int execute() override {
    auto invocation = this->invocation();
    if (!invocation) return refuse(invocation.error().message());
    return run_and_report(std::move(*invocation), "dltune run");
  }

  // The options as a checked request; an error names the option.
  Result<RunInvocation> invocation() {
    auto command = job_command(sub_->remaining(), global_, "run");
    if (!command) return tl::unexpected(command.error());
    RunInvocation inv;
    opts_.command = std::move(*command);
    if (!record_.empty()) {
      const auto target = local_file::output_target(record_, force_);
      if (!target) return fail("--record: " + target.error().message());
      if (*target == "-") return fail("--record -: a recording is a SQLite file, not a stream");
      inv.recording =
          job_recording(*target, force_, record_interval_ns_, true, quiet_, "dltune run");
    }
    auto profile = settings::load_profile(profile_, host::Root(), settings::validate_key);
    if (!profile) return fail("profile: " + profile.error().message());
    if (!rate_regex_.empty()) {
      auto rate = launch::compile_rate_regex(rate_regex_);
      if (!rate) return tl::unexpected(rate.error());
      inv.request.rate_regex = std::move(*rate);
    }
    inv.request.options = opts_;
    inv.request.profile = std::move(*profile);
    inv.request.environment = process_environment();
    inv.request.keep_root = as_root_;
    inv.request.watch_stdout = watch_stdout_;
    inv.request.unique = fmt::format("{}-{}", std::time(nullptr), ::getpid());
    if (!json_path_.empty()) {
      const auto target = local_file::output_target(json_path_, force_);
      if (!target) return fail("--json: " + target.error().message());
      inv.json_path = *target;
      // With --json -, standard output holds the summary alone: the job's goes to stderr.
      inv.request.stdout_to_stderr = *target == "-";
    }
    inv.force = force_;
    inv.quiet = quiet_;
    return inv;
  }

 private:
  GlobalOptions& global_;
  launch::RunOptions opts_;
  std::string profile_ = "training";
  bool as_root_ = false, watch_stdout_ = false, quiet_ = false, force_ = false;
  std::string rate_regex_, json_path_;
  std::string record_;
  std::int64_t record_interval_ns_ = 1'000'000'000;
};

}  // namespace

std::unique_ptr<Command> make_run_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<RunCommand>(app, global);
}

Result<RunInvocation> parse_run_options(const std::vector<std::string>& options,
                                        const std::vector<std::string>& command) {
  CLI::App app{"dltune"};
  GlobalOptions global;
  global.after_dashdash = command;
  RunCommand run(app, global);
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), options.begin(), options.end());
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  try {
    app.parse(args);
  } catch (const CLI::Success&) {  // --help or --version among them: no run to make
    return fail(fmt::format("run options {}: `dltune run --help` lists run's options",
                            text::join(options, " ")));
  } catch (const CLI::ParseError& e) {
    return fail(fmt::format("run options {}: {}", text::join(options, " "), e.what()));
  }
  return run.invocation();
}

int run_and_report(RunInvocation invocation, const std::string& who) {
  auto summary = record::run_with_facts(std::move(invocation.request), invocation.recording,
                                        collect_options());
  if (!summary) {
    const auto& f = summary.error();
    fmt::print(stderr, "{}: {}{}\n", who, f.error.message(),
               f.stage == launch::RunFailure::Stage::kSetUp ? "; nothing was started" : "");
    return f.stage == launch::RunFailure::Stage::kSetUp ? kExitFailure : kExitBadInput;
  }
  if (!invocation.quiet) fmt::print(stderr, "\n{}", launch::render_text(*summary));
  if (!invocation.json_path.empty()) {
    const auto doc = launch::to_json(*summary);
    if (auto w = local_file::write(
            invocation.json_path, invocation.force,
            [&](std::ostream& out) { out << doc.dump(2) << "\n"; }, "the summary");
        !w)
      fmt::print(stderr, "{}: {}\n", who, w.error().message());
  }
  return summary->result.exit_code;
}

}  // namespace dltune::cli
