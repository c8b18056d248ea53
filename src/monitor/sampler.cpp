// Sampler: the collectors of one scope, and the clocks (sampler.hpp).
#include "monitor/sampler.hpp"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <utility>

#include "core/clock.hpp"

namespace dltune::monitor {

Sampler::~Sampler() = default;

Result<std::unique_ptr<Sampler>> Sampler::open(const host::Root& root, SamplerOptions options) {
  std::unique_ptr<Sampler> s(new Sampler());
  s->options_ = std::move(options);
  const SamplerOptions& o = s->options_;
  if (const long t = ::sysconf(_SC_CLK_TCK); t > 0)
    s->ticks_per_second_ = static_cast<std::uint64_t>(t);
  if (const long p = ::sysconf(_SC_PAGESIZE); p > 0) s->page_size_ = static_cast<std::uint64_t>(p);
  s->system_ = std::make_unique<SystemCollector>(root);
  s->system_->activity_every(o.host_activity_every);
  s->live_ = root.live();

  // The members of a kCgroup scope are the sampled group's (cgroup.procs): one group.
  if (o.scope.kind == Scope::Kind::kCgroup && o.cgroup && *o.cgroup != o.scope.cgroup)
    return fail("the cgroup sampled and the cgroup whose processes are sampled differ:",
                *o.cgroup + " and " + o.scope.cgroup);
  std::optional<std::string> group = o.cgroup;
  if (!group && o.scope.kind == Scope::Kind::kTree) {
    auto g = CgroupCollector::group_of(root, o.scope.pid);
    if (!g) return tl::unexpected(g.error());
    group = std::move(*g);
  }
  if (!group && o.scope.kind == Scope::Kind::kCgroup) group = o.scope.cgroup;
  if (group) {
    auto c = CgroupCollector::open(root, *group);
    if (!c) return tl::unexpected(c.error());
    if (o.scope.kind != Scope::Kind::kCgroup) c->count_every(o.group_count_every);
    s->cgroup_ = std::make_unique<CgroupCollector>(std::move(*c));
  }
  if (o.scope.kind != Scope::Kind::kNone)
    s->processes_ = std::make_unique<ProcessCollector>(root, o.scope, o.process_detail);
  if (o.gpus) s->gpus_ = std::make_unique<GpuCollector>(root, o.nvml_library, o.gpu_interval_ns);
  return s;
}

void Sampler::set_process_detail(ProcessDetail detail) {
  if (processes_) processes_->set_detail(detail);
  options_.process_detail = std::move(detail);
}

void Sampler::set_host_activity_every(unsigned n) {
  system_->activity_every(n);
  options_.host_activity_every = std::max(1u, n);
}

Result<void> Sampler::sample(Sample& out) {
  const Clock& clock = clock_or_system(options_.clock);
  out.wall_ns = clock.wall_ns();
  out.monotonic_ns = clock.monotonic_ns();
  out.ticks_per_second = ticks_per_second_;
  out.page_size = page_size_;
  out.observer_cpu_us.reset();
  if (rusage u{}; live_ && ::getrusage(RUSAGE_SELF, &u) == 0) {
    const auto us = [](const timeval& t) {
      return static_cast<std::uint64_t>(t.tv_sec) * 1000000u +
             static_cast<std::uint64_t>(t.tv_usec);
    };
    out.observer_cpu_us = us(u.ru_utime) + us(u.ru_stime);
  }

  if (auto ok = system_->collect(out.system, notices_, out.monotonic_ns); !ok) return ok;
  if (cgroup_) {
    if (auto ok = cgroup_->collect(out.cgroup, notices_); !ok) return ok;
  } else {
    out.cgroup.reset();
  }
  if (processes_) {
    if (options_.scope.kind == Scope::Kind::kCgroup) {
      if (auto ok = processes_->collect(out.processes, notices_, cgroup_->pids(), out.monotonic_ns);
          !ok)
        return ok;
    } else {
      if (auto ok = processes_->collect(out.processes, notices_, {}, out.monotonic_ns); !ok)
        return ok;
    }
  } else {
    out.processes.clear();
  }
  if (gpus_)
    gpus_->collect(out.gpus, out.gpu_slots, notices_);
  else {
    out.gpus.clear();
    out.gpu_slots.clear();
  }
  return {};
}

}  // namespace dltune::monitor
