#pragma once
// `bench` as a library call: a job run alternately under two sides, A and B in each round (B A
// in every other round with abba order), each side's profile applied as a tune transaction before
// its run and rolled back after it, each run recorded; what came of each run, for comparing.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/comparison.hpp"
#include "bench/sides.hpp"
#include "host/root.hpp"
#include "inventory/host_facts_fwd.hpp"
#include "launch/run_job.hpp"
#include "monitor/sampler.hpp"
#include "tune/journal.hpp"

namespace dltune::bench {

struct BenchRequest {
  Side a, b;  // with their plans made and their run requests (Side::run) parsed
  std::vector<std::string> command;
  int runs = 6, warmup = 1;
  bool abba = true;  // A B, then B A; false: A B every round
  std::optional<launch::RatePattern> rate_regex;
  std::int64_t interval_ns = 1'000'000'000;
  std::vector<std::string> data;  // tune's --data
  double confidence = 0.95;
  std::string dir;  // exists and is empty: recordings, logs, bench.json
  inventory::CollectOptions collect;
  monitor::SamplerOptions sampler;  // how each run is recorded (its scope is the job's)
};

// How far the bench is, after each run.
struct RunDone {
  const Run& run;
  bool started = false;  // the run has a recording to read
  double seconds = 0;    // the run's, with applying and rolling back its side
  int done = 0, total = 0;
  double spent = 0;  // seconds, every run so far
};

struct BenchHooks {
  std::function<void(const RunDone&)> run_done;
};

struct BenchResult {
  std::vector<Run> runs;  // those that started, in the order they ran
  std::vector<std::int64_t> transactions;
  int done = 0, total = 0;
  std::optional<std::string> failure;  // the bench could not go on (apply/rollback failed)
};

// Why the host is not at its baseline (a bench stopped before rolling back, a transaction a crash
// left pending), with what to do; nullopt when it is.
[[nodiscard]] std::optional<std::string> unfinished(tune::Journal& journal);

// Plans both sides from the host as it is (`a` and `b` with their profiles, --only and run
// options; `data` tune's --data): each side's run options parsed by `parse_run` (run's own
// grammar), its tune plan made. Refuses --only without a profile, a relative --data, run options
// that record or write JSON (bench records every run itself) and sides that do not differ;
// nothing is changed either way.
[[nodiscard]] Result<void> plan_sides(
    const host::Root& root, const inventory::HostFacts& facts, BenchRequest& request,
    const std::function<Result<launch::RunRequest>(const std::vector<std::string>&)>& parse_run);

// Runs the rounds, stopping early on a signal (stop_signals.hpp: a StopSignals must be alive) or
// a failure; the host is as it was afterwards unless `failure` says otherwise.
[[nodiscard]] BenchResult run_bench(const host::Root& root, tune::Journal& journal,
                                    const BenchRequest& request, const BenchHooks& hooks = {});

// "[3/12] B round 2: 12.3 it/s, 40.1 s; about 5 min left"
[[nodiscard]] std::string progress_line(const RunDone& d);
// What will be compared, for the start: sides, differing settings and run options.
[[nodiscard]] std::string header_text(const BenchRequest& request);
// bench.json (schema dltune.bench/1), around the comparison's own JSON.
[[nodiscard]] nlohmann::json to_json(const BenchRequest& request, const BenchResult& result,
                                     const Comparison& c);

// The end of a bench: the runs compared (an error when they cannot be), bench.json and, when
// `html` is given, the comparison's page written.
struct Conclusion {
  Result<Comparison> comparison;
  nlohmann::json doc;
  Result<void> written;
};
[[nodiscard]] Conclusion conclude(const BenchRequest& request, BenchResult& result,
                                  const std::string& html, bool force,
                                  const std::map<std::string, std::string>& environment);

}  // namespace dltune::bench
