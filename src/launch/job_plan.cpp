#include "launch/job_plan.hpp"

#include "launch/rank_plan.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/cgroup.hpp"
#include "inventory/host_facts.hpp"
#include "launch/cpu_latency.hpp"

namespace dltune::launch {

namespace {

bool valid_name(std::string_view n) {
  if (n.empty() || n.size() > 64 || n == "." || n == "..") return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

bool valid_env_key(std::string_view k) {
  if (k.empty() || std::isdigit(static_cast<unsigned char>(k.front()))) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

Result<std::uint64_t> parse_weight(std::string_view option, std::string_view text) {
  const auto v = text::to_uint(text::trim(text));
  if (!v || *v < 1 || *v > 10000)
    return fail(
        fmt::format("{}: expected a weight from 1 to 10000 (100 is the default), got", option),
        std::string(text));
  return *v;
}

// The GPUs by index as nvidia-smi and NVML number them (PCI bus order), with their NUMA node.
struct GpuSlot {
  std::string address;
  std::optional<int> numa_node;
};
std::vector<GpuSlot> gpu_slots(const inventory::HostFacts& facts) {
  std::vector<GpuSlot> out;
  const auto node_of = [&](const std::string& address) -> std::optional<int> {
    for (const auto& g : facts.gpu.devices)
      if (text::to_lower(g.address) == text::to_lower(address)) return g.numa_node;
    return std::nullopt;
  };
  if (facts.gpu.nvml.loaded && !facts.gpu.nvml.devices.empty()) {
    for (const auto& d : facts.gpu.nvml.devices) {
      const std::string address = d.pci_bus_id.value_or("");
      out.push_back({address, node_of(address)});
    }
    return out;
  }
  for (const auto& g : facts.gpu.devices)  // by address already
    if (g.vendor == "nvidia") out.push_back({g.address, g.numa_node});
  return out;
}

// Where Debian (and others) put shared libraries.
std::optional<std::string> find_library(const host::Root& root,
                                        std::initializer_list<const char*> names) {
  for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                          "/usr/lib/powerpc64le-linux-gnu", "/usr/lib64", "/usr/lib"})
    for (const char* n : names) {
      const std::string p = fmt::format("{}/{}", dir, n);
      if (root.exists(p)) return p;
    }
  return std::nullopt;
}

// The allocator's variables into `env`; `out` gets the allocator that stands and the notes.
Result<void> plan_allocator(const host::Root& root, Allocator a, bool asked,
                            std::map<std::string, std::string>& env, EnvironmentPlan& out) {
  out.allocator = a;
  std::vector<std::string> users;
  for (const auto& [k, v] : env)
    if (k == "LD_PRELOAD" || k.starts_with("MALLOC_")) users.push_back(k + "=" + v);
  if (a == Allocator::kDefault) {
    out.notes.push_back("allocator: the C library's defaults (--allocator default)");
    return {};
  }
  if (!users.empty()) {
    out.notes.push_back(fmt::format(
        "allocator: kept your {}; {} not applied (dltune never overrides them)",
        text::join(users, " "), asked ? "--allocator" : "the default allocator tuning"));
    out.allocator = Allocator::kDefault;
    return {};
  }
  switch (a) {
    case Allocator::kGlibcTuned:
      // glibc's mmap threshold may not exceed 32 MiB on 64-bit (malloc.c HEAP_MAX_SIZE/2): a
      // larger value is ignored. Setting it also turns off the dynamic threshold, so the trim
      // threshold must be set too (either alone measured worse than neither: docs/measurements.md).
      env["MALLOC_MMAP_THRESHOLD_"] = "33554432";
      env["MALLOC_TRIM_THRESHOLD_"] = "1073741824";
      env["MALLOC_TOP_PAD_"] = "67108864";
      out.notes.push_back(
          "allocator: glibc tuned (MALLOC_MMAP_THRESHOLD_=32 MiB, MALLOC_TRIM_THRESHOLD_=1 GiB, "
          "MALLOC_TOP_PAD_=64 MiB): freed tensors stay in the heap instead of going back to the "
          "kernel and faulting in again every step (x3.6 on this project's measured DataLoader "
          "job); --allocator default to turn it off");
      return {};
    case Allocator::kTcmalloc: {
      const auto lib = find_library(root, {"libtcmalloc_minimal.so.4", "libtcmalloc.so.4"});
      if (!lib)
        return fail(
            "--allocator tcmalloc: libtcmalloc_minimal.so.4 not found (apt-get install "
            "libtcmalloc-minimal4) in",
            "/usr/lib");
      env["LD_PRELOAD"] = *lib;
      out.notes.push_back("allocator: tcmalloc (LD_PRELOAD=" + *lib + ")");
      return {};
    }
    case Allocator::kJemalloc: {
      const auto lib = find_library(root, {"libjemalloc.so.2"});
      if (!lib)
        return fail(
            "--allocator jemalloc: libjemalloc.so.2 not found (apt-get install libjemalloc2) in",
            "/usr/lib");
      env["LD_PRELOAD"] = *lib;
      // With Debian's default decay jemalloc returned memory so eagerly that the measured job
      // ran at x0.35; with decay off at x3.0 (docs/measurements.md).
      env["MALLOC_CONF"] = "dirty_decay_ms:-1,muzzy_decay_ms:-1";
      out.notes.push_back("allocator: jemalloc (LD_PRELOAD=" + *lib +
                          ", MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1)");
      return {};
    }
    case Allocator::kDefault:
      break;
  }
  return {};
}

// The Slurm job this process runs in: $SLURM_JOB_ID, or (under sudo, which drops Slurm's
// variables) the job of its cpuset's group, which task/cgroup makes.
std::string slurm_job_of(const host::Root& root, const std::map<std::string, std::string>& env) {
  if (const auto it = env.find("SLURM_JOB_ID"); it != env.end() && !it->second.empty())
    return it->second;
  if (auto cpuset = root.read("/proc/self/cpuset", 4096); cpuset && *cpuset)
    if (const auto step = host::slurm_step_of(text::trim(**cpuset))) return step->job_id;
  return {};
}

}  // namespace

const char* allocator_name(Allocator a) {
  switch (a) {
    case Allocator::kGlibcTuned:
      return "glibc-tuned";
    case Allocator::kTcmalloc:
      return "tcmalloc";
    case Allocator::kJemalloc:
      return "jemalloc";
    case Allocator::kDefault:
      return "default";
  }
  return "?";
}

Result<Allocator> parse_allocator(std::string_view text) {
  for (auto a :
       {Allocator::kGlibcTuned, Allocator::kTcmalloc, Allocator::kJemalloc, Allocator::kDefault})
    if (text == allocator_name(a)) return a;
  return fail("--allocator: expected glibc-tuned, tcmalloc, jemalloc or default, got",
              std::string(text));
}

Result<double> parse_cpu_quota(std::string_view text, int machine_cpus) {
  const auto t = text::trim(text);
  const bool percent = !t.empty() && t.back() == '%';
  const auto v = text::to_double(percent ? t.substr(0, t.size() - 1) : t);
  if (!v || !std::isfinite(*v) || *v <= 0)
    return fail("--cpu-quota: expected a share of the machine (80%) or a number of CPUs (2.5), got",
                std::string(text));
  const double cpus = percent ? *v / 100.0 * machine_cpus : *v;
  if (cpus > machine_cpus + 1e-9)
    return fail(
        fmt::format("--cpu-quota: this machine has {} CPUs; more than all of them:", machine_cpus),
        std::string(text));
  if (cpus < 0.01)
    return fail("--cpu-quota: less than 1% of a CPU (the kernel's minimum is 1 ms per 100 ms):",
                std::string(text));
  return cpus;
}

Result<std::uint64_t> parse_memory(std::string_view text, std::uint64_t total, bool allow_zero) {
  std::string t = text::to_lower(text::trim(text));
  const auto bad = [&]() -> Result<std::uint64_t> {
    return fail("expected a size (64G, 512M, bytes) or a share of the memory (90%), got",
                std::string(text));
  };
  if (t.empty()) return bad();
  std::uint64_t bytes = 0;
  if (t.back() == '%') {
    const auto v = text::to_double(std::string_view(t).substr(0, t.size() - 1));
    if (!v || !std::isfinite(*v) || *v < 0 || *v > 100) return bad();
    bytes = static_cast<std::uint64_t>(*v / 100.0 * static_cast<double>(total));
  } else {
    for (const char* suffix : {"ib", "b"})
      if (t.size() > 1 && t.ends_with(suffix)) {
        t.resize(t.size() - std::string_view(suffix).size());
        break;
      }
    std::uint64_t unit = 1;
    if (!t.empty()) {
      const char c = t.back();
      const std::string_view units = "kmgt";
      if (const auto pos = units.find(c); pos != std::string_view::npos) {
        unit = 1ull << (10 * (pos + 1));
        t.pop_back();
      }
    }
    const auto v = text::to_double(t);
    if (!v || !std::isfinite(*v) || *v < 0) return bad();
    const double b = *v * static_cast<double>(unit);
    if (b > 1.8e19) return bad();
    bytes = static_cast<std::uint64_t>(b);
  }
  if (bytes == 0 && !allow_zero)
    return fail("a memory limit of 0 would kill the job at once:", std::string(text));
  if (total > 0 && bytes > total)
    return fail(fmt::format("more than this machine's memory ({}):", text::human_bytes(total)),
                std::string(text));
  return bytes;
}

Result<EnvironmentPlan> plan_environment(const host::Root& root, const EnvironmentRequest& r,
                                         std::map<std::string, std::string>& env) {
  EnvironmentPlan out;
  // Thread counts (docs/measurements.md): torch sizes its intra-op pool from the machine, not from
  // the CPUs the job may use, so a job bound to fewer CPUs oversubscribes them; and the pool
  // competes with busy DataLoader workers (2 threads with 2 busy workers on 2 CPUs cost 23 % in
  // those measurements, about 40 % in bench/run-run-bench). So: threads = the job's CPUs per rank
  // minus its workers, set when the job is bound (fewer CPUs than the machine) or when the ranks
  // or workers are known; otherwise torch's own default stands.
  const int ranks = std::max(1, r.ranks.value_or(1));
  const int workers = std::max(0, r.workers.value_or(0));
  const bool bound = r.cpus < r.machine_cpus;
  const bool size_threads = bound || r.ranks || r.workers;
  const int threads = std::max(1, r.cpus / ranks - workers);
  for (const char* var : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
    if (const auto it = env.find(var); it != env.end()) {
      out.notes.push_back(fmt::format("threads: kept your {}={}", var, it->second));
      continue;
    }
    if (!size_threads) continue;
    env[var] = std::to_string(threads);
    out.notes.push_back(fmt::format("threads: {}={} ({} CPU(s){}{})", var, threads, r.cpus,
                                    ranks > 1 ? fmt::format(" / {} ranks", ranks) : "",
                                    workers > 0 ? fmt::format(" - {} workers", workers) : ""));
  }
  if (!size_threads && !env.count("OMP_NUM_THREADS"))
    out.notes.push_back(
        "threads: left to torch (the job may use the whole machine); --workers N (DataLoader "
        "workers per rank) sizes them to the CPUs the workers leave");
  if (auto done = plan_allocator(root, r.allocator, r.allocator_asked, env, out); !done)
    return tl::unexpected(done.error());
  return out;
}

Result<JobPlan> plan_job(const host::Root& root, const inventory::HostFacts& facts,
                         const RunOptions& o, std::map<std::string, std::string> environment,
                         const settings::Profile* profile, const std::string& unique) {
  JobPlan plan;
  plan.env = std::move(environment);
  if (o.command.empty())
    return fail("no command to run: dltune run [OPTIONS] -- COMMAND [ARGS...]", "");
  plan.argv = o.command;
  // The name.
  plan.name = o.name.value_or("run-" + unique);
  if (!valid_name(plan.name))
    return fail("--name: expected letters, digits, '_', '.' or '-' (at most 64), got", plan.name);
  // The machine.
  const std::vector<int> machine = facts.cpu.allowed ? *facts.cpu.allowed : facts.cpu.online;
  if (machine.empty())
    return fail("cannot tell which CPUs this host has:", "/sys/devices/system/cpu/online");
  // Inside a Slurm job the machine is the allocation on this node: this process's cpuset is the
  // step's (task/cgroup), and its GPUs are in SLURM_STEP_GPUS (docs/slurm.md).
  const std::string slurm_job = slurm_job_of(root, plan.env);
  const bool in_slurm = !slurm_job.empty();
  if (in_slurm)
    plan.notes.push_back(fmt::format(
        "CPUs: Slurm job {}'s on this node, {} ({} of the host's {}): --cpus, --cpu-quota N% and "
        "the thread counts are of these",
        slurm_job, text::format_cpu_list(machine), machine.size(), facts.cpu.online.size()));
  const auto mem_total = facts.memory.total_bytes.value_or(0);
  // Limits.
  if (o.cpu_quota) {
    auto q = parse_cpu_quota(*o.cpu_quota, static_cast<int>(machine.size()));
    if (!q) return tl::unexpected(q.error());
    plan.limits.cpu_quota_cpus = *q;
  }
  if (o.cpu_weight) {
    auto w = parse_weight("--cpu-weight", *o.cpu_weight);
    if (!w) return tl::unexpected(w.error());
    plan.limits.cpu_weight = *w;
  }
  if (o.io_weight) {
    auto w = parse_weight("--io-weight", *o.io_weight);
    if (!w) return tl::unexpected(w.error());
    plan.limits.io_weight = *w;
  }
  if (o.memory) {
    auto m = parse_memory(*o.memory, mem_total);
    if (!m) return fail("--memory:", m.error().message());
    plan.limits.memory_bytes = *m;
  }
  if (o.memory_swap) {
    if (!o.memory) return fail("--memory-swap needs --memory (swap is allowed on top of it)", "");
    auto s = parse_memory(*o.memory_swap, facts.memory.swap_total_bytes.value_or(0), true);
    if (!s) return fail("--memory-swap:", s.error().message());
    plan.limits.memory_swap_bytes = *s;
  }
  // GPUs, and the NUMA node of each one chosen (for --numa auto).
  std::vector<std::optional<int>> gpu_nodes;
  if (o.gpus) {
    const auto slots = gpu_slots(facts);
    if (slots.empty()) return fail("--gpus: this host has no NVIDIA GPU; got", *o.gpus);
    // The same list syntax: "0,1" or "0-3".
    const auto ids = text::parse_cpu_list(*o.gpus, text::kMaxGpuId);
    if (!ids || ids->empty())
      return fail("--gpus: expected GPU indices such as 0,1 or 0-3, got", *o.gpus);
    for (int i : *ids)
      if (i < 0 || static_cast<std::size_t>(i) >= slots.size())
        return fail(fmt::format("--gpus: this host has {} GPU(s), indices 0-{}; no GPU",
                                slots.size(), slots.size() - 1),
                    std::to_string(i));
    plan.gpus = *ids;
    for (int i : *ids) gpu_nodes.push_back(slots[static_cast<std::size_t>(i)].numa_node);
    if (const auto it = plan.env.find("CUDA_VISIBLE_DEVICES"); it != plan.env.end())
      return fail(fmt::format("--gpus {} and your CUDA_VISIBLE_DEVICES={} disagree: unset one;",
                              *o.gpus, it->second),
                  "CUDA_VISIBLE_DEVICES");
    // nvidia-smi's (and NVML's) indices are PCI bus order; CUDA's own default is fastest first.
    if (!plan.env.count("CUDA_DEVICE_ORDER")) plan.env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
    std::vector<std::string> idx;
    for (int i : *ids) idx.push_back(std::to_string(i));
    plan.env["CUDA_VISIBLE_DEVICES"] = text::join(idx, ",");
    plan.notes.push_back(fmt::format("GPUs: CUDA_VISIBLE_DEVICES={} (CUDA_DEVICE_ORDER={})",
                                     plan.env["CUDA_VISIBLE_DEVICES"],
                                     plan.env["CUDA_DEVICE_ORDER"]));
  } else if (in_slurm && o.numa && *o.numa == "auto") {
    // The step's GPUs, as Slurm's gres numbers them on the node (its CUDA_VISIBLE_DEVICES stays
    // as Slurm set it): --numa auto binds to their node.
    for (const char* var : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
      const auto it = plan.env.find(var);
      if (it == plan.env.end() || it->second.empty()) continue;
      const auto slots = gpu_slots(facts);
      const auto ids = text::parse_cpu_list(it->second, text::kMaxGpuId);
      const bool known = ids && !ids->empty() && std::all_of(ids->begin(), ids->end(), [&](int i) {
                           return i >= 0 && static_cast<std::size_t>(i) < slots.size();
                         });
      if (!known) {
        plan.notes.push_back(fmt::format(
            "GPUs: {}={} names GPUs this host does not list ({} NVIDIA GPU(s)): --numa auto "
            "without them",
            var, it->second, slots.size()));
        break;
      }
      plan.gpus = *ids;
      for (int i : *ids) gpu_nodes.push_back(slots[static_cast<std::size_t>(i)].numa_node);
      plan.notes.push_back(fmt::format(
          "GPUs: the Slurm job's, {}={} (CUDA_VISIBLE_DEVICES as Slurm set it)", var, it->second));
      break;
    }
  }
  // CPUs and NUMA nodes.
  std::optional<std::vector<int>> cpus;
  if (o.cpus) {
    auto c = text::parse_cpu_list(*o.cpus);
    if (!c || c->empty())
      return fail("--cpus: expected a CPU list such as 0-7,16-23, got", *o.cpus);
    for (int id : *c)
      if (std::find(machine.begin(), machine.end(), id) == machine.end())
        return fail(fmt::format("--cpus: {} {}; no CPU",
                                in_slurm ? "Slurm job " + slurm_job + "'s CPUs on this node are"
                                : facts.cpu.allowed ? std::string("the CPUs this process may use "
                                                                  "(its cpuset) are")
                                                    : std::string("this host's CPUs are"),
                                text::format_cpu_list(machine)),
                    std::to_string(id));
    cpus = *c;
  }
  std::vector<int> nodes;
  const auto& numa = facts.cpu.numa_nodes;
  if (o.numa && *o.numa != "auto") {
    const auto n = text::to_uint(*o.numa);
    const auto it = std::find_if(numa.begin(), numa.end(), [&](const inventory::NumaNode& x) {
      return n && x.id == static_cast<int>(*n);
    });
    if (it == numa.end()) {
      std::vector<int> ids;
      for (const auto& x : numa) ids.push_back(x.id);
      return fail(fmt::format("--numa: expected auto or a NUMA node of this host ({}), got",
                              ids.empty() ? "none known" : text::format_cpu_list(ids)),
                  *o.numa);
    }
    nodes = {it->id};
  } else if (o.numa && !plan.gpus.empty()) {
    std::set<int> set;
    for (const auto& node : gpu_nodes)
      if (node && *node >= 0) set.insert(*node);
    if (set.empty())
      plan.notes.push_back("NUMA: the kernel reports no NUMA node for these GPUs: not bound");
    nodes.assign(set.begin(), set.end());
  } else if (o.numa) {
    plan.notes.push_back(numa.size() > 1
                             ? "NUMA: --numa auto without --gpus: not bound (the kernel places it)"
                             : "NUMA: one node: nothing to bind");
  }
  if (!nodes.empty() && numa.size() > 1) {
    std::vector<int> node_cpus;
    for (const auto& x : numa)
      if (std::find(nodes.begin(), nodes.end(), x.id) != nodes.end())
        node_cpus.insert(node_cpus.end(), x.cpus.begin(), x.cpus.end());
    std::sort(node_cpus.begin(), node_cpus.end());
    std::vector<int> chosen;
    for (int c : node_cpus)
      if ((!cpus || std::find(cpus->begin(), cpus->end(), c) != cpus->end()) &&
          std::find(machine.begin(), machine.end(), c) != machine.end())
        chosen.push_back(c);
    if (chosen.empty())
      return fail(fmt::format("--cpus {} holds no CPU of NUMA node(s)", o.cpus.value_or("")),
                  text::format_cpu_list(nodes));
    cpus = chosen;
    plan.numa_nodes = nodes;
    plan.limits.mems = text::format_cpu_list(nodes);
    plan.notes.push_back(
        fmt::format("NUMA: node(s) {}{}: CPUs {} and their memory", text::format_cpu_list(nodes),
                    plan.gpus.empty() ? "" : " (nearest the GPUs)", text::format_cpu_list(chosen)));
  } else if (!nodes.empty()) {
    plan.numa_nodes = nodes;
  }
  // --nproc N with a command that is not a launcher of its own: dltune starts the N ranks, each in
  // a group of its own inside the job's, so the job is bound to its CPUs (all it may use, unless
  // narrowed) and each rank to its share of them.
  const bool launches_ranks = o.nproc && !is_launcher(plan.argv);
  if (launches_ranks) {
    for (const char* var : {"RANK", "LOCAL_RANK", "WORLD_SIZE"})
      if (const auto it = plan.env.find(var); it != plan.env.end())
        return fail(fmt::format("--nproc {}: {}={} is set already (is this a rank of another "
                                "launcher?): dltune would start ranks of a rank; unset it, or run "
                                "without --nproc",
                                *o.nproc, var, it->second),
                    var);
    if (!cpus) cpus = machine;
  }
  if (cpus) {
    plan.cpus = cpus;
    plan.limits.cpus = text::format_cpu_list(*cpus);
  }
  // Thread counts (docs/measurements.md): torch sizes its intra-op pool from the machine, not from
  // the CPUs the job may use, so a job bound to fewer CPUs oversubscribes them; and the pool
  // competes with busy DataLoader workers (2 threads with 2 busy workers on 2 CPUs cost 23 % in
  // those measurements, about 40 % in bench/run-run-bench). So: threads = the job's CPUs per rank
  // minus its workers, set when the job is bound (--cpus, --numa, --cpu-quota) or when --nproc
  // or --workers say how the CPUs are shared; otherwise torch's own default stands.
  const int job_cpus =
      cpus ? static_cast<int>(cpus->size())
      : plan.limits.cpu_quota_cpus
          ? std::max(1, static_cast<int>(std::ceil(*plan.limits.cpu_quota_cpus - 1e-9)))
          : static_cast<int>(machine.size());
  EnvironmentRequest er;
  er.cpus = job_cpus;
  // In a Slurm allocation torch would still size its pool from the whole host: the threads are
  // sized to the allocation (as the TaskProlog does).
  er.machine_cpus =
      static_cast<int>(in_slurm && facts.cpu.allowed ? facts.cpu.online.size() : machine.size());
  er.ranks = o.nproc;
  er.workers = o.workers;
  if (o.allocator) {
    auto a = parse_allocator(*o.allocator);
    if (!a) return tl::unexpected(a.error());
    er.allocator = *a;
    er.allocator_asked = true;
  }
  const bool threads_set_by_user = plan.env.count("OMP_NUM_THREADS") > 0;
  auto env_plan = plan_environment(root, er, plan.env);
  if (!env_plan) return tl::unexpected(env_plan.error());
  plan.allocator = env_plan->allocator;
  plan.notes.insert(plan.notes.end(), env_plan->notes.begin(), env_plan->notes.end());
  // --env last: what the user says wins over what dltune would set.
  bool threads_in_env_option = false;
  for (const auto& kv : o.env) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || !valid_env_key(std::string_view(kv).substr(0, eq)))
      return fail("--env: expected NAME=VALUE, got", kv);
    plan.env[kv.substr(0, eq)] = kv.substr(eq + 1);
    threads_in_env_option = threads_in_env_option || kv.substr(0, eq) == "OMP_NUM_THREADS";
  }
  if (launches_ranks) {
    RankRequest rr;
    rr.ranks = *o.nproc;
    rr.cpus = *cpus;
    std::sort(rr.cpus.begin(), rr.cpus.end());
    for (const auto& node : numa)
      for (int c : node.cpus) rr.node_of_cpu[c] = node.id;
    rr.gpus = plan.gpus;
    rr.gpu_nodes = gpu_nodes;
    rr.workers = o.workers;
    rr.set_threads = !threads_set_by_user && !threads_in_env_option;
    auto layout = plan_ranks(rr);
    if (!layout) return tl::unexpected(layout.error());
    plan.ranks = std::move(layout->ranks);
    // torchrun --standalone's rendezvous: this host; MASTER_PORT is a free port, chosen when the
    // ranks start (run_job).
    if (!plan.env.count("MASTER_ADDR")) plan.env["MASTER_ADDR"] = "127.0.0.1";
    std::vector<std::string> each;
    for (const auto& r : plan.ranks)
      each.push_back(fmt::format(
          "{}: CPUs {}{}{}", r.rank, text::format_cpu_list(r.cpus),
          r.gpu ? fmt::format(", GPU {}", *r.gpu) : "",
          r.env.count("OMP_NUM_THREADS") ? ", " + r.env.at("OMP_NUM_THREADS") + " thread(s)" : ""));
    plan.notes.push_back(fmt::format(
        "ranks: {} started by dltune (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT as "
        "torchrun sets them), each in a group of its own; {}",
        plan.ranks.size(), text::join(each, "; ")));
    plan.notes.insert(plan.notes.end(), layout->notes.begin(), layout->notes.end());
  } else if (o.nproc) {
    plan.notes.push_back(
        fmt::format("ranks: {} starts them: --nproc {} only sizes each one's threads",
                    plan.argv.front(), *o.nproc));
  }
  // Resource limits from the profile (limits.nofile, limits.memlock), raised, never lowered.
  if (profile != nullptr) {
    for (const auto& [key, res, name] : {std::tuple{"limits.nofile", RLIMIT_NOFILE, "nofile"},
                                         std::tuple{"limits.memlock", RLIMIT_MEMLOCK, "memlock"}}) {
      const auto* e = profile->find(key);
      if (e == nullptr || e->expected.values.empty()) continue;
      const auto& v = e->expected.values.front();
      rlim_t want = 0;
      if (v == "unlimited" || v == "infinity" || v == "-1") {
        want = RLIM_INFINITY;
      } else if (auto n = text::to_uint(v)) {
        want = static_cast<rlim_t>(std::string_view(name) == "memlock" ? *n * 1024 : *n);
      } else {
        continue;
      }
      rlimit now{};
      if (root.live() && ::getrlimit(res, &now) == 0) {
        if (now.rlim_cur != RLIM_INFINITY && (want == RLIM_INFINITY || now.rlim_cur < want)) {
          const rlim_t hard =
              now.rlim_max == RLIM_INFINITY || (want != RLIM_INFINITY && now.rlim_max >= want)
                  ? now.rlim_max
                  : want;
          plan.rlimits.push_back({res, name, want, hard});
        }
      } else {
        plan.rlimits.push_back({res, name, want, want});
      }
    }
  }
  // The CPU wake-up latency the profile asks for while the job runs.
  if (profile != nullptr)
    if (const auto* e = profile->find("cpu.latency_us");
        e != nullptr && !e->expected.values.empty())
      if (auto us = text::to_uint(e->expected.values.front()); us && *us <= 2'000'000'000u) {
        plan.cpu_latency_us = static_cast<int>(*us);
        plan.notes.push_back(fmt::format(
            "CPU wake-up latency: at most {} µs while the job runs (cpu.latency_us, held on {})",
            *us, kCpuDmaLatency));
      }
  // The command must exist before anything is created.
  if (root.live()) {
    if (auto found = find_program(plan.argv.front(), plan.env); !found)
      return fail("command not found:", found.error().message());
  }
  return plan;
}

}  // namespace dltune::launch
