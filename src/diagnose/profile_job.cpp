#include "diagnose/profile_job.hpp"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <map>

#include <fmt/core.h>

#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "diagnose/profile_text.hpp"
#include "launch/output_watch.hpp"
#include "monitor/rank_pace.hpp"
#include "pystack/process.hpp"
#include "store/recording.hpp"

namespace dltune::diagnose {

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

tl::unexpected<Failure> failure(bool bad_input, std::string what) {
  return tl::unexpected(Failure{bad_input, Error{std::move(what), "", 0}});
}

nlohmann::json gpus_json(const JobSeen& job) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : job.gpus)
    out.push_back({{"index", g.index},
                   {"uuid", g.uuid ? nlohmann::json(*g.uuid) : nlohmann::json(nullptr)},
                   {"peak_memory_bytes", g.peak_memory_bytes}});
  return out;
}

JobVerdict judge_one(const Rules& rules, const WindowBuilder& b, std::int64_t skip_ns,
                     const std::string& source, std::vector<std::string> notes) {
  JobVerdict v;
  const auto first = steady_start(b.window(), skip_ns);
  v.profile = analyze(rules, b.window(), first);
  v.job = b.job();
  for (auto& n : profile_notes(v.profile, b.job())) notes.push_back(std::move(n));
  v.doc = to_json(v.profile);
  v.doc["source"] = source;
  v.doc["job"] = {{"pid", b.job().main},
                  {"rank", b.job().rank ? nlohmann::json(*b.job().rank) : nlohmann::json(nullptr)},
                  {"comm", b.job().comm},
                  {"cmdline", b.job().cmdline},
                  {"workers", b.job().max_workers},
                  {"children", b.job().max_children},
                  {"ended", b.job().main_gone},
                  {"gpus", gpus_json(b.job())}};
  v.source = source;
  v.notes = std::move(notes);
  return v;
}

std::optional<double> value(const JobVerdict& v, Signal s) {
  return v.profile.values[static_cast<std::size_t>(s)];
}

using monitor::median;

// "rank 3 (pid 1234)" when its environment said its rank, else "rank pid 1234".
std::string rank_name(const JobSeen& job) {
  return job.rank ? monitor::rank_label(job.main, job.rank) : fmt::format("rank pid {}", job.main);
}

// "the 2nd of 4"
std::string ordinal(std::size_t i, std::size_t n) {
  const auto k = i + 1;
  const char* suffix = (k % 100 >= 11 && k % 100 <= 13) ? "th"
                       : k % 10 == 1                    ? "st"
                       : k % 10 == 2                    ? "nd"
                       : k % 10 == 3                    ? "rd"
                                                        : "th";
  return fmt::format("the {}{} of {}", k, suffix, n);
}

}  // namespace

