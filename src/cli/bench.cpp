// `dltune bench -a PROFILE -b PROFILE -- COMMAND...` (or --set-a/--set-b KEY=VALUE): run a job
// alternately under two host settings, A and B in each round, and say whether B really differs,
// with a confidence interval. The rounds are bench::run_bench's; this file has the options and the
// printing.
#include <unistd.h>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "bench/files.hpp"
#include "bench/session.hpp"
#include "bench/stop_signals.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "inventory/host_facts.hpp"
#include "launch/spawn.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class BenchCommand : public Command {
 public:
  BenchCommand(CLI::App& app, GlobalOptions& global) : Command(app, "bench"), global_(global) {
    options::add_value(*sub_, "-a,--a", a_.profile);
    options::add_value(*sub_, "-b,--b", b_.profile);
    options::add_value(*sub_, "--set-a", a_.sets);
    options::add_value(*sub_, "--set-b", b_.sets);
    options::add_list(*sub_, "--only,--only-b", b_.only, "ID");
    options::add_list(*sub_, "--only-a", a_.only, "ID");
    options::add_value(*sub_, "--run", run_args_);
    options::add_value(*sub_, "--run-a", a_.run_args);
    options::add_value(*sub_, "--run-b", b_.run_args);
    options::add_integer(*sub_, "-n,--runs", runs_, 3, 1000);
    options::add_integer(*sub_, "-w,--warmup", warmup_, 0, 100);
    options::add_choice(*sub_, "--order", order_, {"abba", "ab"});
    options::add_value(*sub_, "--rate-regex", rate_regex_);
    options::add_number(*sub_, "--confidence", confidence_, 50, 99.9, "P");
    options::add_value(*sub_, "-o,--out", out_);
    options::add_duration(*sub_, "--interval", interval_ns_, 10'000'000, 3'600'000'000'000);
    options::add_list(*sub_, "--data", data_, "PATH");
    options::add_value(*sub_, "--state-dir", state_dir_);
    options::add_value(*sub_, "--html", html_);
    options::add_flag(*sub_, "--force", force_);
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
    auto command = job_command(sub_->remaining(), global_, "bench");
    if (!command) return tl::unexpected(command.error());
    if (command->empty()) return fail("expected the job's COMMAND after --");
    if (auto found = launch::find_program(command->front(), process_environment()); !found)
      return tl::unexpected(found.error());
    bench::BenchRequest r;
    r.command = *command;
    if (!rate_regex_.empty()) {
      auto rate = launch::compile_rate_regex(rate_regex_);
      if (!rate) return tl::unexpected(rate.error());
      r.rate_regex = std::move(*rate);
    }
    r.data = data_;
    if (!html_.empty())
      if (auto t = local_file::output_target(html_, force_); !t)
        return fail("--html: " + t.error().message());
    for (const auto& arg : run_args_)
      for (auto* side : {&a_, &b_}) side->run_args.push_back(arg);
    r.a = a_;
    r.b = b_;
    host::Root root;
    const auto facts = inventory::collect(root, collect_options());
    auto planned = bench::plan_sides(root, facts, r, [&](const std::vector<std::string>& args) {
      auto run = parse_run_options(args, r.command);
      if (!run) return Result<launch::RunRequest>(tl::unexpected(run.error()));
      if (run->recording || !run->json_path.empty())
        return Result<launch::RunRequest>(
            fail("--run: bench records every run itself; --record and --json are not for it"));
      return Result<launch::RunRequest>(std::move(run->request));
    });
    if (!planned) return tl::unexpected(planned.error());
    r.runs = runs_;
    r.warmup = warmup_;
    r.abba = order_ == "abba";
    r.interval_ns = interval_ns_;
    r.confidence = confidence_ / 100;
    r.collect = collect_options();
    r.sampler = sampler_options({}, interval_ns_, true);
    return r;
  }

  int finish(const bench::BenchRequest& request, bench::BenchResult& result) {
    const bool interrupted = bench::stop_signal() != 0;
    auto end = bench::conclude(request, result, html_, force_, process_environment());
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
  bench::Side a_, b_;
  std::vector<std::string> run_args_, data_;
  int runs_ = 6, warmup_ = 1;
  double confidence_ = 95;
  std::string order_ = "abba";
  std::string rate_regex_, out_, state_dir_ = "/var/lib/dltune", html_;
  std::int64_t interval_ns_ = 1'000'000'000;
  bool force_ = false;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_bench_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<BenchCommand>(app, global);
}

}  // namespace dltune::cli
