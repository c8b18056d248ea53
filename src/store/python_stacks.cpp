// A job's main-thread Python stacks per interval (store/python_stacks.hpp).
#include "store/python_stacks.hpp"

#include <signal.h>
#include <time.h>

#include <algorithm>

#include <fmt/core.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "host/parse/process.hpp"
#include "pystack/render.hpp"
#include "store/recording.hpp"

namespace dltune::store {

std::string rank_stacks_key(pid_t pid) {
  return fmt::format("python_stacks/{}", pid);
}

std::vector<pid_t> RankStackGate::to_attach(const std::vector<pid_t>& ranks, std::size_t attached) {
  std::vector<pid_t> out;
  for (const pid_t r : ranks) {
    if (attached + out.size() >= kRankStacks) break;
    if (tried_.count(r) != 0 || seen_.insert(r).second) continue;  // tried, or seen first now
    tried_.insert(r);
    out.push_back(r);
  }
  return out;
}

std::int64_t RankStackGate::interval_ns(std::int64_t base_ns, std::size_t ranks) {
  return base_ns * static_cast<std::int64_t>(std::clamp<std::size_t>(ranks, 2, kRankStacks));
}

namespace {

void add_to(std::vector<std::uint64_t>& totals, int stack, std::uint64_t n) {
  const std::size_t i = stack < 0 ? totals.size() - 1 : static_cast<std::size_t>(stack);
  if (i < totals.size()) totals[i] += n;
}

}  // namespace

std::string collapsed(const std::vector<pystack::Frame>& frames) {
  std::string out;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (!out.empty()) out += ';';
    out += fmt::format("{}:{}", text::base_name(it->file), it->function);
  }
  return out;
}

std::vector<pystack::Frame> PythonStacks::frames_of(int stack) const {
  std::vector<pystack::Frame> out;
  if (stack < 0 || static_cast<std::size_t>(stack) >= stacks.size()) return out;
  for (const int f : stacks[static_cast<std::size_t>(stack)])
    if (f >= 0 && static_cast<std::size_t>(f) < frames.size())
      out.push_back(frames[static_cast<std::size_t>(f)]);
  return out;
}

nlohmann::json PythonStacks::to_json() const {
  nlohmann::json j;
  j["schema"] = "dltune.python_stacks/1";
  j["interpreter"] = interpreter;
  j["pid"] = pid;
  j["sample_interval_ns"] = sample_interval_ns;
  j["samples"] = samples;
  j["skipped"] = skipped;
  if (!last_error.empty()) j["last_error"] = last_error;
  j["intervals_truncated"] = intervals_truncated;
  auto& fr = j["frames"] = nlohmann::json::array();
  for (const auto& f : frames) fr.push_back({f.file, f.function});
  j["stacks"] = stacks;
  j["totals"] = totals;
  auto& iv = j["intervals"] = nlohmann::json::array();
  for (const auto& i : intervals) {
    nlohmann::json counts = nlohmann::json::array();
    for (const auto& c : i.counts) counts.push_back({c.stack, c.running, c.waiting});
    iv.push_back({{"wall_ns", i.wall_ns}, {"counts", std::move(counts)}});
  }
  return j;
}