RankComparison compare_ranks(const std::vector<JobVerdict>& ranks) {
  RankComparison out;  // doc: null until a straggler is named
  const std::size_t n = ranks.size();
  if (n < 2) return out;
  // The thresholds are monitor/rank_pace.hpp's, shared with top's live mark.
  // The rank far above the others on `signal`, and the values ("what: pid P V%, ..."); nothing
  // when a rank lacks it.
  struct Found {
    std::optional<std::size_t> top;
    std::string text;
  };
  const auto compare = [&](Signal signal, const char* what, bool wait = false) -> Found {
    std::vector<double> all;
    for (const auto& r : ranks) {
      const auto v = value(r, signal);
      if (!v) return {};
      all.push_back(*v);
    }
    std::vector<std::string> each;
    for (std::size_t i = 0; i < n; ++i)
      each.push_back(ranks[i].job.rank ? fmt::format("rank {} {:.0f}%", *ranks[i].job.rank, all[i])
                                       : fmt::format("pid {} {:.0f}%", ranks[i].job.main, all[i]));
    Found found{std::nullopt, fmt::format("{}: {}", what, text::join(each, ", "))};
    if (const auto far = wait ? monitor::far_above_in_wait(all) : monitor::far_above(all))
      found.top = far->index;
    return found;
  };
  std::vector<double> asleep;
  for (const auto& r : ranks) asleep.push_back(value(r, Signal::kMainSleeping).value_or(0));
  const auto cpu = compare(Signal::kMainOnCpu, "main thread on a CPU");
  auto top = cpu.top;
  out.text = cpu.text;
  bool by_gpu = false, by_wait = false;
  if (!top) {
    // A rank slowed by a CPU it shares (an outside load, or another rank on its CPUs): it does
    // the same work as the others, stretched, so its time on a CPU is like theirs; its wait for
    // a CPU is not.
    const auto wait = compare(Signal::kMainRunQueue, "main thread waiting for a CPU", true);
    top = wait.top;
    by_wait = top.has_value();
    if (!wait.text.empty()) out.text += "; " + wait.text;
  }
  if (!top) {
    // A rank whose own GPU is the slow one: its main thread waits for its GPU while the others
    // wait in the collective, so the CPU does not tell them apart; the GPUs' utilisation does.
    const auto gpu = compare(Signal::kGpuUtil, "GPU utilisation");
    top = gpu.top;
    by_gpu = top.has_value();
    if (!gpu.text.empty()) out.text += "; " + gpu.text;
  }
  if (!top) {
    out.text = out.text.empty() ? "no rank named: the ranks' main threads' time on a CPU was not "
                                  "measured for every rank"
                                : "no rank holds the others back (" + out.text + ")";
    return out;
  }
  std::vector<double> others_asleep;
  for (std::size_t i = 0; i < n; ++i)
    if (i != *top) others_asleep.push_back(asleep[i]);
  const bool starved =
      by_wait && monitor::starved_of_cpu(value(ranks[*top], Signal::kMainRunQueue).value_or(0),
                                         value(ranks[*top], Signal::kMainOnCpu).value_or(100));
  if (!by_gpu && !starved && median(others_asleep) < monitor::kStragglerOthersAsleep) {
    out.text = "no rank holds the others back: one is busier, but the others do not wait (" +
               out.text + ")";
    return out;
  }
  out.straggler = top;
  const auto& s = ranks[*top];
  const auto others_of = [&](Signal signal) {
    std::vector<double> v;
    for (std::size_t i = 0; i < n; ++i)
      if (i != *top)
        if (auto x = value(ranks[i], signal)) v.push_back(*x);
    return median(v);
  };
  const double run_queue = value(s, Signal::kMainRunQueue).value_or(0);
  const double others_run_queue = others_of(Signal::kMainRunQueue);
  const double workers = value(s, Signal::kWorkersCpu).value_or(0);
  const double worker_count = value(s, Signal::kWorkersCount).value_or(0);
  const auto clock = value(s, Signal::kGpuSmClock);
  const double others_clock = others_of(Signal::kGpuSmClock);
  const double slowdown = value(s, Signal::kGpuSlowdown).value_or(0);
  const double others_slowdown = others_of(Signal::kGpuSlowdown);
  if (by_gpu && ((clock && others_clock > 0 && *clock <= 0.9 * others_clock) ||
                 (slowdown >= 0.3 && others_slowdown < 0.1))) {
    // A GPU held below its clocks does less per second: the same step keeps it busier.
    out.cause = fmt::format(
        "its GPU is slowed: SM clock {} against the others' {:.0f} MHz, held back by its power "
        "cap or temperature in {:.0f}% of the samples (the others' {:.0f}%)",
        clock ? fmt::format("{:.0f} MHz", *clock) : std::string("unknown"), others_clock,
        slowdown * 100, others_slowdown * 100);
    out.action =
        "cool or re-seat that GPU, or lift its power cap (dltune check names the reason; "
        "nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE): every rank runs at its pace";
  } else if (by_gpu) {
    out.cause =
        "its GPU is the slowest of the job's (busier than the others' for the same step, at the "
        "same clocks)";
    out.action =
        "look at that GPU's clocks and throttle reasons (dltune check; nvidia-smi -q -d "
        "PERFORMANCE): a throttled, power-capped or slower GPU sets the pace of every rank; a GPU "
        "of another model in the job does too";
  } else if (run_queue >= 10 && run_queue >= 2 * others_run_queue) {
    out.cause = fmt::format(
        "it waits for a CPU {:.0f}% of the time (the others {:.0f}%): its CPUs are shared with "
        "another rank or an outside load",
        run_queue, others_run_queue);
    out.action =
        "give each rank CPUs of its own: dltune run --nproc N (with --gpus and --numa auto, those "
        "nearest each rank's GPU), or move the other load off its CPUs";
  } else if (worker_count >= 1 && workers >= 80) {
    out.cause = fmt::format(
        "its {:.0f} DataLoader worker(s) are saturated ({:.0f}% of a CPU each): it waits for "
        "its batches",
        worker_count, workers);
    out.action = "more DataLoader workers for every rank, or lighter preprocessing";
  } else {
    out.cause =
        "no outside cause in the signals (no run-queue wait, no saturated workers): it does more "
        "work per step than the others";
    out.action =
        "even out the work per rank (uneven shards or sequence lengths), or move work only this "
        "rank does (logging, evaluation, checkpoints on rank 0) out of the step";
  }
  const std::string who =
      s.job.rank ? rank_name(s.job)
                 : fmt::format("{} ({} ranks by start)", rank_name(s.job), ordinal(*top, n));
  const std::string waiting =
      by_gpu ? std::string()
             : fmt::format(
                   "; the others' main threads asleep in {:.0f}% of the samples (waiting "
                   "for it in the collective)",
                   median(others_asleep) * 100);
  out.text = fmt::format("the straggler is {}: {}{}", who, out.text, waiting);
  out.doc = {{"pid", s.job.main},
             {"rank", s.job.rank ? nlohmann::json(*s.job.rank) : nlohmann::json(nullptr)},
             {"index", *top},
             {"by", by_gpu    ? "gpu"
                    : by_wait ? "run_queue"
                              : "cpu"},
             {"main_on_cpu_pct", value(s, Signal::kMainOnCpu).value_or(0)},
             {"others_main_on_cpu_pct", others_of(Signal::kMainOnCpu)},
             {"others_asleep_share", median(others_asleep)},
             {"run_queue_pct", run_queue},
             {"others_run_queue_pct", others_run_queue},
             {"evidence", out.text},
             {"cause", out.cause},
             {"action", out.action}};
  if (auto g = value(s, Signal::kGpuUtil)) out.doc["gpu_util_pct"] = *g;
  if (clock) {
    out.doc["gpu_sm_clock_mhz"] = *clock;
    out.doc["others_gpu_sm_clock_mhz"] = others_clock;
  }
  if (auto g = value(s, Signal::kGpuSlowdown)) out.doc["gpu_slowdown_share"] = *g;
  return out;
}

