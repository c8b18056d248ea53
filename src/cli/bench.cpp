// `dltune bench -a PROFILE -b PROFILE -- COMMAND...`: run a job alternately under two host
// settings, A and B in each round, and say whether B really differs, with a confidence
// interval. Each side's profile is applied as a tune transaction before its run and
// rolled back after it, also on Ctrl-C; each run goes through `dltune run --record`.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "audit/rules.hpp"
#include "bench/comparison.hpp"
#include "bench/sides.hpp"
#include "cli/bench_files.hpp"
#include "cli/bench_launch.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/text.hpp"
#include "core/time_format.hpp"
#include "settings/catalog.hpp"
#include "tune/journal.hpp"
#include "tune/transaction.hpp"

namespace dltune::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class BenchCommand : public Command {
 public:
  BenchCommand(CLI::App& app, GlobalOptions& global) : global_(global) {
    sub_ = app.add_subcommand("bench", "Run a job under two settings, A B A B ..., and compare");
    sub_->description(
        "Runs COMMAND (directly, never through a shell) alternately under A and B, round after\n"
        "round (A B, then B A: drift on the host hits both sides alike), after --warmup rounds\n"
        "that are not counted. Before each run its side's profile is applied as a tune "
        "transaction\n"
        "(journaled, verified) and after it rolled back, so that the host is as it was between\n"
        "runs and after the bench, also when the job fails or on Ctrl-C (SIGINT, SIGTERM, SIGHUP:\n"
        "the running job is stopped, the host restored, and the rounds done so far compared).\n"
        "Each run goes through `dltune run --record` (its own cgroup; --run passes options to\n"
        "run, --run-a/--run-b to one side only, so run options such as --cpu-quota or\n"
        "--allocator can be compared too), its recording and output kept in --out.\n\n"
        "From each run: the rate the job printed (tqdm's it/s or s/it, or --rate-regex), or its\n"
        "wall time when it printed none; GPU utilisation, swap-ins, major faults, the job's PSI,\n"
        "OOM kills and peak memory. Per metric: the medians of A and B and the ratio B/A with a\n"
        "confidence interval from the pairs run back to back (Wilcoxon signed-rank with the\n"
        "Hodges-Lehmann estimate when there are enough pairs for the asked confidence, at 95%\n"
        "from 6; a Student-t interval on the log ratios below that). The verdict says what the\n"
        "interval supports: \"B is faster by 7% (3%-11%)\", or \"no measurable effect\" with the\n"
        "runs it would take to resolve one. A run that failed is listed and left out with its\n"
        "partner, never averaged in; with fewer than 3 usable rounds there is no verdict.\n"
        "`dltune compare DIR` compares the recordings in --out again.\n\n"
        "Exit status: 0 a verdict (any), 1 no verdict (too few usable runs) or a failure (a\n"
        "profile could not be applied or rolled back), 2 bad input (nothing was changed),\n"
        "130 stopped by a signal (after restoring the host and comparing what was run).");
    sub_->add_option("-a,--a", a_.profile,
                     "Profile of side A: built-in name or file (default: the host as it is)")
        ->type_name("PROFILE");
    sub_->add_option("-b,--b", b_.profile,
                     "Profile of side B: built-in name or file (default: the host as it is)")
        ->type_name("PROFILE");
    sub_->add_option("--only,--only-b", b_.only,
                     "Only this setting of B's profile (repeatable): one parameter at a time")
        ->type_name("ID");
    sub_->add_option("--only-a", a_.only, "Only this setting of A's profile (repeatable)")
        ->type_name("ID");
    sub_->add_option("--run", run_args_, "An option for `dltune run`, both sides (repeatable)")
        ->type_name("ARG");
    sub_->add_option("--run-a", a_.run_args, "An option for `dltune run`, side A only")
        ->type_name("ARG");
    sub_->add_option("--run-b", b_.run_args, "An option for `dltune run`, side B only")
        ->type_name("ARG");
    sub_->add_option("-n,--runs", runs_, "Counted runs per side (default 6; at least 3)")
        ->type_name("N");
    sub_->add_option("-w,--warmup", warmup_, "Rounds run first and not counted (default 1)")
        ->type_name("K");
    sub_->add_option("--order", order_,
                     "abba (default): A B in odd rounds, B A in even ones, so that drift and the "
                     "order of a round favour neither side; ab: A B every round")
        ->type_name("abba|ab")
        ->check(CLI::IsMember({"abba", "ab"}));
    sub_->add_option("--rate-regex", rate_regex_,
                     "A regular expression whose first group is the job's rate per second")
        ->type_name("RE");
    sub_->add_option("--confidence", confidence_, "Confidence of the intervals, % (default 95)")
        ->type_name("P");
    sub_->add_option("-o,--out", out_,
                     "Directory for the recordings, logs and bench.json (default "
                     "./dltune-bench-DATE-TIME; must not exist or be empty)")
        ->type_name("DIR");
    sub_->add_option("--interval", interval_, "Sampling interval of the recordings (default 1s)")
        ->type_name("DURATION");
    sub_->add_option("--data", data_,
                     "A path that holds training data, for mount and read-ahead settings "
                     "(as tune's --data)")
        ->type_name("PATH");
    sub_->add_option("--state-dir", state_dir_, "Where tune's journal is")->type_name("DIR");
    sub_->add_option("--html", html_, "Also write the comparison as an HTML page")
        ->type_name("FILE");
    sub_->add_flag("--json", json_, "Print JSON (dltune.bench/1) on stdout");
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after --.");
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    auto command = job_command(sub_->remaining(), global_, "bench");
    if (!command) return refuse(command.error().message());
    command_ = std::move(*command);
    if (command_.empty()) return refuse("expected the job's COMMAND after --");
    if (runs_ < 3)
      return refuse(
          fmt::format("--runs {}: a confidence interval needs at least 3 runs per side (6 for a "
                      "distribution-free one at 95%); nothing was run",
                      runs_));
    if (warmup_ < 0) return refuse(fmt::format("--warmup {}: expected 0 or more", warmup_));
    if (!(confidence_ > 50 && confidence_ < 100))
      return refuse(
          fmt::format("--confidence {}: expected a percentage between 50 and 100", confidence_));
    if (!rate_regex_.empty()) {
      try {
        if (std::regex(rate_regex_).mark_count() < 1)
          return refuse("--rate-regex " + rate_regex_ +
                        ": expected a group, e.g. '([0-9.]+) img/s'");
      } catch (const std::regex_error& e) {
        return refuse(fmt::format("--rate-regex {}: {}", rate_regex_, e.what()));
      }
    }
    for (auto* side : {&a_, &b_})
      for (const auto& r : run_args_) side->run_args.push_back(r);
    if (!a_.only.empty() && a_.profile.empty())
      return refuse("--only-a needs a profile for A (-a PROFILE)");
    if (!b_.only.empty() && b_.profile.empty())
      return refuse("--only needs a profile for B (-b PROFILE)");
    for (const auto& d : data_)
      if (d.empty() || d.front() != '/')
        return refuse(fmt::format("--data {}: expected an absolute path", d));

    host::Root root;
    const auto facts = inventory::collect(root, collect_options());
    for (auto* side : {&a_, &b_}) {
      if (side->profile.empty()) continue;
      const char* name = side == &a_ ? "-a" : "-b";
      auto profile = settings::load_profile(side->profile, root, settings::validate_key);
      if (!profile)
        return refuse(fmt::format("{} {}: {}", name, side->profile, profile.error().message()));
      auto plan = tune::make_plan(root, facts, *profile, side->only, false,
                                  tune::PlanOptions{data_, false});
      if (!plan)
        return refuse(fmt::format("{} {}: {}", name, side->profile, plan.error().message()));
      side->plan = std::move(*plan);
    }
    const auto setting_diffs = bench::differences(a_, b_);
    const auto run_diffs = bench::run_differences(a_, b_);
    if (setting_diffs.empty() && run_diffs.empty())
      return refuse(fmt::format(
          "A ({}) and B ({}) would run the job under the same settings on this host: there is "
          "nothing to compare; nothing was run",
          a_.label(), b_.label()));
    if (::geteuid() != 0)
      return refuse(
          "bench changes the host's settings and runs the job in a cgroup: run it with sudo (the "
          "job itself then runs as you); nothing was changed");

    auto journal = tune::Journal::open(state_dir_);
    if (!journal) {
      fmt::print(stderr, "dltune bench: {}\n", journal.error().message());
      return kExitFailure;
    }
    if (auto leftover = unfinished(**journal)) return refuse(*leftover);
    auto dir = make_out_dir();
    if (!dir) return refuse(dir.error().message());

    print_header(setting_diffs, run_diffs);
    std::vector<bench::Run> runs;
    const int rounds = warmup_ + runs_;
    const int total = rounds * 2;
    double spent = 0;
    int done = 0;
    bool failed = false;
    bench_launch::StopSignals stop;
    for (int round = 1; round <= rounds && bench_launch::stop_signal() == 0 && !failed; ++round) {
      // A B, then B A: a drift of the host (or a job that runs faster second) then favours
      // neither side, where A B A B would hand all of it to B.
      const bool swap = order_ == "abba" && round % 2 == 0;
      for (char side : swap ? std::array<char, 2>{'B', 'A'} : std::array<char, 2>{'A', 'B'}) {
        if (bench_launch::stop_signal() != 0 || failed) break;
        const bool warmup = round <= warmup_;
        const int number = warmup ? round : round - warmup_;
        const std::string stem = fmt::format("{}{}-{:02d}", warmup ? "warmup-" : "", side, number);
        bench::Run run;
        run.side = side;
        run.pair = warmup ? 0 : number;
        run.warmup = warmup;
        run.recording = stem + ".db";
        run.log = stem + ".log";
        const auto outcome = run_once(root, **journal, side == 'A' ? a_ : b_, side, *dir, run);
        ++done;
        spent += outcome.seconds;
        if (!outcome.fatal.empty()) {
          fmt::print(stderr, "dltune bench: {}\n", outcome.fatal);
          failed = true;
        }
        progress(run, done, total, spent, outcome);
        if (outcome.started) runs.push_back(std::move(run));
      }
    }
    if (bench_launch::stop_signal() != 0)
      fmt::print(stderr,
                 "dltune bench: stopped by signal {} after {} of {} runs; the host is as it was\n",
                 bench_launch::stop_signal(), done, total);
    return finish(*dir, std::move(runs), failed);
  }