Result<PythonStacks> PythonStacks::from_json(const nlohmann::json& j) {
  const auto bad = [](const std::string& key) {
    return tl::unexpected(Error{"python_stacks: unexpected " + key, "", 0});
  };
  PythonStacks p;
  try {
    if (j.value("schema", "") != "dltune.python_stacks/1") return bad("schema");
    p.interpreter = j.value("interpreter", "");
    p.pid = j.value("pid", 0);
    p.sample_interval_ns = j.value("sample_interval_ns", std::int64_t{0});
    p.samples = j.value("samples", std::uint64_t{0});
    p.skipped = j.value("skipped", std::uint64_t{0});
    p.last_error = j.value("last_error", "");
    p.intervals_truncated = j.value("intervals_truncated", false);
    for (const auto& f : j.at("frames")) {
      pystack::Frame fr;
      fr.file = f.at(0).get<std::string>();
      fr.function = f.at(1).get<std::string>();
      p.frames.push_back(std::move(fr));
    }
    p.stacks = j.at("stacks").get<std::vector<std::vector<int>>>();
    for (const auto& s : p.stacks)
      for (const int f : s)
        if (f < 0 || static_cast<std::size_t>(f) >= p.frames.size()) return bad("frame index");
    p.totals = j.at("totals").get<std::vector<std::uint64_t>>();
    if (p.totals.size() != p.stacks.size() + 1) return bad("totals");
    for (const auto& i : j.at("intervals")) {
      StackInterval si;
      si.wall_ns = i.at("wall_ns").get<std::int64_t>();
      for (const auto& c : i.at("counts")) {
        StackCount sc;
        sc.stack = c.at(0).get<int>();
        if (sc.stack != kOtherStacks &&
            (sc.stack < 0 || static_cast<std::size_t>(sc.stack) >= p.stacks.size()))
          return bad("stack index");
        sc.running = c.at(1).get<std::uint32_t>();
        sc.waiting = c.at(2).get<std::uint32_t>();
        si.counts.push_back(sc);
      }
      p.intervals.push_back(std::move(si));
    }
  } catch (const nlohmann::json::exception& e) {
    return tl::unexpected(Error{fmt::format("python_stacks: {}", e.what()), "", 0});
  }
  return p;
}

Result<std::unique_ptr<PythonStackLog>> PythonStackLog::start(const host::Root& root, pid_t pid,
                                                              std::int64_t sample_interval_ns) {
  auto process = pystack::PythonProcess::attach(root, pid);
  if (!process) return tl::unexpected(process.error());
  return std::unique_ptr<PythonStackLog>(new PythonStackLog(
      std::move(*process), root, std::max<std::int64_t>(sample_interval_ns, 1'000'000)));
}

PythonStackLog::PythonStackLog(pystack::PythonProcess process, host::Root root,
                               std::int64_t interval_ns)
    : process_(std::move(process)), root_(std::move(root)), interval_ns_(interval_ns) {
  data_.interpreter = "CPython " + pystack::version_text(process_.interpreter());
  data_.pid = process_.pid();
  data_.sample_interval_ns = interval_ns;
  data_.totals.assign(1, 0);  // "other" only, until stacks come
  thread_ = std::thread([this] { run(); });
}

PythonStackLog::~PythonStackLog() {
  stop();
}

void PythonStackLog::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

int PythonStackLog::intern(const std::vector<pystack::Frame>& frames) {
  std::vector<int> ids;
  ids.reserve(frames.size());
  for (const auto& f : frames) {
    auto key = std::make_pair(f.file, f.function);
    auto it = frame_ids_.find(key);
    if (it == frame_ids_.end()) {
      pystack::Frame kept;
      kept.file = f.file;
      kept.function = f.function;
      data_.frames.push_back(std::move(kept));
      it = frame_ids_.emplace(std::move(key), static_cast<int>(data_.frames.size() - 1)).first;
    }
    ids.push_back(it->second);
  }
  if (auto it = stack_ids_.find(ids); it != stack_ids_.end()) return it->second;
  if (data_.stacks.size() >= kMaxStacks) return kOtherStacks;
  data_.stacks.push_back(ids);
  data_.totals.insert(data_.totals.end() - 1, 0);  // before "other", which stays last
  const int id = static_cast<int>(data_.stacks.size() - 1);
  stack_ids_.emplace(std::move(ids), id);
  return id;
}

StackInterval PythonStackLog::close_interval(std::int64_t wall_ns) {
  std::lock_guard lock(mutex_);
  StackInterval out;
  out.wall_ns = wall_ns;
  for (const auto& [id, c] : current_) out.counts.push_back(c);
  current_.clear();
  // The most frequent first; beyond kMaxPerInterval, folded into "other".
  std::sort(out.counts.begin(), out.counts.end(), [](const StackCount& a, const StackCount& b) {
    return a.running + a.waiting > b.running + b.waiting;
  });
  if (out.counts.size() > kMaxPerInterval) {
    StackCount other;
    for (std::size_t i = kMaxPerInterval - 1; i < out.counts.size(); ++i) {
      other.running += out.counts[i].running;
      other.waiting += out.counts[i].waiting;
    }
    out.counts.resize(kMaxPerInterval - 1);
    out.counts.push_back(other);
  }
  if (data_.intervals.size() < kMaxIntervals)
    data_.intervals.push_back(out);
  else
    data_.intervals_truncated = true;
  return out;
}

