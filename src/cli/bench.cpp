// `dltune bench -a PROFILE -b PROFILE -- COMMAND...` (or --set-a/--set-b KEY=VALUE): run a job
// alternately under two host settings, A and B in each round, and say whether B really differs,
// with a confidence interval. The rounds are bench::run_bench's; this file has the options and the
// printing.
#include <unistd.h>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "bench/bench_choices.hpp"
#include "bench/files.hpp"
#include "bench/stop_signals.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class BenchCommand : public Command {
 public:
  BenchCommand(CLI::App& app, GlobalOptions& global) : Command(app, "bench"), global_(global) {
    options::add_value(*sub_, "-a,--a", c_.a.profile);
    options::add_value(*sub_, "-b,--b", c_.b.profile);
    options::add_value(*sub_, "--set-a", c_.a.sets);
    options::add_value(*sub_, "--set-b", c_.b.sets);
    options::add_list(*sub_, "--only,--only-b", c_.b.only, "ID");
    options::add_list(*sub_, "--only-a", c_.a.only, "ID");
    options::add_value(*sub_, "--run", c_.run_args);
    options::add_value(*sub_, "--run-a", c_.a.run_args);
    options::add_value(*sub_, "--run-b", c_.b.run_args);
    options::add_integer(*sub_, "-n,--runs", c_.runs, 3, 1000);
    options::add_integer(*sub_, "-w,--warmup", c_.warmup, 0, 100);
    options::add_choice(*sub_, "--order", c_.order, {"abba", "ab"});
    options::add_value(*sub_, "--rate-regex", c_.rate_regex);
    options::add_number(*sub_, "--confidence", c_.confidence, 50, 99.9, "P");
    options::add_value(*sub_, "-o,--out", out_);
    options::add_duration(*sub_, "--interval", c_.interval_ns, 10'000'000, 3'600'000'000'000);
    options::add_list(*sub_, "--data", c_.data, "PATH");
    options::add_value(*sub_, "--state-dir", state_dir_);
    options::add_value(*sub_, "--html", c_.html);
    options::add_flag(*sub_, "--force", c_.force);
    options::add_flag(*sub_, "--json", json_);
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after --.");
  }

  int execute() override {
    auto request = this->request();
    if (!request) return refuse(request.error().message());
    if (::geteuid() != 0)
      return refuse(
          "bench changes the host's settings and runs the job in a cgroup: run it with sudo (the "
          "job itself then runs as you); nothing was changed");
    auto journal = tune::Journal::open(state_dir_);
    if (!journal) {
      return failure(journal.error().message());
    }
    if (auto leftover = bench::unfinished(**journal)) return refuse(*leftover);
    auto dir = bench::make_directory(out_);
    if (!dir) return refuse(dir.error().message());
    request->dir = *dir;

    fmt::print(stderr, "{}", bench::header_text(*request));
    bench::StopSignals stop;
    bench::BenchHooks hooks;
    hooks.run_done = [](const bench::RunDone& d) {
      fmt::print(stderr, "{}\n", bench::progress_line(d));
    };
    auto result = bench::run_bench(host::Root(), **journal, *request, hooks);
    if (result.failure) say(*result.failure);
    const int stopped = bench::stop_signal();
    if (stopped != 0)
      fmt::print(stderr,
                 "dltune bench: stopped by signal {} after {} of {} runs; the host is as it was\n",
                 stopped, result.done, result.total);
    return finish(*request, result);
  }

 private:
  // The options, checked, with each side's plan made from the host as it is and its run options
  // parsed: nothing has been changed when this fails.
  Result<bench::BenchRequest> request() {
    auto command = options::job_command(sub_->remaining(), global_.after_dashdash, "bench");
    if (!command) return tl::unexpected(command.error());
    c_.command = std::move(*command);
    return bench::make_request(
        host::Root(), c_, process_environment(), collect_options(),
        [&](const std::vector<std::string>& args) -> Result<launch::RunRequest> {
          auto run = parse_run_options(args, c_.command);
          if (!run) return tl::unexpected(run.error());
          if (run->recording || !run->json_path.empty())
            return fail(
                "--run: bench records every run itself; --record and --json are not for it");
          return std::move(run->request);
        });
  }

  int finish(const bench::BenchRequest& request, bench::BenchResult& result) {
    const bool interrupted = bench::stop_signal() != 0;
    auto end = bench::conclude(request, result, c_.html, c_.force, process_environment());
    if (!end.comparison) {
      say(end.comparison.error().message());
      return interrupted ? 130 : kExitFailure;
    }
    if (!end.written) say(end.written.error().message());
    if (json_)
      fmt::print("{}\n", end.doc.dump(2));
    else
      fmt::print(
          "\n{}\nRecordings, logs and bench.json are in {}; `dltune compare {}` shows this "
          "again.\n",
          bench::render_text(*end.comparison), request.dir, request.dir);
    if (interrupted) return 130;
    if (result.failure || !end.comparison->verdict || !end.written) return kExitFailure;
    return kExitOk;
  }

  GlobalOptions& global_;
  bench::BenchChoices c_;
  std::string out_, state_dir_ = "/var/lib/dltune";
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_bench_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<BenchCommand>(app, global);
}

}  // namespace dltune::cli
