// The bottleneck rules (knowledge/bottlenecks.toml) and their evaluation, on windows of signals
// made here: each class's signature from docs/measurements.md gives its verdict, values just
// past a threshold do not, and confidence follows how long the evidence held.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/json.hpp"
#include "diagnose/bottleneck.hpp"
#include "diagnose/profile_text.hpp"
#include "support/build_paths.hpp"

namespace bottleneck_test {

using namespace dltune::diagnose;

namespace {

const Rules& builtin() {
  const auto& r = builtin_rules();
  EXPECT_TRUE(r) << r.error().message();
  return *r;
}

// A window of `n` samples 250 ms apart, each with `values` (signal name → value).
Window window(const std::map<std::string, double>& values, std::size_t n = 40) {
  Window w;
  for (std::size_t i = 0; i < n; ++i) {
    SignalValues v{};
    for (const auto& [name, x] : values) {
      const auto s = signal_by_name(name);
      EXPECT_TRUE(s) << name;
      if (s) v[static_cast<std::size_t>(*s)] = x;
    }
    w.wall_ns.push_back(static_cast<std::int64_t>(i) * 250'000'000);
    w.samples.push_back(v);
  }
  return w;
}

void set_from(Window& w, std::size_t from, const std::string& name, double x) {
  const auto s = static_cast<std::size_t>(*signal_by_name(name));
  for (std::size_t i = from; i < w.samples.size(); ++i) w.samples[i][s] = x;
}

// What a quiet 2-CPU host with one job looks like, to which each case adds its signature.
std::map<std::string, double> host(std::map<std::string, double> extra) {
  std::map<std::string, double> v = {
      {"host.cpus", 2},          {"host.idle_cpus", 0.9},    {"host.other_cpu", 3},
      {"host.iowait", 0},        {"host.swap_in", 0},        {"host.oom_kills", 0},
      {"job.gpus", 0},           {"workers.count", 2},       {"workers.cpu", 2},
      {"workers.running", 0},    {"workers.blocked", 0},     {"workers.run_queue", 0},
      {"main.on_cpu", 97},       {"main.cpu", 98},           {"main.run_queue", 1},
      {"main.system_share", 3},  {"main.minor_faults", 900}, {"main.running", 1},
      {"main.sleeping", 0},      {"main.blocked", 0},        {"main.involuntary", 5},
      {"job.psi_cpu", 1},        {"job.psi_io", 0},          {"job.psi_memory", 0},
      {"cgroup.throttled", 0},   {"cgroup.oom_kills", 0},    {"cgroup.refault_file", 0},
      {"cgroup.memory_use", 20}, {"cgroup.failcnt", 0},      {"disk.util", 1},
      {"job.read_bytes", 0},     {"job.cpu", 101},
  };
  for (const auto& [k, x] : extra) v[k] = x;
  return v;
}

Profile judge(const Window& w) {
  return analyze(builtin(), w, 0);
}

}  // namespace

TEST(BottleneckRules, TheBuiltInFileParsesWithEveryClassOfTheIssue) {
  const auto& rules = builtin();
  std::set<std::string> verdicts;
  for (const auto& r : rules.rules) {
    verdicts.insert(r.verdict);
    EXPECT_FALSE(r.actions.empty()) << r.id;
    EXPECT_FALSE(r.disambiguate.empty()) << r.id << ": a near miss must say what settles it";
  }
  for (const char* v : {"input-bound", "storage-bound", "cpu-contention", "memory-pressure",
                        "allocation-churn", "compute-bound", "page-cache-pushed-out"})
    EXPECT_TRUE(verdicts.count(v)) << v;
  // The healthy case is tried last: a fault must never hide behind it.
  EXPECT_TRUE(rules.rules.back().healthy);
}

TEST(BottleneckRules, EverySignalHasAUniqueNameAndIsDocumented) {
  std::ifstream in(std::string(DLTUNE_SOURCE_DIR) + "/docs/profile.md");
  std::stringstream doc;
  doc << in.rdbuf();
  std::set<std::string_view> names;
  for (const auto& i : signal_table()) {
    EXPECT_TRUE(names.insert(i.name).second) << i.name;
    EXPECT_EQ(signal_by_name(i.name), i.signal);
    // (appended, not "`" + name + "`": g++ 12 -O2 warns a false -Wrestrict on that)
    std::string quoted(1, '`');
    quoted.append(i.name).push_back('`');
    EXPECT_NE(doc.str().find(quoted), std::string::npos) << i.name << " is not in docs/profile.md";
  }
  EXPECT_FALSE(signal_by_name("main.nope"));
}

TEST(BottleneckRules, BadRulesAreErrorsThatNameTheRuleAndTheKey) {
  const std::string action = "\n[[rule.action]]\ntext = \"t\"\n";
  const auto err = [&](const std::string& text) {
    auto r = parse_rules(text, "x.toml");
    return r ? std::string("(parsed)") : r.error().message();
  };
  const std::string head =
      "[[rule]]\nid = \"a\"\nverdict = \"v\"\ntitle = \"T\"\nsummary = \"S\"\n";
  EXPECT_NE(err(head + "require = [ { signal = \"main.nope\", min = 1 } ]" + action)
                .find("'main.nope' is not a signal"),
            std::string::npos);
  EXPECT_NE(err(head + "require = [ { signal = \"main.cpu\", min = 1, above = 2 } ]" + action)
                .find("unknown key 'above'"),
            std::string::npos);
  EXPECT_NE(err(head + "require = [ { signal = \"main.cpu\" } ]" + action).find("neither min"),
            std::string::npos);
  EXPECT_NE(err(head + "require = [ { signal = \"main.cpu\", min = 5, max = 1 } ]" + action)
                .find("min is above max"),
            std::string::npos);
  EXPECT_NE(
      err(head + "require = [ { signal = \"main.cpu\", min = 1 } ]").find("no [[rule.action]]"),
      std::string::npos);
  EXPECT_NE(err(head + "require = [ { signal = \"main.cpu\", min = 1 } ]\n[[rule.action]]\n"
                       "when = [ { signal = \"main.cpu\", min = 1 } ]\ntext = \"t\"\n")
                .find("must have no `when`"),
            std::string::npos);
  EXPECT_NE(err(head + "require = [ { signal = \"main.cpu\", min = 1 } ]\n[[rule.action]]\n"
                       "text = \"{main.nope}\"\n")
                .find("{main.nope} names no signal"),
            std::string::npos);
  EXPECT_NE(err(head + action).find("no require or any"), std::string::npos);
  const std::string one = head + "require = [ { signal = \"main.cpu\", min = 1 } ]" + action;
  EXPECT_NE(err(one + one).find("the id is used twice"), std::string::npos);
  EXPECT_NE(err("[[rule]\n").find("x.toml"), std::string::npos);
  EXPECT_NE(err("colour = 1\n" + one).find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(err("").find("no [[rule]]"), std::string::npos);
  // And each error names the rule it is in.
  EXPECT_NE(
      err(head + "require = [ { signal = \"main.nope\", min = 1 } ]" + action).find("[[rule]] a"),
      std::string::npos);
  EXPECT_EQ(err(one), "(parsed)");
}

// Each class's signature (docs/measurements.md, "Signals that tell bottlenecks apart").
TEST(BottleneckVerdicts, EachMeasuredSignatureGetsItsClass) {
  struct Case {
    const char* name;
    std::map<std::string, double> signals;
    const char* rule;
  };
  const std::vector<Case> cases = {
      {"compute", host({}), "compute-bound-cpu"},
      {"input, spare CPU",
       host({{"workers.cpu", 99},
             {"workers.running", 1},
             {"main.on_cpu", 13},
             {"main.running", 0.1},
             {"main.sleeping", 0.85},
             {"host.idle_cpus", 0.9}}),
       "input-bound"},
      {"input, CPU-saturated by the job itself",
       host({{"workers.cpu", 70},
             {"workers.running", 1},
             {"workers.run_queue", 26},
             {"main.on_cpu", 35},
             {"main.run_queue", 31},
             {"main.sleeping", 0.5},
             {"main.running", 0.5},
             {"host.idle_cpus", 0.05},
             {"job.psi_cpu", 40}}),
       "input-bound"},
      {"storage",
       host({{"workers.blocked", 0.74},
             {"main.sleeping", 0.9},
             {"main.running", 0},
             {"main.on_cpu", 5},
             {"job.psi_io", 63},
             {"job.read_bytes", 30e6},
             {"host.iowait", 40}}),
       "storage-bound"},
      {"page cache pushed out",
       host({{"cgroup.memory_use", 99},
             {"cgroup.failcnt", 500},
             {"cgroup.refault_file", 5000},
             {"workers.blocked", 0.4},
             {"main.sleeping", 0.6},
             {"main.on_cpu", 30}}),
       "page-cache-pushed-out"},
      {"contention by another process",
       host({{"main.run_queue", 24},
             {"job.psi_cpu", 46},
             {"host.other_cpu", 90},
             {"main.involuntary", 400},
             {"main.on_cpu", 70},
             {"host.idle_cpus", 0}}),
       "cpu-contention"},
      {"CPU quota",
       host({{"cgroup.throttled", 60},
             {"main.run_queue", 40},
             {"main.on_cpu", 50},
             {"host.idle_cpus", 1.0}}),
       "cpu-quota"},
      {"memory pressure with swap",
       host({{"host.swap_in", 20e6},
             {"cgroup.memory_use", 98},
             {"workers.blocked", 0.6},
             {"job.psi_io", 86},
             {"job.psi_memory", 4},
             {"main.on_cpu", 20}}),
       "memory-pressure"},
      {"an OOM kill", host({{"cgroup.oom_kills", 1}}), "memory-pressure"},
      {"allocator churn",
       host({{"main.system_share", 31}, {"main.minor_faults", 50000}, {"main.on_cpu", 99}}),
       "allocation-churn"},
      {"GPU-bound", host({{"job.gpus", 4}, {"gpu.util", 97}, {"main.on_cpu", 40}}),
       "compute-bound-gpu"},
      // The same with GPM's SM activity: most SMs busy is still the healthy case; 15% busy at
      // 97% utilisation is small kernels or launch overhead.
      {"GPU-bound, SMs busy",
       host({{"job.gpus", 4}, {"gpu.util", 97}, {"gpu.sm_active", 80}, {"main.on_cpu", 40}}),
       "compute-bound-gpu"},
      {"GPU launch-bound",
       host({{"job.gpus", 4}, {"gpu.util", 97}, {"gpu.sm_active", 15}, {"main.on_cpu", 40}}),
       "launch-bound-gpu"},
      {"GPU starved by the main process",
       host({{"job.gpus", 1}, {"gpu.util", 35}, {"main.on_cpu", 99}}), "main-process-bound-gpu"},
  };
  for (const auto& c : cases) {
    const auto p = judge(window(c.signals));
    EXPECT_EQ(p.verdict.rule, c.rule) << c.name << ": " << p.verdict.summary;
    EXPECT_EQ(p.verdict.confidence, "high") << c.name;
    EXPECT_FALSE(p.verdict.action.empty()) << c.name;
    EXPECT_FALSE(p.verdict.evidence.empty()) << c.name;
    EXPECT_EQ(p.verdict.summary.find("(not measured)"), std::string::npos) << c.name;
  }
}

TEST(BottleneckVerdicts, ThresholdsAreExactAndAValueJustShortIsNoMatch) {
  auto input = host({{"workers.cpu", 60}, {"main.sleeping", 0.4}, {"main.on_cpu", 60}});
  EXPECT_EQ(judge(window(input)).verdict.rule, "input-bound");
  input["workers.cpu"] = 59.9;
  const auto p = judge(window(input));
  EXPECT_NE(p.verdict.rule, "input-bound");
  // The rule is then a near miss that says what it lacked.
  bool named = false;
  for (const auto& m : p.near_misses)
    if (m.rule == "input-bound")
      for (const auto& l : m.lacking) named = named || l.find("workers.cpu was 60%") == 0;
  EXPECT_TRUE(named);
}

TEST(BottleneckVerdicts, ConfidenceIsTheShareOfSamplesTheEvidenceHeldIn) {
  // Workers blocked in D in the last 60% of the samples only, at full strength there: the mean
  // (0.6) passes; the condition held in 60% of the samples: medium.
  auto w = window(host({{"main.on_cpu", 5}, {"main.sleeping", 0.9}, {"main.running", 0}}));
  set_from(w, 16, "workers.blocked", 1.0);
  auto p = judge(w);
  EXPECT_EQ(p.verdict.rule, "storage-bound");
  EXPECT_EQ(p.verdict.confidence, "medium");
  EXPECT_NEAR(p.verdict.score, 0.6, 1e-9);
  // Too few samples: at most low, whatever held.
  p = judge(window(host({}), 5));
  EXPECT_EQ(p.verdict.rule, "compute-bound-cpu");
  EXPECT_EQ(p.verdict.confidence, "low");
}

// A job that does nothing (a lock, time.sleep, a barrier, SIGSTOP) is idle, its own verdict:
// never "compute-bound" nor its nearest miss. One that works a little is not idle.
TEST(BottleneckVerdicts, AJobThatDoesNothingIsIdle) {
  const auto idle = host({{"main.on_cpu", 0.3},
                          {"main.cpu", 0.4},
                          {"main.running", 0},
                          {"main.sleeping", 1},
                          {"workers.count", 0},
                          {"workers.cpu", 0},
                          {"job.cpu", 0.5},
                          {"host.idle_cpus", 1.9}});
  auto p = judge(window(idle));
  EXPECT_EQ(p.verdict.rule, "idle");
  EXPECT_EQ(p.verdict.verdict, "idle");
  EXPECT_FALSE(p.verdict.healthy);
  EXPECT_NE(p.verdict.action.find("dltune stacks"), std::string::npos) << p.verdict.action;
  auto working = idle;
  working["job.cpu"] = 40;  // its workers busy: not idle
  working["workers.count"] = 2;
  working["workers.cpu"] = 20;
  EXPECT_NE(judge(window(working)).verdict.rule, "idle");
  auto reading = idle;
  reading["main.blocked"] = 0.6;  // in D: the storage's, not idle
  EXPECT_NE(judge(window(reading)).verdict.rule, "idle");
}

TEST(BottleneckVerdicts, NothingMatchingIsInconclusiveWithTheNearestRules) {
  // Main half on a CPU, workers half busy, nothing waiting: no rule fits.
  const auto p = judge(window(host(
      {{"main.on_cpu", 50}, {"main.running", 0.5}, {"main.sleeping", 0.2}, {"workers.cpu", 40}})));
  EXPECT_EQ(p.verdict.verdict, "inconclusive");
  EXPECT_EQ(p.verdict.confidence, "low");
  ASSERT_FALSE(p.near_misses.empty());
  EXPECT_FALSE(p.verdict.action.empty());
  JobSeen job;
  job.main = 42;
  job.comm = "python3";
  job.cmdline = "python3 train.py";
  job.max_workers = 2;
  job.samples_with_main = 40;
  const auto text = render_text(p, job, "pid 42", {});
  EXPECT_NE(text.find("INCONCLUSIVE"), std::string::npos);
  EXPECT_NE(text.find("Nearest rules"), std::string::npos);
}

TEST(BottleneckVerdicts, AHealthyMatchIsNotListedBesideAFault) {
  // Allocation churn looks compute-bound otherwise (docs/measurements.md): the churn is the verdict
  // and "compute-bound, healthy" is not shown beside it.
  const auto p = judge(window(host({{"main.system_share", 40}, {"main.minor_faults", 80000}})));
  EXPECT_EQ(p.verdict.rule, "allocation-churn");
  for (const auto& a : p.also) EXPECT_FALSE(a.healthy) << a.rule;
}

TEST(BottleneckVerdicts, ALowConfidenceFaultBesideAnotherIsMixed) {
  // A CPU hog for a quarter of the window and throttling for a quarter, strong enough to pass on
  // the means but each holding briefly.
  auto w = window(host({{"main.on_cpu", 60}}));
  set_from(w, 30, "host.other_cpu", 190);
  set_from(w, 30, "main.run_queue", 60);
  set_from(w, 30, "cgroup.throttled", 50);
  const auto p = judge(w);
  EXPECT_EQ(p.verdict.verdict, "mixed") << p.verdict.title;
  ASSERT_FALSE(p.also.empty());
  // Which two, by id, for scripts: the first gives the action, the second is also's first.
  ASSERT_EQ(p.verdict.causes.size(), 2u);
  EXPECT_EQ(p.verdict.causes[1], p.also[0].rule);
  EXPECT_NE(p.verdict.causes[0], p.verdict.causes[1]);
  EXPECT_EQ(p.also[0].causes, std::vector<std::string>{p.also[0].rule});
  EXPECT_EQ(to_json(p)["result"]["causes"], nlohmann::json(p.verdict.causes));
}

TEST(BottleneckVerdicts, AnAbsentOptionalSignalIsPassedOverAndAbsentRequiredOneFails) {
  // No schedstat (main.on_cpu absent): input-bound still stands on the other signals.
  auto v = host({{"workers.cpu", 99}, {"main.sleeping", 0.85}, {"main.running", 0.1}});
  v.erase("main.on_cpu");
  v.erase("main.run_queue");
  EXPECT_EQ(judge(window(v)).verdict.rule, "input-bound");
  // No workers at all: the input rule needs them.
  v.erase("workers.count");
  v.erase("workers.cpu");
  EXPECT_NE(judge(window(v)).verdict.rule, "input-bound");
}

TEST(BottleneckVerdicts, TheActionFitsTheCase) {
  // Input-bound with a CPU idle: more workers, as many as the idle CPUs allow.
  auto p = judge(window(host({{"workers.count", 1},
                              {"workers.cpu", 99},
                              {"main.on_cpu", 13},
                              {"main.sleeping", 0.85},
                              {"host.idle_cpus", 0.9}})));
  EXPECT_NE(p.verdict.action.find("from 1 to 2"), std::string::npos) << p.verdict.action;
  EXPECT_NE(p.verdict.run.find("num_workers=2"), std::string::npos) << p.verdict.run;
  // No CPU idle: never more workers, cheaper samples instead.
  p = judge(window(host({{"workers.count", 2},
                         {"workers.cpu", 80},
                         {"main.on_cpu", 30},
                         {"main.sleeping", 0.6},
                         {"host.idle_cpus", 0.05}})));
  EXPECT_EQ(p.verdict.rule, "input-bound");
  EXPECT_EQ(p.verdict.action.find("Raise num_workers"), std::string::npos) << p.verdict.action;
  EXPECT_NE(p.verdict.action.find("cheaper"), std::string::npos) << p.verdict.action;
  // Contention: the CPU weight, which helped whatever bound the job; not pinning.
  p = judge(window(host({{"main.run_queue", 24}, {"host.other_cpu", 90}})));
  EXPECT_NE(p.verdict.run.find("--cpu-weight"), std::string::npos);
}

TEST(BottleneckWindow, SteadyStartSkipsStartUpAndWaitsForWorkers) {
  auto w = window(host({}), 40);
  const auto workers = static_cast<std::size_t>(Signal::kWorkersCount);
  for (std::size_t i = 0; i < 12; ++i) w.samples[i][workers] = 0;
  EXPECT_EQ(steady_start(w, 0), 12u);              // the first sample with workers
  EXPECT_EQ(steady_start(w, 5'000'000'000), 20u);  // 5 s at 250 ms
  // Workers that come only in the second half are not waited for (a job without them).
  for (std::size_t i = 0; i < 30; ++i) w.samples[i][workers] = 0;
  EXPECT_EQ(steady_start(w, 0), 0u);
  // Never so far that nothing is left.
  EXPECT_EQ(steady_start(w, 100'000'000'000), 36u);
}

TEST(BottleneckWindow, ExpandNamesValuesAndSaysWhatWasNotMeasured) {
  SignalValues v{};
  v[static_cast<std::size_t>(Signal::kWorkersCount)] = 3;
  v[static_cast<std::size_t>(Signal::kHostSwapIn)] = 3.5 * 1024 * 1024;
  EXPECT_EQ(expand("{workers.count} workers, {host.swap_in}, {job.psi_io}", v),
            "3 workers, 3.5 MiB/s, (not measured)");
  EXPECT_EQ(expand("no placeholders {", v), "no placeholders {");
}

TEST(BottleneckWindow, JsonHasWhatReportShowsAndEverySignal) {
  const auto p = judge(window(host({})));
  const auto j = to_json(p);
  EXPECT_EQ(j["schema"], "dltune.profile/1");
  EXPECT_NE(j["verdict"].get<std::string>().find("Compute-bound"), std::string::npos);
  EXPECT_TRUE(j["evidence"].is_array());
  EXPECT_TRUE(j["evidence"][0].is_string());
  EXPECT_EQ(j["signals"].size(), kSignalCount);
  EXPECT_TRUE(j["signals"]["gpu.util"].is_null());  // absent, not 0
  EXPECT_EQ(j["window"]["samples"], 40);
}

// Secondary levers: signals weaker than any rule needs beside the verdict, said as "also try"
// with the measured effect and the bench command; not after a verdict that already says it.
TEST(BottleneckLevers, AModerateLeverIsAlsoTryAndTheVerdictStaysStrict) {
  auto names = [](const Profile& p) {
    std::vector<std::string> out;
    for (const auto& a : p.also_try) out.push_back(a.lever);
    return out;
  };
  // A compute-bound job whose main thread spends 12% of its CPU in the kernel on 8,000 faults/s:
  // not churn by the verdict's rule, but the allocator is worth a bench.
  auto p = judge(window(host({{"main.system_share", 12}, {"main.minor_faults", 8000}})));
  EXPECT_EQ(p.verdict.rule, "compute-bound-cpu");
  ASSERT_EQ(names(p), std::vector<std::string>{"allocator"});
  EXPECT_NE(p.also_try[0].why.find("12%"), std::string::npos) << p.also_try[0].why;
  EXPECT_NE(p.also_try[0].measured.find("x1.36"), std::string::npos);
  EXPECT_NE(p.also_try[0].bench.find("--run-b=--allocator=glibc-tuned"), std::string::npos);
  EXPECT_EQ(p.also_try[0].evidence.size(), 3u);
  // Churn strong enough for the verdict: the verdict says it, the lever does not repeat it.
  p = judge(window(host({{"main.system_share", 30}, {"main.minor_faults", 30000}})));
  EXPECT_EQ(p.verdict.rule, "allocation-churn");
  EXPECT_TRUE(names(p).empty()) << ::testing::PrintToString(names(p));
  // A few percent of run-queue wait under an outside load: the CPU weight.
  p = judge(window(host({{"host.other_cpu", 25}, {"main.run_queue", 5}})));
  EXPECT_EQ(p.verdict.rule, "compute-bound-cpu");
  EXPECT_EQ(names(p), std::vector<std::string>{"cpu-weight"});
  p = judge(window(host({{"main.run_queue", 24}, {"host.other_cpu", 90}})));
  EXPECT_EQ(p.verdict.verdict, "cpu-contention");
  EXPECT_TRUE(names(p).empty());
  // A worker near saturation and the main process waiting now and then, a CPU idle.
  p = judge(window(host({{"workers.count", 1},
                         {"workers.cpu", 90},
                         {"main.sleeping", 0.2},
                         {"main.on_cpu", 75},
                         {"host.idle_cpus", 0.9}})));
  EXPECT_NE(p.verdict.verdict, "input-bound");
  ASSERT_EQ(names(p), std::vector<std::string>{"more-workers"});
  EXPECT_NE(p.also_try[0].bench.find("NUM_WORKERS=1 --run-b=--env=NUM_WORKERS=2"),
            std::string::npos)
      << p.also_try[0].bench;
  // The text and the JSON say it.
  const auto text = render_text(p, JobSeen{}, "pid 1", {});
  EXPECT_NE(text.find("Also try"), std::string::npos) << text;
  EXPECT_NE(text.find("Another DataLoader worker"), std::string::npos) << text;
  const auto j = to_json(p);
  ASSERT_EQ(j["also_try"].size(), 1u);
  EXPECT_EQ(j["also_try"][0]["lever"], "more-workers");
  EXPECT_FALSE(j["also_try"][0]["evidence"].empty());
  // The quiet host: none.
  EXPECT_TRUE(judge(window(host({}))).also_try.empty());
}

TEST(BottleneckLevers, BadLeversAreErrorsThatNameTheLeverAndTheKey) {
  const std::string rule =
      "[[rule]]\nid = \"a\"\nverdict = \"v\"\ntitle = \"T\"\nsummary = \"S\"\n"
      "require = [ { signal = \"main.cpu\", min = 1 } ]\n[[rule.action]]\ntext = \"t\"\n";
  const std::string lever =
      "[[lever]]\nid = \"l\"\ntitle = \"T\"\nwhy = \"W\"\nmeasured = \"M\"\n"
      "bench = \"B\"\nwhen = [ { signal = \"main.cpu\", min = 1 } ]\n";
  const auto err = [&](const std::string& text) {
    auto r = parse_rules(text, "x.toml");
    return r ? std::string("(parsed)") : r.error().message();
  };
  EXPECT_EQ(err(rule + lever), "(parsed)");
  EXPECT_NE(err(rule + lever + "colour = 1\n").find("unknown key 'colour'"), std::string::npos);
  EXPECT_NE(err(rule + lever + "after = [\"nope\"]\n").find("'nope' is no rule id or verdict"),
            std::string::npos);
  EXPECT_EQ(err(rule + lever + "after = [\"v\", \"a\"]\n"), "(parsed)");
  EXPECT_NE(
      err(rule + "[[lever]]\nid = \"l\"\ntitle = \"T\"\nwhy = \"{main.nope}\"\n"
                 "measured = \"M\"\nbench = \"B\"\nwhen = [ { signal = \"main.cpu\", min = 1 } ]\n")
          .find("[[lever]] l"),
      std::string::npos);
  EXPECT_NE(err(rule + "[[lever]]\nid = \"l\"\ntitle = \"T\"\nwhy = \"W\"\nmeasured = \"M\"\n"
                       "bench = \"B\"\n")
                .find("no `when`"),
            std::string::npos);
  EXPECT_NE(err(rule + lever + lever).find("the id is used twice"), std::string::npos);
}

// The Python stacks' signals: the main process loading its own data (num_workers=0) is named as
// such where the OS signals alone said compute-bound; a step of Python outside the model and a
// blocking call have their own verdicts; without the stacks the OS verdict stays.
TEST(BottleneckVerdicts, ThePythonStacksNameLoadingInTheMainProcess) {
  auto no_workers = host({{"workers.count", 0}, {"workers.cpu", 0}});
  EXPECT_EQ(judge(window(no_workers)).verdict.rule, "compute-bound-cpu") << "no stacks: as before";
  auto loading = no_workers;
  loading["py.samples"] = 25;
  loading["py.loading"] = 0.8;
  loading["py.model"] = 0.15;
  loading["py.python"] = 0.05;
  const auto p = judge(window(loading));
  EXPECT_EQ(p.verdict.rule, "input-in-main");
  EXPECT_EQ(p.verdict.verdict, "input-bound");
  EXPECT_NE(p.verdict.title.find("main process"), std::string::npos) << p.verdict.title;
  EXPECT_NE(p.verdict.action.find("num_workers to 1"), std::string::npos) << p.verdict.action;
  // The model dominating: compute-bound stays.
  auto model = no_workers;
  model["py.samples"] = 25;
  model["py.loading"] = 0.1;
  model["py.model"] = 0.85;
  model["py.python"] = 0.05;
  EXPECT_EQ(judge(window(model)).verdict.rule, "compute-bound-cpu");
  // Python outside the model.
  auto python = model;
  python["py.model"] = 0.2;
  python["py.python"] = 0.7;
  EXPECT_EQ(judge(window(python)).verdict.rule, "python-bound");
  // A synchronising call in every step.
  auto sync = model;
  sync["py.sync"] = 0.3;
  EXPECT_EQ(judge(window(sync)).verdict.rule, "blocking-call");
}

}  // namespace bottleneck_test
