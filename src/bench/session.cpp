#include "bench/session.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include <fmt/core.h>

#include "bench/files.hpp"
#include "bench/stop_signals.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "launch/summary.hpp"
#include "record/recorded_run.hpp"
#include "settings/catalog.hpp"
#include "settings/data_paths.hpp"
#include "tune/render.hpp"
#include "tune/transaction.hpp"

namespace dltune::bench {

namespace {

struct Outcome {
  bool started = false;  // the run has a recording to read
  double seconds = 0;
  std::string fatal;  // the bench cannot go on (apply/rollback failed, the job cannot start)
};

// The job's output and what dltune says about the run, in the run's log.
class Log {
 public:
  explicit Log(const std::string& path)
      : fd_(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) {}
  ~Log() {
    if (fd_ >= 0) ::close(fd_);
  }
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  void say(const std::string& text) const {
    for (std::size_t at = 0; at < text.size();) {
      const auto n = ::write(fd_, text.data() + at, text.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      at += static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_;
};

class Bench {
 public:
  Bench(const host::Root& root, tune::Journal& journal, const BenchRequest& request)
      : root_(root), journal_(journal), request_(request) {}

  Outcome run_once(const Side& side, char name, Run& run, BenchResult& result);

 private:
  // Applies the side's profile, planned again from the host as it is now (the last run's
  // rollback restored it), so that the journal holds today's old values.
  Result<std::optional<std::int64_t>> apply(const Side& side, char name);
  [[nodiscard]] std::string rollback(std::int64_t tx, const Side& side);

  const host::Root& root_;
  tune::Journal& journal_;
  const BenchRequest& request_;
  int runs_started_ = 0;
};

Result<std::optional<std::int64_t>> Bench::apply(const Side& side, char name) {
  if (!side.plan || side.plan->changes().empty()) return std::optional<std::int64_t>();
  auto profile = settings::load_profile(side.profile, side.sets, root_, settings::validate_key);
  if (!profile) return fail(fmt::format("{}: {}", side.label(), profile.error().message()));
  const auto facts = inventory::collect(root_, request_.collect);
  auto plan = tune::make_plan(root_, facts, *profile, side.only, false,
                              tune::PlanOptions{request_.data, false});
  if (!plan) return fail(fmt::format("{}: {}", side.label(), plan.error().message()));
  std::string what = fmt::format("bench {}: tune apply", name);
  if (!side.profile.empty()) what += " -p " + side.profile;
  for (const auto& kv : side.sets) what += " --set " + kv;
  for (const auto& k : side.only) what += " --only " + k;
  auto applied = tune::apply_plan(root_, journal_, *plan, what);
  if (!applied)
    return fail(fmt::format("applying {} for {}: {} (it was rolled back)", side.label(),
                            std::string(1, name), applied.error().message()));
  return std::optional<std::int64_t>(applied->tx);
}

std::string Bench::rollback(std::int64_t tx, const Side& side) {
  auto r = tune::rollback_tx(root_, journal_, tx);
  if (r && r->problems.empty()) return {};
  return fmt::format("rolling back transaction {} ({}) failed: {}; run `dltune tune rollback {}`",
                     tx, side.label(), r ? text::join(r->problems, "; ") : r.error().message(), tx);
}

Outcome Bench::run_once(const Side& side, char name, Run& run, BenchResult& result) {
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto tx = apply(side, name);
  if (!tx) {
    o.fatal = tx.error().message();
    return o;
  }
  if (*tx) result.transactions.push_back(**tx);
  if (stop_signal() != 0) {  // stopped while the profile was applied: no run, just the rollback
    if (*tx) o.fatal = rollback(**tx, side);
    return o;
  }
  const std::string log_path = request_.dir + "/" + run.log;
  Log log(log_path);
  if (log.fd() < 0) {
    o.fatal = fmt::format("cannot create {}: {}", log_path, std::strerror(errno));
    if (*tx) o.fatal += "; " + rollback(**tx, side);
    return o;
  }
  launch::RunRequest request = side.run;
  request.options.command = request_.command;
  request.output_fd = log.fd();
  request.watch_stdout = true;
  if (request_.rate_regex) request.rate_regex = request_.rate_regex;
  request.unique = fmt::format("{}-{}-{}", std::time(nullptr), ::getpid(), ++runs_started_);
  record::JobRecording recording;
  recording.setup.path = request_.dir + "/" + run.recording;
  recording.setup.interval_ns = request_.interval_ns;
  recording.setup.collect = request_.collect;
  recording.setup.notice = [&log](const std::string& n) { log.say("dltune bench: " + n + "\n"); };
  recording.sampler = request_.sampler;
  recording.quiet = true;
  launch::JobHooks hooks;
  // A signal that came while the run was set up, before launch took the signals over.
  hooks.started = [](pid_t pid) {
    if (const int sig = stop_signal(); sig != 0) ::kill(pid, sig);
  };
  auto options = request_.collect;
  options.launch_only = true;
  options.gpus = request.options.gpus.has_value();
  const auto facts = inventory::collect(root_, options);
  auto summary = record::run_recorded(root_, facts, std::move(request), recording, hooks);
  o.seconds = elapsed();
  if (summary) {
    note_stop_signals(summary->result.received_signals);
    log.say("\n" + launch::render_text(*summary));
  }
  if (*tx) o.fatal = rollback(**tx, side);
  if (!summary) {
    // The job never started, and would not next time either.
    log.say("dltune bench: " + summary.error().error.message() + "\n");
    if (o.fatal.empty()) o.fatal = "the job could not be run: " + summary.error().error.message();
    return o;
  }
  o.started = true;
  auto metrics = read_run(recording.setup.path);
  if (metrics) {
    run.metrics = std::move(*metrics);
  } else {
    run.read_error = metrics.error().message();
  }
  if (stop_signal() != 0 && summary->result.exit_code != 0)
    run.excluded = "stopped by the signal that ended the bench";
  return o;
}

}  // namespace

std::optional<std::string> unfinished(tune::Journal& journal) {
  if (auto refusal = tune::unfinished_refusal(journal)) return "tune " + *refusal;
  if (auto history = journal.history())
    for (const auto& t : *history)
      if (t.state == tune::TxState::kApplied && t.command.rfind("bench ", 0) == 0)
        return fmt::format(
            "tune transaction {} ({}) is still applied: an earlier bench was stopped before it "
            "could roll back; run `dltune tune rollback {}` first; nothing was changed",
            t.id, t.command, t.id);
  return std::nullopt;
}

BenchResult run_bench(const host::Root& root, tune::Journal& journal, const BenchRequest& request,
                      const BenchHooks& hooks) {
  BenchResult result;
  Bench bench(root, journal, request);
  const int rounds = request.warmup + request.runs;
  result.total = rounds * 2;
  double spent = 0;
  for (int round = 1; round <= rounds && stop_signal() == 0 && !result.failure; ++round) {
    // A B, then B A: a drift of the host (or a job that runs faster second) then favours
    // neither side, where A B A B would hand all of it to B.
    const bool swap = request.abba && round % 2 == 0;
    for (char side : swap ? std::array<char, 2>{'B', 'A'} : std::array<char, 2>{'A', 'B'}) {
      if (stop_signal() != 0 || result.failure) break;
      const bool warmup = round <= request.warmup;
      const int number = warmup ? round : round - request.warmup;
      const std::string stem = fmt::format("{}{}-{:02d}", warmup ? "warmup-" : "", side, number);
      Run run;
      run.side = side;
      run.pair = warmup ? 0 : number;
      run.warmup = warmup;
      run.recording = stem + ".db";
      run.log = stem + ".log";
      const auto outcome = bench.run_once(side == 'A' ? request.a : request.b, side, run, result);
      ++result.done;
      spent += outcome.seconds;
      if (!outcome.fatal.empty()) result.failure = outcome.fatal;
      if (hooks.run_done)
        hooks.run_done(
            RunDone{run, outcome.started, outcome.seconds, result.done, result.total, spent});
      if (outcome.started) result.runs.push_back(std::move(run));
    }
  }
  return result;
}

std::string progress_line(const RunDone& d) {
  std::string what;
  const auto& run = d.run;
  if (!d.started) {
    what = "did not run";
  } else if (!run.metrics) {
    what = "unreadable: " + run.read_error;
  } else {
    const auto& m = *run.metrics;
    if (const auto& rate = m[Metric::kRate])
      what = format_metric(Metric::kRate, *rate, m.rate_unit) + ", ";
    what += fmt::format("{:.1f} s", d.seconds);
    if (m.exit_status.value_or(0) != 0)
      what += fmt::format(", exit status {} (left out)", *m.exit_status);
  }
  const double left = d.done > 0 ? d.spent / d.done * (d.total - d.done) : 0;
  return fmt::format("  [{}/{}] {} {}{}: {}{}", d.done, d.total, run.side,
                     run.warmup ? "warm-up " : "round ", run.warmup ? "" : std::to_string(run.pair),
                     what,
                     d.done < d.total && stop_signal() == 0
                         ? fmt::format("; about {} left", text::human_duration(left))
                         : "");
}

std::string header_text(const BenchRequest& r) {
  std::string out = fmt::format(
      "dltune bench: {} round{} of A and B ({}){}; recordings in {}\n", r.runs,
      r.runs == 1 ? "" : "s", r.abba ? "A B, then B A" : "A then B",
      r.warmup > 0 ? fmt::format(", after {} warm-up round{}", r.warmup, r.warmup == 1 ? "" : "s")
                   : "",
      r.dir);
  out += fmt::format("  A: {}\n  B: {}\n", r.a.label(), r.b.label());
  for (const auto& d : differences(r.a, r.b))
    out += fmt::format("  {}: {} under A{}, {} under B{} ({})\n", d.key, d.a,
                       d.from_a.empty() ? "" : " (from " + d.from_a + ")", d.b,
                       d.from_b.empty() ? "" : " (from " + d.from_b + ")", d.target);
  for (const auto& o : run_differences(r.a, r.b)) out += fmt::format("  run option {}\n", o);
  return out;
}

nlohmann::json to_json(const BenchRequest& r, const BenchResult& result, const Comparison& c) {
  using nlohmann::json;
  const auto side_json = [](const Side& s) {
    json j{{"label", s.label()}, {"only", s.only}, {"set", s.sets}, {"run", s.run_args}};
    j["profile"] = s.profile.empty() ? json(nullptr) : json(s.profile);
    return j;
  };
  json diffs = json::array();
  for (const auto& d : differences(r.a, r.b))
    diffs.push_back(json{{"key", d.key},
                         {"target", d.target},
                         {"a", d.a},
                         {"b", d.b},
                         {"a_from", d.from_a.empty() ? json(nullptr) : json(d.from_a)},
                         {"b_from", d.from_b.empty() ? json(nullptr) : json(d.from_b)}});
  return json{{"schema", "dltune.bench/1"},
              {"command", r.command},
              {"a", side_json(r.a)},
              {"b", side_json(r.b)},
              {"differences", diffs},
              {"run_differences", run_differences(r.a, r.b)},
              {"runs_per_side", r.runs},
              {"warmup", r.warmup},
              {"interrupted", stop_signal() != 0},
              {"transactions", result.transactions},
              {"used_pairs", std::min(c.used_a, c.used_b)},
              {"comparison", bench::to_json(c)}};
}

Result<void> plan_sides(
    const host::Root& root, const inventory::HostFacts& facts, BenchRequest& request,
    const std::function<Result<launch::RunRequest>(const std::vector<std::string>&)>& parse_run) {
  if (!request.a.only.empty() && !request.a.changes_settings())
    return fail("--only-a needs a profile for A (-a PROFILE or --set-a KEY=VALUE)");
  if (!request.b.only.empty() && !request.b.changes_settings())
    return fail("--only needs a profile for B (-b PROFILE or --set-b KEY=VALUE)");
  if (auto ok = settings::check_data_option(root, request.data); !ok) return ok;
  for (auto* side : {&request.a, &request.b}) {
    auto run = parse_run(side->run_args);
    if (!run) return tl::unexpected(run.error());
    side->run = std::move(*run);
    if (auto planned = plan_side(root, facts, side == &request.a ? 'A' : 'B', *side, request.data);
        !planned)
      return planned;
  }
  if (auto same = same_sides(request.a, request.b)) return fail(*same);
  return {};
}

Conclusion conclude(const BenchRequest& request, BenchResult& result, const std::string& html,
                    bool force, const std::map<std::string, std::string>& environment) {
  CompareOptions options;
  options.label_a = request.a.label();
  options.label_b = request.b.label();
  options.confidence = request.confidence;
  options.paired_by_round = true;
  Conclusion c{compare_runs(std::move(result.runs), options), {}, {}};
  if (!c.comparison) return c;
  c.doc = to_json(request, result, *c.comparison);
  c.written = write_bench_files(request.dir, c.doc, html, force, environment);
  return c;
}

}  // namespace dltune::bench
