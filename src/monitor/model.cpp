// Model::from: the parts in order (model_system.cpp, model_process.cpp).
#include "monitor/model.hpp"

namespace dltune::monitor {

namespace {

// `m` as a new Model, but with the storage of its processes and CPUs kept (each part below fills
// what it uses of them).
void model_into(const Sample& now, const Sample* previous, double dt_s, const Model* before,
                Model& m) {
  auto processes = std::move(m.processes);
  auto cpus = std::move(m.cpus);
  m = Model{};
  m.processes = std::move(processes);
  m.cpus = std::move(cpus);
  m.wall_ns = now.wall_ns;
  // A previous sample that is not before this one (or no dt) gives no rates, never negative ones.
  if (previous == nullptr || dt_s <= 0) previous = nullptr;
  m.interval_s = previous != nullptr ? dt_s : 0;
  m.has_rates = previous != nullptr;
  model_system(now, previous, m.interval_s, m, previous != nullptr ? before : nullptr);
  model_cgroup(now, previous, m.interval_s, m);
  model_processes(now, previous, m.interval_s, m, previous != nullptr ? before : nullptr);
  // A group without CPU accounting of its own: its processes' CPU, which are all sampled with
  // it (a Slurm job's group on cgroup v1 is in no cpuacct hierarchy).
  if (m.cgroup && !m.cgroup->cpu_pct && m.has_rates && now.cgroup && !now.cgroup->cpu_usage_us) {
    double sum = 0;
    for (const auto& p : m.processes) sum += p.cpu_pct;
    m.cgroup->cpu_pct = sum;
    m.cgroup->cpu_from_processes = true;
  }
  model_gpus(now, previous, m.interval_s, m);
}

Model model_of(const Sample& now, const Sample* previous, double dt_s, const Model* before) {
  Model m;
  model_into(now, previous, dt_s, before, m);
  return m;
}

double dt_of(const Sample& now, const Sample* previous) {
  if (previous != nullptr && now.monotonic_ns > previous->monotonic_ns)
    return static_cast<double>(now.monotonic_ns - previous->monotonic_ns) / 1e9;
  return 0;
}

}  // namespace

Model Model::from(const Sample& now, const Sample* previous, double dt_s) {
  return model_of(now, previous, dt_s, nullptr);
}

Model Model::from(const Sample& now, const Sample* previous, const Model& before) {
  return model_of(now, previous, dt_of(now, previous), &before);
}

void Model::into(const Sample& now, const Sample* previous, const Model& before, Model& out) {
  model_into(now, previous, dt_of(now, previous), &before, out);
}

Model Model::from(const Sample& now, const Sample* previous) {
  return model_of(now, previous, dt_of(now, previous), nullptr);
}

}  // namespace dltune::monitor