namespace {

// The job error that leads: a CUDA OOM first (the one the job's own code can fix), then the
// first printed.
const nlohmann::json* leading_error(const nlohmann::json& errors) {
  const nlohmann::json* first = nullptr;
  for (const auto& e : errors) {
    if (!e.is_object()) continue;
    if (e.value("kind", "") == "cuda_oom") return &e;
    if (first == nullptr) first = &e;
  }
  return first;
}

}  // namespace

ProfileResult<ProfileReport> judge_job(const Rules& rules, const JobWindows& windows,
                                       const JudgeRequest& request) {
  const auto& b = windows.job();
  // A job that failed on a GPU error before it could be judged still has that verdict.
  if (const auto* failed = leading_error(request.job_errors);
      failed != nullptr && (b.job().main == 0 || b.window().samples.size() < 2)) {
    ProfileReport report;
    report.job_errors = request.job_errors;
    report.doc = {{"schema", "dltune.profile/1"},
                  {"source", request.source},
                  {"verdict", "failed"},
                  {"failed", *failed},
                  {"job_errors", request.job_errors},
                  {"notes", request.notes}};
    return report;
  }
  if (b.job().main == 0)
    return failure(true, request.source +
                             ": no job in it (record a job: dltune record --pid PID, or dltune "
                             "run --record; a host-wide recording has no job to judge)");
  if (b.window().samples.size() < 2)
    return failure(false, fmt::format("{}: too few samples to judge ({}); profile longer",
                                      request.source, b.window().samples.size()));
  ProfileReport report;
  // Under torchrun each rank is a training job of its own, with its own workers: each is
  // judged alone, the first rank's verdict leads (what report shows), all are listed.
  for (const auto& entry : windows.ranks()) {
    const auto& rb = entry.second;
    if (rb.job().main == 0 || rb.window().samples.size() < 2) continue;
    std::vector<std::string> notes;
    if (rb.job().main_gone) {
      const auto& w = rb.window().wall_ns;
      notes.push_back(
          fmt::format("{} ended during the profile: its verdict covers the {:.0f} s it lived",
                      rank_name(rb.job()), static_cast<double>(w.back() - w.front()) / 1e9));
    }
    if (const auto it = request.rank_notes.find(entry.first); it != request.rank_notes.end())
      notes.insert(notes.end(), it->second.begin(), it->second.end());
    report.parts.push_back(judge_one(rules, rb, request.skip_ns,
                                     fmt::format("{}, {}", request.source, rank_name(rb.job())),
                                     std::move(notes)));
    if (const auto it = request.rank_extra.find(entry.first); it != request.rank_extra.end())
      for (const auto& [k, v] : it->second.items()) report.parts.back().doc[k] = v;
  }
  // In rank order when every rank said its rank (rank 0 leads), else in pid order (start order).
  if (std::all_of(report.parts.begin(), report.parts.end(),
                  [](const JobVerdict& v) { return v.job.rank.has_value(); }))
    std::stable_sort(
        report.parts.begin(), report.parts.end(),
        [](const JobVerdict& a, const JobVerdict& b) { return *a.job.rank < *b.job.rank; });
  if (report.parts.empty()) {
    report.parts.push_back(judge_one(rules, b, request.skip_ns, request.source, request.notes));
    report.doc = report.parts.front().doc;
    report.doc["straggler"] = nullptr;
    report.doc["ranks_compared"] =
        "one rank: not a distributed job (no launcher with ranks, no sibling ranks in its group)";
  } else {
    auto& lead = report.parts.front();
    report.doc = lead.doc;
    nlohmann::json all = nlohmann::json::array();
    for (const auto& r : report.parts) {
      auto doc = r.doc;
      doc["notes"] = r.notes;
      all.push_back(std::move(doc));
    }
    lead.notes.insert(lead.notes.begin(), request.notes.begin(), request.notes.end());
    // The ranks are the main process's children (a launcher), or its siblings when the launcher
    // is outside the job's group (`dltune run --nproc`, srun).
    const bool launcher = windows.ranks().count(b.job().main) == 0;
    lead.notes.insert(
        lead.notes.begin(),
        launcher ? fmt::format("pid {} is a launcher ({}) with {} ranks: each rank is judged on "
                               "its own; this is the first",
                               b.job().main, b.job().comm, report.parts.size())
                 : fmt::format("the job has {} ranks (started by a launcher outside its group): "
                               "each rank is judged on its own; this is the first",
                               report.parts.size()));
    report.ranks = compare_ranks(report.parts);
    report.doc["ranks"] = std::move(all);
    report.doc["launcher"] =
        launcher ? nlohmann::json{{"pid", b.job().main}, {"cmdline", b.job().cmdline}}
                 : nlohmann::json(nullptr);
    report.doc["straggler"] = report.ranks->doc;
    report.doc["ranks_compared"] = report.ranks->text;
  }
  report.doc["notes"] = report.parts.front().notes;
  report.job_errors = request.job_errors;
  report.doc["job_errors"] = request.job_errors;
  const auto* failed = leading_error(request.job_errors);
  report.doc["failed"] = failed != nullptr ? *failed : nlohmann::json(nullptr);
  for (const auto& [k, v] : request.extra.items()) report.doc[k] = v;
  if (!request.save_to.empty()) {
    auto& notes = report.parts.front().notes;
    if (auto ok = store::add_document(request.save_to, "profile", report.doc); !ok)
      notes.push_back("the verdict could not be saved in the recording: " + ok.error().message());
    else
      notes.push_back("the verdict is saved in " + request.save_to + " (dltune report shows it)");
  }
  return report;
}

