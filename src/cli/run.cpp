// `dltune run [OPTIONS] -- COMMAND [ARGS...]`: a training job in its own cgroup, on the CPUs
// and memory nearest its GPUs, as the invoking user, with a summary at exit.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "launch/run_job.hpp"
#include "options/options.hpp"
#include "settings/catalog.hpp"
#include "store/recorded_run.hpp"

namespace dltune::cli {

namespace {

class RunCommand : public Command {
 public:
  RunCommand(CLI::App& app, GlobalOptions& global) : global_(global) {
    sub_ = options::add_command(app, "run");
    sub_->add_option("--cpu-quota", opts_.cpu_quota,
                     "CPU time the job may use: a share of the machine (80%) or CPUs (2.5)")
        ->type_name("Q");
    sub_->add_option("--cpu-weight", opts_.cpu_weight,
                     "The job's CPU weight against other groups, 1-10000 (default 100); a high "
                     "weight protects it from co-located load")
        ->type_name("W");
    sub_->add_option("--memory", opts_.memory, "Memory limit: 64G, 512M, or 90% of RAM")
        ->type_name("SIZE");
    sub_->add_option("--memory-swap", opts_.memory_swap,
                     "Swap the job may use on top of --memory (0: none)")
        ->type_name("SIZE");
    sub_->add_option("--cpus", opts_.cpus, "CPUs the job may run on, e.g. 0-7,16-23")
        ->type_name("LIST");
    sub_->add_option("--numa", opts_.numa,
                     "auto (the NUMA node(s) of --gpus) or a node number: CPUs and memory")
        ->type_name("auto|N");
    sub_->add_option("--gpus", opts_.gpus, "GPU indices (nvidia-smi's): sets CUDA_VISIBLE_DEVICES")
        ->type_name("LIST");
    sub_->add_option("--io-weight", opts_.io_weight, "The job's I/O weight, 1-10000")
        ->type_name("W");
    sub_->add_option("--name", opts_.name, "The cgroup's name (default: unique run-...)")
        ->type_name("NAME");
    sub_->add_option("--env", opts_.env, "Set NAME=VALUE for the job (repeatable)")
        ->type_name("NAME=VALUE");
    options::add_integer(*sub_, "--nproc", opts_.nproc, 1, 4096,
                         "Ranks that share the CPUs (thread counts per rank)");
    options::add_integer(*sub_, "--workers", opts_.workers, 0, 1024,
                         "DataLoader workers per rank: intra-op threads get the CPUs they leave");
    sub_->add_option("--allocator", opts_.allocator,
                     "glibc-tuned (default: measured x3.6 on a CPU DataLoader job), tcmalloc, "
                     "jemalloc (with decay off), or default (the C library's own)")
        ->type_name("A");
    sub_->add_option("-p,--profile", profile_,
                     "Profile whose limits.nofile/limits.memlock the job gets (default: training)")
        ->type_name("PROFILE");
    sub_->add_flag("--as-root", as_root_, "Keep root for the job even under sudo");
    sub_->add_option("--rate-regex", rate_regex_,
                     "A regular expression whose first group is the job's rate per second, "
                     "matched on its output lines")
        ->type_name("RE");
    sub_->add_flag(
        "--watch-stdout", watch_stdout_,
        "Also read the job's stdout for progress (it is then a pipe, not your terminal)");
    sub_->add_option("--json", json_path_, "Also write the summary as JSON to FILE (\"-\": stdout)")
        ->type_name("FILE");
    sub_->add_flag("-q,--quiet", quiet_, "No summary on stderr");
    sub_->add_flag("--force", force_, "Replace an existing --json or --record FILE");
    sub_->add_option("--record", record_,
                     "Record the job (its processes, cgroup, the host, GPUs) into this SQLite "
                     "file, as `dltune record` does (refused if it exists)")
        ->type_name("FILE");
    options::add_duration(*sub_, "--record-interval", record_interval_ns_, 10'000'000,
                          3'600'000'000'000, "Sampling interval of --record (default 1s)");
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after -- (or after the last option).");
  }

  bool selected() const override { return sub_->parsed(); }

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
      auto rate = compile_rate_regex(rate_regex_);
      if (!rate) return tl::unexpected(rate.error());
      inv.request.rate_regex = std::move(*rate);
    }
    inv.request.options = opts_;
    inv.request.profile = std::move(*profile);
    inv.request.environment = own_environment();
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
  static int refuse(const std::string& why) {
    fmt::print(stderr, "dltune run: {}\n", why);
    return kExitBadInput;
  }

  GlobalOptions& global_;
  CLI::App* sub_ = nullptr;
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

Result<std::regex> compile_rate_regex(const std::string& pattern) {
  try {
    std::regex rate(pattern, std::regex::ECMAScript);
    if (rate.mark_count() < 1)
      return fail("--rate-regex " + pattern + ": expected a group, e.g. '([0-9.]+) img/s'");
    return rate;
  } catch (const std::regex_error& e) {
    return fail(fmt::format("--rate-regex {}: {}", pattern, e.what()));
  }
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
  host::Root root;
  auto options = collect_options();
  options.launch_only = true;
  options.gpus = invocation.request.options.gpus.has_value();
  const auto facts = inventory::collect(root, options);
  auto summary =
      invocation.recording
          ? store::run_recorded(root, facts, std::move(invocation.request), *invocation.recording)
          : launch::run_job(root, facts, std::move(invocation.request));
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