 private:
  struct Outcome {
    bool started = false;  // the run has a recording to read
    double seconds = 0;
    std::string fatal;  // the bench cannot go on (apply/rollback failed, run refused)
  };

  Outcome run_once(const host::Root& root, tune::Journal& journal, const bench::Side& side,
                   char name, const std::string& dir, bench::Run& run);
  int finish(const std::string& dir, std::vector<bench::Run> runs, bool failed);
  void progress(const bench::Run& run, int done, int total, double spent, const Outcome& o) const;
  void print_header(const std::vector<bench::SettingDifference>& settings,
                    const std::vector<std::string>& run_options) const;
  std::optional<std::string> unfinished(tune::Journal& journal) const;
  Result<std::string> make_out_dir();
  json bench_json(const bench::Comparison& c, const json& comparison) const;

  static int refuse(const std::string& why) {
    fmt::print(stderr, "dltune bench: {}\n", why);
    return kExitBadInput;
  }

  GlobalOptions& global_;
  CLI::App* sub_ = nullptr;
  bench::Side a_, b_;
  std::vector<std::string> run_args_, data_, command_;
  int runs_ = 6, warmup_ = 1;
  double confidence_ = 95;
  std::string order_ = "abba";
  std::string rate_regex_, out_, interval_ = "1s", state_dir_ = "/var/lib/dltune", html_;
  bool json_ = false;
  std::vector<std::int64_t> transactions_;
};