std::string render_text(const ProfileReport& report) {
  std::string out;
  if (const auto* failed = leading_error(report.job_errors)) {
    std::string where;
    if (failed->contains("rank") && failed->at("rank").is_number_integer())
      where = fmt::format(" (rank {})", failed->at("rank").get<int>());
    out += fmt::format("FAILED: {}{}: {}\n", launch::output_event_name(failed->value("kind", "")),
                       where, failed->value("text", ""));
    if (const auto why = failed->value("explanation", ""); !why.empty())
      out += fmt::format("  {}\n", why);
    if (failed->contains("actions") && failed->at("actions").is_array())
      for (const auto& a : failed->at("actions"))
        if (a.is_string()) out += fmt::format("  action: {}\n", a.get<std::string>());
    for (const auto& e : report.job_errors)
      if (&e != failed && e.is_object())
        out += fmt::format("also: {}: {}\n", launch::output_event_name(e.value("kind", "")),
                           e.value("text", ""));
    out += report.parts.empty() ? "(the job ended too soon for its OS signals to be judged)\n"
                                : "\nWhat the OS signals showed before it:\n";
  }
  if (report.ranks) {
    const auto& r = *report.ranks;
    if (r.straggler)
      out += fmt::format("STRAGGLER: {}\n  cause: {}\n  action: {}\n\n", r.text, r.cause, r.action);
    else
      out += fmt::format("Ranks: {}\n\n", r.text);
  }
  for (std::size_t i = 0; i < report.parts.size(); ++i) {
    const auto& p = report.parts[i];
    if (i > 0) out += "\n";
    out += render_text(p.profile, p.job, p.source, p.notes);
  }
  return out;
}

