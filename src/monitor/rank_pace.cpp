// The straggler rank of a synchronous job (monitor/rank_pace.hpp).
#include "monitor/rank_pace.hpp"

#include <algorithm>

#include <fmt/core.h>

#include "monitor/roles.hpp"

namespace dltune::monitor {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<FarAbove> far_above(const std::vector<double>& values, double least, double factor,
                                  double gap) {
  if (values.size() < 2) return std::nullopt;
  const auto top =
      static_cast<std::size_t>(std::max_element(values.begin(), values.end()) - values.begin());
  std::vector<double> others;
  for (std::size_t i = 0; i < values.size(); ++i)
    if (i != top) others.push_back(values[i]);
  const double m = median(std::move(others));
  const double v = values[top];
  if (v >= least && v >= factor * m && v - m >= gap) return FarAbove{top, m};
  return std::nullopt;
}

std::optional<FarAbove> far_above_in_wait(const std::vector<double>& run_queue) {
  return far_above(run_queue, kStragglerWaitPct, kStragglerFactor, kStragglerWaitGapPts);
}

std::string rank_label(pid_t pid, std::optional<int> rank) {
  return rank ? fmt::format("rank {} (pid {})", *rank, pid) : fmt::format("pid {}", pid);
}

std::vector<const ProcessModel*> ranks_in(const Model& m) {
  std::vector<const ProcessModel*> ranks;
  const ProcessModel* main = nullptr;
  for (const auto& p : m.processes) {
    if (p.state == 'Z' || p.state == 'X') continue;
    if (p.role == Role::kRank) ranks.push_back(&p);
    if (p.role == Role::kMain) main = &p;
  }
  if (!ranks.empty() && main != nullptr && !is_rank_launcher(main->cmdline))
    ranks.insert(ranks.begin(), main);
  return ranks;
}

void RankWatch::add(const Model& m) {
  const auto ranks = ranks_in(m);
  if (ranks.size() < 2) {
    intervals_.clear();  // not (or no longer) a job of ranks
    return;
  }
  if (m.interval_s <= 0) return;
  Interval in;
  in.wall_ns = m.wall_ns;
  in.seconds = m.interval_s;
  for (const auto* p : ranks) {
    if (!p->has_rates) continue;
    in.ranks[p->pid] = Seen{p->rank, p->on_cpu_pct, p->run_queue_pct, p->state == 'S'};
  }
  intervals_.push_back(std::move(in));
  // Keep the intervals that end within window_s of this one.
  const auto window_ns = static_cast<std::int64_t>(window_s_ * 1e9);
  while (intervals_.size() > 1 && m.wall_ns - intervals_.front().wall_ns >= window_ns)
    intervals_.pop_front();
}

std::optional<Straggler> RankWatch::straggler() const {
  if (intervals_.empty()) return std::nullopt;
  struct Sum {
    std::optional<int> rank;
    double seconds = 0, on_cpu = 0, run_queue = 0;  // pct x seconds
    std::size_t intervals = 0, asleep = 0;
    bool measured = true;
  };
  std::map<pid_t, Sum> sums;
  for (const auto& [pid, seen] : intervals_.back().ranks) sums[pid].rank = seen.rank;
  if (sums.size() < 2) return std::nullopt;
  for (const auto& in : intervals_)
    for (const auto& [pid, seen] : in.ranks) {
      auto it = sums.find(pid);
      if (it == sums.end()) continue;  // a rank that has ended
      auto& s = it->second;
      ++s.intervals;
      s.seconds += in.seconds;
      if (seen.asleep) ++s.asleep;
      if (seen.on_cpu_pct && seen.run_queue_pct) {
        s.on_cpu += *seen.on_cpu_pct * in.seconds;
        s.run_queue += *seen.run_queue_pct * in.seconds;
      } else {
        s.measured = false;
      }
    }
  std::vector<pid_t> pids;
  std::vector<double> on_cpu, run_queue, asleep;
  for (const auto& [pid, s] : sums) {
    if (!s.measured || s.intervals < 3 || s.seconds < 3) return std::nullopt;
    pids.push_back(pid);
    on_cpu.push_back(s.on_cpu / s.seconds);
    run_queue.push_back(s.run_queue / s.seconds);
    asleep.push_back(static_cast<double>(s.asleep) / static_cast<double>(s.intervals));
  }
  auto top = far_above(on_cpu);
  const bool by_wait = !top;
  if (!top) top = far_above_in_wait(run_queue);
  if (!top) return std::nullopt;
  std::vector<double> others_asleep;
  for (std::size_t i = 0; i < pids.size(); ++i)
    if (i != top->index) others_asleep.push_back(asleep[i]);
  const double waiting = median(std::move(others_asleep));
  const bool starved = by_wait && starved_of_cpu(run_queue[top->index], on_cpu[top->index]);
  if (waiting < kStragglerOthersAsleep && !starved) return std::nullopt;
  Straggler out;
  out.pid = pids[top->index];
  out.rank = sums.at(out.pid).rank;
  out.on_cpu_pct = on_cpu[top->index];
  out.run_queue_pct = run_queue[top->index];
  std::vector<double> others_on_cpu, others_run_queue;
  for (std::size_t i = 0; i < pids.size(); ++i)
    if (i != top->index) {
      others_on_cpu.push_back(on_cpu[i]);
      others_run_queue.push_back(run_queue[i]);
    }
  out.others_on_cpu_pct = median(std::move(others_on_cpu));
  out.others_run_queue_pct = median(std::move(others_run_queue));
  out.others_asleep = waiting;
  out.by_wait = by_wait;
  const double seconds = std::min(window_s_, sums.at(out.pid).seconds);
  out.text =
      by_wait
          ? fmt::format(
                "straggler: {} holds the job back: its main thread waits for a CPU {:.0f}% of "
                "the last {:.0f} s (the other ranks' {:.0f}%), a CPU shared with another load, "
                "while the others are asleep {:.0f}% of the time (waiting for it in the "
                "collective); dltune profile says why",
                rank_label(out.pid, out.rank), out.run_queue_pct, seconds, out.others_run_queue_pct,
                waiting * 100)
          : fmt::format(
                "straggler: {} holds the job back: its main thread on a CPU {:.0f}% of the last "
                "{:.0f} s, the other ranks' {:.0f}% and asleep {:.0f}% of the time (waiting for "
                "it in the collective); dltune profile says why",
                rank_label(out.pid, out.rank), out.on_cpu_pct, seconds, out.others_on_cpu_pct,
                waiting * 100);
  return out;
}

}  // namespace dltune::monitor
