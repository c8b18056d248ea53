#pragma once
// Bottleneck rules and their evaluation over a window of samples, for `dltune profile`.
// The rules are data: knowledge/bottlenecks.toml, compiled into the binary, parsed
// and checked here (every signal named must exist, every placeholder in an action's text too).
//
// A rule matches a window when each of its `require` conditions holds on the window's value of
// its signal (the mean over the steady samples, or the sum for counts of events), at least one
// of its `any` conditions holds (when it has some), and none of its `exclude` conditions does.
// How long a condition held is the share of the window's samples in which it held on that
// sample's own value; the rule's confidence is the smallest such share among the conditions that
// made it match, so a verdict that rests on a signal that held only now and then says so.
// Rules are tried in file order: the first that matches is the verdict, later matches are listed
// as also seen. None matching is an honest "inconclusive", with the nearest rules and what each
// lacked; a first match of low confidence beside another match is "mixed".
#include <sys/types.h>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/error.hpp"
#include "diagnose/py_activity.hpp"
#include "diagnose/signals.hpp"
#include "monitor/sample.hpp"

namespace dltune::diagnose {

struct Condition {
  Signal signal = Signal::kMainOnCpu;
  std::optional<double> min, max;  // holds when min <= value <= max (each when given)
  // A `require` condition whose signal is absent (no PSI for the job's group, schedstat
  // unreadable) is passed over when optional, and fails the rule otherwise.
  bool optional = false;
  [[nodiscard]] bool holds(double v) const { return (!min || v >= *min) && (!max || v <= *max); }
  [[nodiscard]] std::string describe() const;  // "main.on_cpu >= 80"
};

struct Action {
  std::vector<Condition> when;  // all must hold for this action to be the one given
  std::string text;             // may name signals: "{workers.count}" is replaced by its value
  std::string run;              // the `dltune run` option or script change, same placeholders
};

struct Rule {
  std::string id;        // "input-bound-spare-cpu": unique
  std::string verdict;   // the class: "input-bound", "storage-bound", ... (several rules may share)
  std::string title;     // "Input-bound: the DataLoader cannot keep up"
  std::string summary;   // why, for people (placeholders allowed)
  bool healthy = false;  // compute-bound: said as the healthy case
  std::vector<Condition> require, any, support, exclude;
  std::vector<Action> actions;  // the first whose `when` holds is the one to try first
  std::string disambiguate;     // what would settle it when the rule nearly matched
};

// A secondary lever: what the signals show beside the verdict, weaker than any rule needs, with
// the effect such a change had where it was measured and the `dltune bench` command that proves
// it on this job. Said as "also try", never as the verdict (which stays as strict as it is).
struct Lever {
  std::string id;                  // "allocator": unique
  std::string title;               // "A tuned allocator"
  std::vector<Condition> when;     // all must hold on the window's values
  std::vector<std::string> after;  // verdicts or rule ids after which it is not said (the
                                   // verdict already says it)
  std::string why;                 // placeholders allowed
  std::string measured;            // the effect measured, and where
  std::string bench;               // the A/B command (placeholders allowed)
};

struct Rules {
  std::vector<Rule> rules;
  std::vector<Lever> levers;
  std::size_t min_samples = 8;  // fewer steady samples than this: confidence at most low
  double high = 0.75, medium = 0.5;
};

// Parses and checks a rules file; errors name `name`, the rule and the key.
[[nodiscard]] Result<Rules> parse_rules(std::string_view toml_text, std::string_view name);
// knowledge/bottlenecks.toml as compiled in.
[[nodiscard]] const Result<Rules>& builtin_rules();

// The signals of a run, one entry per sample interval.
struct Window {
  std::vector<std::int64_t> wall_ns;  // the interval's end
  std::vector<SignalValues> samples;
};

// What was seen of the job while its window was built.
struct JobSeen {
  pid_t main = 0;  // 0: no process of the sample had the main role
  std::string comm, cmdline;
  std::optional<int> rank;  // RANK in the main process's environment (a rank of a distributed job)
  std::size_t max_workers = 0, max_children = 0, samples_with_main = 0;
  bool main_gone = false;  // the main process was seen, then no longer (the job ended)
  // The GPUs whose process lists named a process of the job (its main process, workers or
  // children; under a launcher a rank's own), by the reading's index, with the most memory the
  // job's processes held on each at once (NVML's per-process figures; 0 when it gave none).
  struct GpuUse {
    unsigned index = 0;
    std::optional<std::string> uuid;
    std::uint64_t peak_memory_bytes = 0;
  };
  std::vector<GpuUse> gpus;
};

// Builds a Window sample by sample: each Sample's Model against the one before it.
class WindowBuilder {
 public:
  // `py`: the main thread's Python stacks over the interval that ends with `s`, when they were
  // read (the py.* signals).
  void add(monitor::Sample&& s, const PyTally* py = nullptr);
  // The job (a rank) is gone: later samples are not its own (its window ends here).
  void end() { job_.main_gone = job_.main != 0; }
  [[nodiscard]] const Window& window() const { return w_; }
  [[nodiscard]] const JobSeen& job() const { return job_; }