ProfileResult<RecordedJob> read_recorded_job(const std::string& path) {
  auto rec = store::Recording::open(path);
  if (!rec) return refused(rec.error());
  RecordedJob job;
  // The main thread's Python stacks per interval, by the sample that ends each interval.
  std::optional<store::PythonStacks> stacks;
  if (auto doc = (*rec)->document("python_stacks"); doc && *doc) {
    auto parsed = store::PythonStacks::from_json(**doc);
    if (parsed)
      stacks = std::move(*parsed);
    else
      job.notes.push_back("the recording's Python stacks could not be read: " +
                          parsed.error().message());
  }
  std::map<std::int64_t, PyTally> tallies;
  const auto& table = builtin_py_activities();
  if (stacks && table) {
    StackActivities names(*table);
    for (const auto& iv : stacks->intervals)
      tallies.emplace(iv.wall_ns, names.tally(iv, [&](int id) { return stacks->frames_of(id); }));
    job.python = summary_of(*stacks, *table);
  }
  // Each rank's under a launcher, by rank, by the sample that ends each interval.
  std::map<pid_t, std::map<std::int64_t, PyTally>> rank_tallies;
  if (auto list = (*rec)->document(store::kRankStacksList);
      list && *list && table && (*list)->is_array()) {
    for (const auto& v : **list) {
      if (!v.is_number_integer()) continue;
      const auto pid = v.get<pid_t>();
      auto doc = (*rec)->document(store::rank_stacks_key(pid));
      if (!doc || !*doc) continue;
      auto parsed = store::PythonStacks::from_json(**doc);
      if (!parsed) {
        job.notes.push_back(
            fmt::format("the recording's Python stacks of rank pid {} could not "
                        "be read: {}",
                        pid, parsed.error().message()));
        continue;
      }
      StackActivities names(*table);
      auto& mine = rank_tallies[pid];
      for (const auto& iv : parsed->intervals)
        mine.emplace(iv.wall_ns, names.tally(iv, [&](int id) { return parsed->frames_of(id); }));
      job.python_ranks.emplace_back(pid, summary_of(*parsed, *table));
    }
  }
  // Under a launcher the ranks' stacks are the job's, not the launcher's own.
  if (!job.python_ranks.empty() && stacks &&
      std::none_of(job.python_ranks.begin(), job.python_ranks.end(),
                   [&](const auto& r) { return r.first == stacks->pid; }))
    job.python.reset();
  auto walked = (*rec)->for_each(0, (*rec)->size(), [&](std::size_t, monitor::Sample&& s) {
    const auto it = tallies.find(s.wall_ns);
    std::map<pid_t, PyTally> ranks_now;
    for (const auto& [pid, by_wall] : rank_tallies)
      if (const auto t = by_wall.find(s.wall_ns); t != by_wall.end())
        ranks_now.emplace(pid, t->second);
    job.windows.add(std::move(s), it == tallies.end() ? nullptr : &it->second,
                    ranks_now.empty() ? nullptr : &ranks_now);
    return Result<void>{};
  });
  if (!walked) return tl::unexpected(Failure{false, walked.error()});
  const auto& info = (*rec)->info();
  job.launched = !info.command.empty() || info.scope.rfind("run ", 0) == 0;
  if (auto events = (*rec)->document("events"); events && *events && (*events)->is_array())
    for (const auto& e : **events)
      if (e.is_object() && e.value("source", "") == store::kJobOutputSource)
        job.job_errors.push_back(e);
  return job;
}