// A transaction of an earlier bench still applied (it was killed before rolling back), or one
// a crash left pending: the host is not at its baseline, so A would not be A.
std::optional<std::string> BenchCommand::unfinished(tune::Journal& journal) const {
  if (auto pending = journal.pending(); pending && !pending->empty())
    return fmt::format(
        "tune transaction {} was left unfinished (a crash?): run `dltune tune rollback {}` "
        "first; nothing was changed",
        pending->front().id, pending->front().id);
  if (auto history = journal.history())
    for (const auto& t : *history)
      if (t.state == tune::TxState::kApplied && t.command.rfind("bench ", 0) == 0)
        return fmt::format(
            "tune transaction {} ({}) is still applied: an earlier bench was stopped before it "
            "could roll back; run `dltune tune rollback {}` first; nothing was changed",
            t.id, t.command, t.id);
  return std::nullopt;
}

Result<std::string> BenchCommand::make_out_dir() {
  std::string dir = out_;
  if (dir.empty()) {
    dir =
        text::format_time(std::time(nullptr), "dltune-bench-%Y%m%d-%H%M%S", text::TimeZone::kLocal);
  }
  out_ = dir;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec) || !fs::is_empty(dir, ec))
      return fail("exists and is not an empty directory; choose another --out", "--out " + dir);
  } else if (::mkdir(dir.c_str(), 0755) != 0) {
    return fail("cannot create the directory", "--out " + dir, errno);
  }
  return dir;
}

