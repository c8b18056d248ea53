// The main thread's Python stacks during a live profile (diagnose/py_sampler.hpp).
#include "diagnose/py_sampler.hpp"

#include <time.h>

#include <algorithm>

#include <fmt/format.h>

namespace dltune::diagnose {

namespace {

// The state letter of /proc/PID/stat's text ("1234 (python3) R ..."): after the last ')'.
char state_of(std::string_view stat) {
  const auto close = stat.rfind(')');
  if (close == std::string_view::npos) return '?';
  for (std::size_t i = close + 1; i < stat.size(); ++i)
    if (stat[i] != ' ') return stat[i];
  return '?';
}

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Collapsed stacks kept: the distinct stacks beyond this are counted under "(other stacks)", so
// that a job whose stacks never repeat keeps bounded memory.
constexpr std::size_t kMaxDistinctStacks = 4096;

}  // namespace

std::string collapsed(const std::vector<pystack::Frame>& frames) {
  std::string out;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (!out.empty()) out += ';';
    out += fmt::format("{}:{}", base_name(it->file), it->function);
  }
  return out;
}

Result<std::unique_ptr<PyMainSampler>> PyMainSampler::start(const host::Root& root, pid_t pid,
                                                            std::int64_t interval_ns) {
  const auto& table = builtin_py_activities();
  if (!table) return tl::unexpected(table.error());
  auto process = pystack::PythonProcess::attach(root, pid);
  if (!process) return tl::unexpected(process.error());
  return std::unique_ptr<PyMainSampler>(new PyMainSampler(
      std::move(*process), *table, root, std::max<std::int64_t>(interval_ns, 1'000'000)));
}

PyMainSampler::PyMainSampler(pystack::PythonProcess process, const PyActivities& activities,
                             host::Root root, std::int64_t interval_ns)
    : process_(std::move(process)),
      activities_(&activities),
      root_(std::move(root)),
      interval_ns_(interval_ns),
      tally_(activities.list.size()) {
  const auto& i = process_.interpreter();
  totals_.interpreter = i.micro >= 0 ? fmt::format("CPython {}.{}.{}", i.major, i.minor, i.micro)
                                     : fmt::format("CPython {}.{}", i.major, i.minor);
  totals_.by_activity.assign(activities.list.size() + 1, 0);
  thread_ = std::thread([this] { run(); });
}

PyMainSampler::~PyMainSampler() {
  stop();
}

void PyMainSampler::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

PyTally PyMainSampler::take() {
  std::lock_guard lock(mutex_);
  PyTally out = tally_;
  tally_.clear();
  return out;
}

PyMainSampler::Summary PyMainSampler::summary(std::size_t top) const {
  std::lock_guard lock(mutex_);
  Summary s = totals_;
  s.top_stacks.assign(stacks_.begin(), stacks_.end());
  std::sort(s.top_stacks.begin(), s.top_stacks.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  if (s.top_stacks.size() > top) s.top_stacks.resize(top);
  return s;
}

void PyMainSampler::run() {
  const pid_t pid = process_.pid();
  const std::string stat_path = fmt::format("/proc/{}/task/{}/stat", pid, pid);
  host::OpenFile stat;
  if (auto o = root_.open(stat_path); o && *o) stat = std::move(**o);
  std::string buf;
  timespec next{};
  ::clock_gettime(CLOCK_MONOTONIC, &next);
  while (!stop_) {
    // The thread's state first, then its stack: a thread that was running when its state was
    // read is counted as on a CPU for the stack read just after (a sample's two reads are
    // microseconds apart; the thread's state changes over milliseconds).
    bool on_cpu = false;
    bool gone = false;
    if (stat.is_open()) {
      auto text = stat.read(buf);
      if (text && *text)
        on_cpu = state_of(**text) == 'R';
      else
        gone = text && !*text;
    }
    auto threads = gone ? Result<std::vector<pystack::ThreadStack>>(
                              tl::unexpected(Error{fmt::format("process {} exited", pid), "", 0}))
                        : process_.sample();
    {
      std::lock_guard lock(mutex_);
      const pystack::ThreadStack* main = nullptr;
      if (threads)
        for (const auto& t : *threads)
          if (t.native_id == static_cast<std::uint64_t>(pid)) main = &t;
      if (!threads || main == nullptr) {
        ++tally_.failed;
        ++totals_.skipped;
        totals_.last_error =
            threads ? "the main thread had no Python frame state" : threads.error().message();
      } else {
        const auto activity = classify(*activities_, main->frames);
        tally_.add(activity, on_cpu);
        ++totals_.samples;
        ++totals_.by_activity[std::min(activity, totals_.by_activity.size() - 1)];
        auto key = collapsed(main->frames);
        if (key.empty()) key = "(no Python frame)";
        if (stacks_.size() < kMaxDistinctStacks || stacks_.count(key) != 0)
          ++stacks_[key];
        else
          ++stacks_["(other stacks)"];
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

}  // namespace dltune::diagnose