ProfileResult<LiveJob> sample_live(const host::Root& root, const LiveRequest& request) {
  const bool group = !request.cgroup.empty();
  if (!group && ::kill(request.pid, 0) != 0 && errno == ESRCH)
    return failure(true, fmt::format("--pid {}: no such process", request.pid));
  if (request.duration_ns < request.interval_ns * 2)
    return failure(true, fmt::format("--duration {}: too short (at least two intervals, {})",
                                     text::format_duration_ns(request.duration_ns),
                                     text::format_duration_ns(request.interval_ns * 2)));
  auto options = request.sampler;
  options.scope = group ? monitor::Scope{monitor::Scope::Kind::kCgroup, 0, request.cgroup}
                        : monitor::Scope{monitor::Scope::Kind::kTree, request.pid, {}};
  auto sampler = monitor::Sampler::open(root, options);
  if (!sampler) return refused(sampler.error());
  if (request.on_start) request.on_start();
  LiveJob live;
  // SIGINT, SIGTERM and SIGHUP end the sampling early (synchronously, through sigtimedwait).
  sigset_t stop, old;
  ::sigemptyset(&stop);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&stop, s);
  ::pthread_sigmask(SIG_BLOCK, &stop, &old);
  // The main process's Python stacks, on a thread of its own (started with the signals above
  // blocked, so that they still come to sigtimedwait here).
  std::unique_ptr<PyMainSampler> py;
  if (!group && request.python_interval_ns > 0) {
    auto started = PyMainSampler::start(root, request.pid, request.python_interval_ns);
    if (started)
      py = std::move(*started);
    else
      live.notes.push_back(fmt::format("no Python stacks: {}; judged on the system's signals alone",
                                       started.error().message()));
  }
  std::vector<std::pair<pid_t, std::unique_ptr<PyMainSampler>>> workers;
  // Each rank's main thread under a launcher (the ranks the gate lets in).
  std::map<pid_t, std::unique_ptr<PyMainSampler>> rank_py;
  store::RankStackGate rank_gate;
  const auto start = now_ns(CLOCK_MONOTONIC);
  bool interrupted = false;
  int gone = 0;
  for (std::int64_t next = start;;) {
    monitor::Sample s;
    if (auto ok = (*sampler)->sample(s); !ok) {
      ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
      return tl::unexpected(Failure{false, ok.error()});
    }
    // A zombie main process has ended: its parent just has not reaped it yet.
    const bool has_main =
        (!group || s.cgroup) &&
        std::any_of(s.processes.begin(), s.processes.end(), [](const auto& p) {
          return p.role == monitor::Role::kMain && p.state != 'Z' && p.state != 'X';
        });
    // A sample of the DataLoader workers too (the first kPyWorkers seen), at a lower rate: where
    // their time goes, beside the main thread's.
    if (py && workers.size() < kPyWorkers)
      for (const auto& p : s.processes)
        if (p.role == monitor::Role::kWorker && p.state != 'Z' && workers.size() < kPyWorkers &&
            std::none_of(workers.begin(), workers.end(),
                         [&](const auto& w) { return w.first == p.pid; }))
          if (auto w = PyMainSampler::start(root, p.pid, kPyWorkerIntervalNs))
            workers.emplace_back(p.pid, std::move(*w));
    std::map<pid_t, PyTally> rank_tallies;
    if (request.python_interval_ns > 0) {
      const auto ranks = ranks_of(s);
      const auto every =
          store::RankStackGate::interval_ns(request.python_interval_ns, ranks.size());
      for (const pid_t r : rank_gate.to_attach(ranks, rank_py.size())) {
        auto started = PyMainSampler::start(root, r, every);
        if (started)
          rank_py.emplace(r, std::move(*started));
        else if (!pystack::not_python(started.error()))  // not Python: nothing to say
          live.notes.push_back(
              fmt::format("no Python stacks of rank pid {}: {}", r, started.error().message()));
      }
      for (auto& [r, sampler] : rank_py) rank_tallies.emplace(r, sampler->take(s.wall_ns));
    }
    const auto* ranks_py = rank_tallies.empty() ? nullptr : &rank_tallies;
    if (py) {
      const auto tally = py->take(s.wall_ns);
      live.windows.add(std::move(s), &tally, ranks_py);
    } else {
      live.windows.add(std::move(s), nullptr, ranks_py);
    }
    for (auto& n : (*sampler)->take_notices()) live.notes.push_back(std::move(n));
    gone = has_main ? 0 : gone + 1;
    if (gone >= 2 || (live.windows.job().job().main == 0 && gone >= 1)) break;  // the job ended
    next += request.interval_ns;
    const auto now = now_ns(CLOCK_MONOTONIC);
    if (now - start >= request.duration_ns) break;
    if (next > now) {
      timespec ts{static_cast<time_t>((next - now) / kSecond),
                  static_cast<long>((next - now) % kSecond)};
      if (::sigtimedwait(&stop, nullptr, &ts) > 0) {
        interrupted = true;
        break;
      }
    } else {
      next = now;  // late: do not make up for it with a burst
    }
  }
  // A signal that came while a sample was taken is still pending: taken here, not left to
  // kill the process before it says anything.
  for (timespec zero{}; ::sigtimedwait(&stop, nullptr, &zero) > 0;) interrupted = true;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (interrupted) live.notes.push_back("stopped early by a signal: judged on what was seen");
  for (auto& [pid, w] : workers) {
    w->stop();
    auto summary = w->summary(3);
    if (summary.samples > 0) live.python_workers.emplace_back(pid, std::move(summary));
  }
  for (auto& [pid, r] : rank_py) {
    r->stop();
    auto summary = r->summary();
    if (summary.samples > 0)
      live.python_ranks.emplace_back(pid, std::move(summary));
    else
      live.notes.push_back(fmt::format("no Python stack of rank pid {} could be read ({})", pid,
                                       summary.last_error));
  }
  if (py) {
    py->stop();
    live.python = py->summary();
    // Under a launcher the ranks' stacks are the job's; the launcher's own (waiting for its
    // children) say nothing of the training.
    if (!rank_py.empty() && rank_py.count(request.pid) == 0)
      live.python.reset();
    else if (live.python->samples == 0)
      live.notes.push_back(fmt::format("no Python stack of the main thread could be read ({})",
                                       live.python->last_error));
  }
  if (live.windows.job().job().main == 0)
    return failure(
        false,
        group ? fmt::format("the job's group {} has no process to judge", request.cgroup)
              : fmt::format("--pid {}: the process ended before it could be sampled", request.pid));
  live.seconds = static_cast<double>(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
  return live;
}

nlohmann::json python_json(const PySummary& summary, const PyActivities& activities) {
  nlohmann::json j;
  j["interpreter"] = summary.interpreter;
  j["samples"] = summary.samples;
  j["skipped"] = summary.skipped;
  nlohmann::json shares = nlohmann::json::object();
  for (std::size_t i = 0; i < summary.by_activity.size(); ++i) {
    const std::string id = i < activities.list.size() ? activities.list[i].id : "other";
    shares[id] = summary.samples == 0 ? 0.0
                                      : static_cast<double>(summary.by_activity[i]) /
                                            static_cast<double>(summary.samples);
  }
  j["activities"] = shares;
  nlohmann::json top = nlohmann::json::array();
  for (const auto& [stack, count] : summary.top_stacks)
    top.push_back({{"stack", stack}, {"samples", count}});
  j["top_stacks"] = top;
  return j;
}

}  // namespace dltune::diagnose