 private:
  void note_gpus(const monitor::Sample& s);

  std::optional<monitor::Sample> previous_;
  Window w_;
  JobSeen job_;
};

// A launcher whose children are the ranks of one distributed job, each a training process with
// its own DataLoader workers: torchrun, `python -m torch.distributed.run` or `.launch`.
[[nodiscard]] bool is_rank_launcher(std::string_view cmdline);
// The ranks in `s`: the main process's children when the main process is a launcher (`dltune run
// --nproc` too); in a group whose launcher is outside it, the processes with the main process's
// command line whose parents are outside (at least two); else none.
[[nodiscard]] std::vector<pid_t> ranks_of(const monitor::Sample& s);
// `s` as seen from `rank`: `rank` the main process, its descendants named by
// monitor::descendant_role against the rank's command line, the launcher and the other ranks
// kOther (sampled, but not this rank's: their CPU is the job's own load, not an outsider's).
// Empty of processes when `rank` is not in `s`.
[[nodiscard]] monitor::Sample rerooted(const monitor::Sample& s, pid_t rank);

// The windows of a job and, under a launcher, of each of its ranks.
class JobWindows {
 public:
  // `py`: the job's main process's Python stacks over the interval; `rank_py`: each rank's, by
  // its pid (a rank without one is judged on the system's signals).
  void add(monitor::Sample&& s, const PyTally* py = nullptr,
           const std::map<pid_t, PyTally>* rank_py = nullptr);
  [[nodiscard]] const WindowBuilder& job() const { return job_; }
  [[nodiscard]] const std::map<pid_t, WindowBuilder>& ranks() const { return ranks_; }

 private:
  WindowBuilder job_;
  std::map<pid_t, WindowBuilder> ranks_;
};

// Where the steady state starts: after `skip_ns` from the first sample, and when DataLoader
// workers appear within the first half of the run, not before the first sample that has them
// (imports, worker start-up and the dataset scan look nothing like training).
[[nodiscard]] std::size_t steady_start(const Window& w, std::int64_t skip_ns);

struct Evidence {
  Signal signal = Signal::kMainOnCpu;
  double value = 0;
  std::string condition;  // "main.on_cpu >= 80"
  double held = 0;        // share of samples in which it held
  std::size_t samples = 0;
  bool supporting = false;  // a `support` condition rather than one the rule rests on
  std::string text;         // "main thread on a CPU: 13% (needs <= 60%), held in 95% of 60 samples"
};

struct Verdict {
  std::string rule, verdict, title, summary;
  bool healthy = false;
  double score = 0;        // 0..1
  std::string confidence;  // "high", "medium", "low"
  std::vector<Evidence> evidence;
  std::string action, run;
  // The rules the verdict stands for, by id: a rule's own; "mixed": the two it mixes, the first
  // the one whose action it gives; "inconclusive": none.
  std::vector<std::string> causes;
};

struct NearMiss {
  std::string rule, verdict, title;
  std::size_t met = 0, total = 0;
  std::vector<std::string> lacking;  // "main.on_cpu was 55% (needs >= 80%)"
  std::string disambiguate;
};

struct AlsoTry {
  std::string lever, title, why, measured, bench;
  std::vector<Evidence> evidence;
};

struct Profile {
  Verdict verdict;  // verdict "inconclusive" or "mixed" when so
  std::vector<Verdict> also;
  std::vector<AlsoTry> also_try;  // the levers whose conditions held (Rules::levers)
  std::vector<NearMiss> near_misses;
  std::size_t samples = 0, skipped = 0;   // steady samples used, start-up samples left out
  std::int64_t start_ns = 0, end_ns = 0;  // of the steady window (wall)
  SignalValues values{};                  // the window's value of each signal
  std::array<std::size_t, kSignalCount> present{};  // samples that had each signal
};

[[nodiscard]] Profile analyze(const Rules& rules, const Window& w, std::size_t first);

// "{name}" placeholders replaced by the window's values ("(not measured)" for a signal without
// one).
[[nodiscard]] std::string expand(std::string_view text, const SignalValues& values);

// The profile as JSON (schema "dltune.profile/1", docs/profile.md); its verdict, summary and
// evidence strings are what `dltune report` shows.
[[nodiscard]] nlohmann::json to_json(const Profile& p);

}  // namespace dltune::diagnose