void BenchCommand::print_header(const std::vector<bench::SettingDifference>& settings,
                                const std::vector<std::string>& run_options) const {
  fmt::print(stderr, "dltune bench: {} round{} of A and B ({}){}; recordings in {}\n", runs_,
             runs_ == 1 ? "" : "s", order_ == "abba" ? "A B, then B A" : "A then B",
             warmup_ > 0
                 ? fmt::format(", after {} warm-up round{}", warmup_, warmup_ == 1 ? "" : "s")
                 : "",
             out_);
  fmt::print(stderr, "  A: {}\n  B: {}\n", a_.label(), b_.label());
  for (const auto& d : settings)
    fmt::print(stderr, "  {}: {} under A, {} under B ({})\n", d.key, d.a, d.b, d.target);
  for (const auto& r : run_options) fmt::print(stderr, "  run option {}\n", r);
}

BenchCommand::Outcome BenchCommand::run_once(const host::Root& root, tune::Journal& journal,
                                             const bench::Side& side, char name,
                                             const std::string& dir, bench::Run& run) {
  Outcome o;
  std::optional<std::int64_t> tx;
  if (side.plan && !side.plan->changes().empty()) {
    // Planned again from the host as it is now (the last run's rollback restored it), so that
    // the journal holds today's old values.
    auto profile = settings::load_profile(side.profile, root, settings::validate_key);
    if (!profile) {
      o.fatal = fmt::format("{}: {}", side.profile, profile.error().message());
      return o;
    }
    const auto facts = inventory::collect(root, collect_options());
    auto plan =
        tune::make_plan(root, facts, *profile, side.only, false, tune::PlanOptions{data_, false});
    if (!plan) {
      o.fatal = fmt::format("{}: {}", side.profile, plan.error().message());
      return o;
    }
    std::string what = fmt::format("bench {}: tune apply -p {}", name, side.profile);
    for (const auto& k : side.only) what += " --only " + k;
    auto applied = tune::apply_plan(root, journal, *plan, what);
    if (!applied) {
      o.fatal = fmt::format("applying {} for {}: {} (it was rolled back)", side.profile,
                            std::string(1, name), applied.error().message());
      return o;
    }
    tx = applied->tx;
    transactions_.push_back(applied->tx);
  }
  if (bench_launch::stop_signal() !=
      0) {  // stopped while the profile was applied: no run, just the rollback
    if (tx) {
      auto r = tune::rollback_tx(root, journal, *tx);
      if (!r || !r->problems.empty())
        o.fatal = fmt::format("rolling back transaction {} failed; run `dltune tune rollback {}`",
                              *tx, *tx);
    }
    return o;
  }
  std::vector<std::string> argv{"/proc/self/exe",    "run",      "--quiet",
                                "--watch-stdout",    "--record", dir + "/" + run.recording,
                                "--record-interval", interval_};
  if (!rate_regex_.empty()) {
    argv.emplace_back("--rate-regex");
    argv.push_back(rate_regex_);
  }
  for (const auto& r : side.run_args) argv.push_back(r);
  argv.emplace_back("--");
  for (const auto& c : command_) argv.push_back(c);
  const auto launched = bench_launch::launch_run(argv, dir + "/" + run.log);
  o.seconds = launched.seconds;
  if (tx) {
    auto r = tune::rollback_tx(root, journal, *tx);
    if (!r || !r->problems.empty()) {
      o.fatal = fmt::format(
          "rolling back transaction {} ({}) failed: {}; run `dltune tune rollback {}`", *tx,
          side.label(), r ? text::join(r->problems, "; ") : r.error().message(), *tx);
    }
  }
  if (!launched.error.empty()) {
    o.fatal = launched.error;
    return o;
  }
  struct stat st {};
  if (::stat((dir + "/" + run.recording).c_str(), &st) != 0) {
    // run refused or could not set up: the job never started, and would not next time either.
    if (o.fatal.empty())
      o.fatal = fmt::format("dltune run did not start the job (exit status {}): {}",
                            launched.exit_code, last_line(dir + "/" + run.log));
    return o;
  }
  o.started = true;
  auto metrics = bench::read_run(dir + "/" + run.recording);
  if (metrics) {
    run.metrics = std::move(*metrics);
  } else {
    run.read_error = metrics.error().message();
  }
  if (bench_launch::stop_signal() != 0 && launched.exit_code != 0)
    run.excluded = "stopped by the signal that ended the bench";
  return o;
}

