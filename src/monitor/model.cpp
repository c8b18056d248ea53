// Model::from: the parts in order (model_system.cpp, model_process.cpp).
#include "monitor/model.hpp"

namespace dltune::monitor {

Model Model::from(const Sample& now, const Sample* previous) {
  double dt = 0;
  if (previous != nullptr && now.monotonic_ns > previous->monotonic_ns)
    dt = static_cast<double>(now.monotonic_ns - previous->monotonic_ns) / 1e9;
  return from(now, previous, dt);
}

Model Model::from(const Sample& now, const Sample* previous, double dt_s) {
  Model m;
  m.wall_ns = now.wall_ns;
  // A previous sample that is not before this one (or no dt) gives no rates, never negative ones.
  if (previous == nullptr || dt_s <= 0) previous = nullptr;
  m.interval_s = previous != nullptr ? dt_s : 0;
  m.has_rates = previous != nullptr;
  model_system(now, previous, m.interval_s, m);
  model_cgroup(now, previous, m.interval_s, m);
  model_processes(now, previous, m.interval_s, m);
  // A group without CPU accounting of its own: its processes' CPU, which are all sampled with
  // it (a Slurm job's group on cgroup v1 is in no cpuacct hierarchy).
  if (m.cgroup && !m.cgroup->cpu_pct && m.has_rates && now.cgroup && !now.cgroup->cpu_usage_us) {
    double sum = 0;
    for (const auto& p : m.processes) sum += p.cpu_pct;
    m.cgroup->cpu_pct = sum;
    m.cgroup->cpu_from_processes = true;
  }
  model_gpus(now, previous, m.interval_s, m);
  return m;
}

}  // namespace dltune::monitor
