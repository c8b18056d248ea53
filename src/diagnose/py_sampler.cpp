// The main thread's Python stacks for `profile` (diagnose/py_sampler.hpp).
#include "diagnose/py_sampler.hpp"

#include <algorithm>

namespace dltune::diagnose {

std::size_t StackActivities::of(int id, const std::vector<pystack::Frame>& frames) {
  if (id == store::kOtherStacks) return a_->list.size();
  if (auto it = cache_.find(id); it != cache_.end()) return it->second;
  const auto act = classify(*a_, frames);
  cache_.emplace(id, act);
  return act;
}

PySummary summary_of(const store::PythonStacks& stacks, const PyActivities& a, std::size_t top) {
  PySummary s;
  s.interpreter = stacks.interpreter;
  s.samples = stacks.samples;
  s.skipped = stacks.skipped;
  s.last_error = stacks.last_error;
  s.by_activity.assign(a.list.size() + 1, 0);
  std::vector<std::pair<std::string, std::size_t>> all;
  for (std::size_t id = 0; id < stacks.totals.size(); ++id) {
    const auto n = static_cast<std::size_t>(stacks.totals[id]);
    if (n == 0) continue;
    const bool other = id + 1 == stacks.totals.size();  // the last: the stacks not kept
    const auto frames =
        other ? std::vector<pystack::Frame>() : stacks.frames_of(static_cast<int>(id));
    s.by_activity[other ? a.list.size() : classify(a, frames)] += n;
    auto key = other ? std::string("(other stacks)") : store::collapsed(frames);
    if (key.empty()) key = "(no Python frame)";
    all.emplace_back(std::move(key), n);
  }
  std::sort(all.begin(), all.end(),
            [](const auto& x, const auto& y) { return x.second > y.second; });
  if (all.size() > top) all.resize(top);
  s.top_stacks = std::move(all);
  return s;
}

Result<std::unique_ptr<PyMainSampler>> PyMainSampler::start(const host::Root& root, pid_t pid,
                                                            std::int64_t interval_ns) {
  const auto& table = builtin_py_activities();
  if (!table) return tl::unexpected(table.error());
  auto log = store::PythonStackLog::start(root, pid, interval_ns);
  if (!log) return tl::unexpected(log.error());
  return std::unique_ptr<PyMainSampler>(new PyMainSampler(std::move(*log), *table));
}

PyTally PyMainSampler::take(std::int64_t wall_ns) {
  const auto iv = log_->close_interval(wall_ns);
  return names_.tally(iv, [this](int id) { return log_->frames_of(id); });
}

PySummary PyMainSampler::summary(std::size_t top) const {
  return summary_of(log_->snapshot(), *activities_, top);
}

}  // namespace dltune::diagnose