PythonStacks PythonStackLog::snapshot() const {
  std::lock_guard lock(mutex_);
  return data_;
}

std::vector<pystack::Frame> PythonStackLog::frames_of(int stack) const {
  std::lock_guard lock(mutex_);
  return data_.frames_of(stack);
}

void PythonStackLog::run() {
  // Signals are the command's to take (sigtimedwait in its thread), never this thread's.
  sigset_t all;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_BLOCK, &all, nullptr);
  const pid_t pid = process_.pid();
  host::OpenFile stat;
  if (auto o = root_.open(fmt::format("/proc/{}/task/{}/stat", pid, pid)); o && *o)
    stat = std::move(**o);
  std::string buf;
  timespec next{};
  ::clock_gettime(CLOCK_MONOTONIC, &next);
  while (!stop_) {
    // The thread's state first, then its stack: the two reads are microseconds apart, its state
    // changes over milliseconds.
    bool on_cpu = false, gone = false;
    if (stat.is_open()) {
      auto text = stat.read(buf);
      if (text && *text) {
        const auto st = host::parse::parse_proc_stat(**text);
        on_cpu = st && st->state == 'R';
      } else {
        gone = text && !*text;
      }
    }
    Result<std::vector<pystack::ThreadStack>> threads =
        gone ? Result<std::vector<pystack::ThreadStack>>(
                   tl::unexpected(Error{fmt::format("process {} exited", pid), "", 0}))
             : process_.sample();
    {
      std::lock_guard lock(mutex_);
      const pystack::ThreadStack* main = nullptr;
      if (threads)
        for (const auto& t : *threads)
          if (t.native_id == static_cast<std::uint64_t>(pid)) main = &t;
      if (!threads || main == nullptr) {
        ++data_.skipped;
        data_.last_error =
            threads ? "the main thread had no Python frame state" : threads.error().message();
      } else {
        const int id = intern(main->frames);
        auto& c = current_[id];
        c.stack = id;
        (on_cpu ? c.running : c.waiting) += 1;
        add_to(data_.totals, id, 1);
        ++data_.samples;
      }
    }
    if (gone) break;
    next.tv_nsec += interval_ns_ % 1'000'000'000;
    next.tv_sec += interval_ns_ / 1'000'000'000 + next.tv_nsec / 1'000'000'000;
    next.tv_nsec %= 1'000'000'000;
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
      next = now;  // behind (a slow read): no burst to catch up
    while (!stop_ && ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {
    }
  }
}

pystack::StackCounts PythonStacks::counts() const {
  pystack::StackCounts out;
  const auto tid = static_cast<std::uint64_t>(pid);
  for (std::size_t id = 0; id < totals.size(); ++id) {
    if (id + 1 == totals.size()) {  // the stacks not kept one by one
      pystack::Frame f;
      f.function = "(other stacks)";
      out.add_counted(tid, {f}, totals[id]);
    } else {
      out.add_counted(tid, frames_of(static_cast<int>(id)), totals[id]);
    }
  }
  return out;
}

std::string PythonStacks::summary_text() const {
  return fmt::format("{} samples of pid {}'s main thread ({}, every {} ms)", samples, pid,
                     interpreter, sample_interval_ns / 1'000'000);
}

Result<PythonStacks> PythonStacks::from_recording(const Recording& rec, const std::string& path) {
  auto doc = rec.document("python_stacks");
  if (!doc) return tl::unexpected(doc.error());
  if (!*doc)
    return fail(path +
                " kept no Python stacks (recorded without a Python job, or with "
                "--no-stacks)");
  auto stacks = from_json(**doc);
  if (!stacks) return fail(fmt::format("{}: {}", path, stacks.error().message()));
  return stacks;
}

}  // namespace dltune::store