void BenchCommand::progress(const bench::Run& run, int done, int total, double spent,
                            const Outcome& o) const {
  std::string what;
  if (!o.started) {
    what = "did not run";
  } else if (!run.metrics) {
    what = "unreadable: " + run.read_error;
  } else {
    const auto& m = *run.metrics;
    if (const auto& rate = m[bench::Metric::kRate])
      what = bench::format_metric(bench::Metric::kRate, *rate, m.rate_unit) + ", ";
    what += fmt::format("{:.1f} s", o.seconds);
    if (m.exit_status != 0) what += fmt::format(", exit status {} (left out)", m.exit_status);
  }
  const double left = done > 0 ? spent / done * (total - done) : 0;
  fmt::print(stderr, "  [{}/{}] {} {}{}: {}{}\n", done, total, run.side,
             run.warmup ? "warm-up " : "round ", run.warmup ? "" : std::to_string(run.pair), what,
             done < total && bench_launch::stop_signal() == 0
                 ? fmt::format("; about {} left", text::human_duration(left))
                 : "");
}

json BenchCommand::bench_json(const bench::Comparison& c, const json& comparison) const {
  const auto side_json = [](const bench::Side& s) {
    json j{{"label", s.label()}, {"only", s.only}, {"run", s.run_args}};
    j["profile"] = s.profile.empty() ? json(nullptr) : json(s.profile);
    return j;
  };
  json diffs = json::array();
  for (const auto& d : bench::differences(a_, b_))
    diffs.push_back(json{{"key", d.key}, {"target", d.target}, {"a", d.a}, {"b", d.b}});
  return json{{"schema", "dltune.bench/1"},
              {"command", command_},
              {"a", side_json(a_)},
              {"b", side_json(b_)},
              {"differences", diffs},
              {"run_differences", bench::run_differences(a_, b_)},
              {"runs_per_side", runs_},
              {"warmup", warmup_},
              {"interrupted", bench_launch::stop_signal() != 0},
              {"transactions", transactions_},
              {"used_pairs", std::min(c.used_a, c.used_b)},
              {"comparison", comparison}};
}

int BenchCommand::finish(const std::string& dir, std::vector<bench::Run> runs, bool failed) {
  const bool interrupted = bench_launch::stop_signal() != 0;
  bench::CompareOptions options;
  options.label_a = a_.label();
  options.label_b = b_.label();
  options.confidence = confidence_ / 100;
  options.paired_by_round = true;
  auto c = bench::compare_runs(std::move(runs), options);
  if (!c) {
    fmt::print(stderr, "dltune bench: {}\n", c.error().message());
    return interrupted ? 130 : kExitFailure;
  }
  const auto comparison = bench::to_json(*c);
  const auto doc = bench_json(*c, comparison);
  if (auto w = write_bench_files(dir, doc, html_); !w)
    fmt::print(stderr, "dltune bench: {}\n", w.error().message());
  if (json_)
    fmt::print("{}\n", doc.dump(2));
  else
    fmt::print(
        "\n{}\nRecordings, logs and bench.json are in {}; `dltune compare {}` shows this "
        "again.\n",
        bench::render_text(*c), dir, dir);
  if (interrupted) return 130;
  if (failed || !c->verdict) return kExitFailure;
  return kExitOk;
}

}  // namespace

std::unique_ptr<Command> make_bench_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<BenchCommand>(app, global);
}

}  // namespace dltune::cli
