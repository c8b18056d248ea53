// `dltune run [OPTIONS] -- COMMAND [ARGS...]`: a training job in its own cgroup, on the CPUs
// and memory nearest its GPUs, as the invoking user, with a summary at exit.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "audit/rules.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/record_session.hpp"
#include "cli/sampling_options.hpp"
#include "launch/run_job.hpp"
#include "settings/catalog.hpp"

namespace dltune::cli {

namespace {

class RunCommand : public Command {
 public:
  RunCommand(CLI::App& app, GlobalOptions& global) : global_(global) {
    sub_ = app.add_subcommand("run", "Run a training job in its own cgroup, near its GPUs");
    sub_->description(
        "Starts COMMAND (executed directly, never through a shell) in a cgroup of its own (v2, or\n"
        "one group per v1 hierarchy; on a v1 host also a cgroup2 group for the job's own\n"
        "pressure), with the limits asked for, read back from the kernel before the job starts.\n"
        "The child joins the cgroup before exec, so no instruction of the job runs outside it.\n"
        "With --gpus and --numa auto the job is bound to the CPUs and memory of the GPUs' NUMA\n"
        "node(s). OMP_NUM_THREADS and MKL_NUM_THREADS are set to the job's CPUs per rank\n"
        "(--nproc) minus its DataLoader workers (--workers) when the job is bound or those are\n"
        "given, unless already set; the allocator is tuned (see --allocator) unless you set\n"
        "LD_PRELOAD or MALLOC_*: dltune never overrides what you set, and says what it set.\n"
        "Under sudo the job runs as the invoking user (SUDO_UID), with the profile's nofile and\n"
        "memlock limits where the kernel allows. SIGINT, SIGTERM, SIGHUP and SIGQUIT go to the\n"
        "job. At the end: a summary (wall and CPU time, peak memory, OOM kills, throttling, the\n"
        "job's it/s when it printed tqdm progress or --rate-regex matched), and the cgroup is\n"
        "removed.\n\n"
        "Exit status: the job's (128+N when a signal N killed it); 2 when dltune refused before\n"
        "starting anything (bad option, command not found, not root); 1 when setting up failed\n"
        "(the kernel refused a limit: nothing was left behind).");
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
    sub_->add_option("--nproc", nproc_, "Ranks that share the CPUs (thread counts per rank)")
        ->type_name("N")
        ->check(CLI::PositiveNumber);
    sub_->add_option("--workers", workers_,
                     "DataLoader workers per rank: intra-op threads get the CPUs they leave")
        ->type_name("N")
        ->check(CLI::NonNegativeNumber);
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
    sub_->add_option("--record", record_,
                     "Record the job (its processes, cgroup, the host, GPUs) into this SQLite "
                     "file, as `dltune record` does (refused if it exists)")
        ->type_name("FILE");
    sub_->add_option("--record-interval", record_flags_.interval,
                     "Sampling interval of --record, 10ms to 1h (default 1s)")
        ->type_name("DURATION");
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after -- (or after the last option).");
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    auto command = job_command(sub_->remaining(), global_, "run");
    if (!command) return refuse(command.error().message());
    opts_.command = std::move(*command);
    std::optional<std::int64_t> record_interval;
    if (!record_.empty()) {
      auto i = record_flags_.interval_ns();
      if (!i) return refuse(i.error().message() + " (--record-interval)");
      record_interval = *i;
      if (::access(record_.c_str(), F_OK) == 0)
        return refuse("--record " + record_ + ": exists; remove it or choose another file");
    }
    if (nproc_ > 0) opts_.nproc = nproc_;
    if (workers_ >= 0) opts_.workers = workers_;
    host::Root root;
    auto profile = settings::load_profile(profile_, root, settings::validate_key);
    if (!profile) return refuse("profile: " + profile.error().message());
    std::optional<std::regex> rate;
    if (!rate_regex_.empty()) {
      try {
        rate = std::regex(rate_regex_, std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return refuse(fmt::format("--rate-regex {}: {}", rate_regex_, e.what()));
      }
      if (rate->mark_count() < 1)
        return refuse("--rate-regex " + rate_regex_ + ": expected a group, e.g. '([0-9.]+) img/s'");
    }
    auto options = collect_options();
    options.launch_only = true;
    options.gpus = opts_.gpus.has_value();
    const auto facts = inventory::collect(root, options);
    launch::RunRequest request;
    request.options = opts_;
    request.profile = &*profile;
    request.environment = own_environment();
    request.keep_root = as_root_;
    request.watch_stdout = watch_stdout_;
    request.rate_regex = rate;
    request.unique = fmt::format("{}-{}", std::time(nullptr), ::getpid());
    // A recording of the job (--record): made once the run is planned, sampling from the job's
    // start until it ends; removed when the job could not run.
    std::unique_ptr<RecordSession> recording;
    std::optional<Error> record_error;
    launch::JobHooks hooks;
    if (record_interval) {
      hooks.planned = [&](const launch::JobPlan& plan) -> Result<void> {
        RecordSetup setup;
        setup.path = record_;
        setup.interval_ns = *record_interval;
        setup.command = opts_.command;
        setup.scope = "run " + plan.name;
        auto s = RecordSession::create(setup, "dltune run");
        if (!s) return fail("--record: " + s.error().message(), "");
        recording = std::move(*s);
        return {};
      };
      hooks.started = [&](pid_t pid) {
        monitor::Scope scope;
        scope.kind = monitor::Scope::Kind::kTree;
        scope.pid = pid;
        if (auto ok =
                recording->start(root, record_flags_.sampler_options(scope, *record_interval));
            !ok)
          record_error = ok.error();
      };
      hooks.ended = [&] {
        recording->stop();
        if (record_error)
          fmt::print(stderr, "dltune run: --record could not sample the job: {}\n",
                     record_error->message());
      };
    }
    auto summary = launch::run_job(root, facts, std::move(request), hooks);
    if (!summary) {
      const auto& f = summary.error();
      if (f.stage == launch::RunFailure::Stage::kRefused) return refuse(f.error.message());
      // Nothing is left behind when the job could not run: not even the empty recording.
      if (recording) {
        if (f.stage == launch::RunFailure::Stage::kStart)
          recording->finish(root, std::nullopt, true);
        recording.reset();
        ::unlink(record_.c_str());
      }
      if (f.stage == launch::RunFailure::Stage::kSetUp) return fail_setup(f.error.message());
      fmt::print(stderr, "dltune run: {}\n", f.error.message());
      return kExitBadInput;
    }
    if (recording) {  // with the summary, for compare and report (the job's it/s, OOM kills)
      recording->add_document("summary", launch::to_json(*summary));
      recording->finish(root, summary->result.exit_code, quiet_);
    }
    if (!quiet_) fmt::print(stderr, "\n{}", launch::render_text(*summary));
    if (!json_path_.empty()) {
      const auto text = launch::to_json(*summary).dump(2) + "\n";
      if (json_path_ == "-") {
        fmt::print("{}", text);
      } else {
        std::ofstream out(json_path_);
        out << text;
        if (!out) fmt::print(stderr, "dltune run: cannot write the summary to {}\n", json_path_);
      }
    }
    return summary->result.exit_code;
  }

 private:
  static int refuse(const std::string& why) {
    fmt::print(stderr, "dltune run: {}\n", why);
    return kExitBadInput;
  }
  static int fail_setup(const std::string& why) {
    fmt::print(stderr, "dltune run: {}; nothing was started\n", why);
    return kExitFailure;
  }

  GlobalOptions& global_;
  CLI::App* sub_ = nullptr;
  launch::RunOptions opts_;
  int nproc_ = 0;
  int workers_ = -1;
  std::string profile_ = "training";
  bool as_root_ = false, watch_stdout_ = false, quiet_ = false;
  std::string rate_regex_, json_path_;
  std::string record_;
  SamplingFlags record_flags_;
};

}  // namespace

std::unique_ptr<Command> make_run_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<RunCommand>(app, global);
}

int run_in_process(const std::vector<std::string>& options,
                   const std::vector<std::string>& command) {
  CLI::App app{"dltune"};
  GlobalOptions global;
  global.after_dashdash = command;
  auto run = make_run_command(app, global);
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), options.begin(), options.end());
  if (const auto rc = parse_command_line(app, std::move(args))) return *rc;
  return run->execute();
}

}  // namespace dltune::cli
