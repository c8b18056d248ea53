#include "inventory/cpu.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/shared_library.hpp"
#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "inventory/json.hpp"

namespace dltune::inventory {

const std::vector<std::string>& interesting_cpu_flags() {
  static const std::vector<std::string> kFlags = {
      "avx",         "avx2",        "fma",         "f16c",     "avx512f",  "avx512bw",
      "avx512_vnni", "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16",
      "amx_int8",    "amx_fp16",    "sve",         "asimd"};
  return kFlags;
}

namespace {

// hwloc's functions, resolved from libhwloc.so.15 when a topology is first read
// (core/shared_library.hpp): the commands that read no CPU topology (--version, run, record,
// report, ...) do not load it, nor the libudev it needs. hwloc.h's inline helpers
// (hwloc_get_nbobjs_by_type, hwloc_get_obj_by_type) call the library: count_of and object_of
// below do their work through this table.
struct HwlocLib {
  decltype(&::hwloc_bitmap_first) bitmap_first = nullptr;
  decltype(&::hwloc_bitmap_next) bitmap_next = nullptr;
  decltype(&::hwloc_distances_get_by_name) distances_get_by_name = nullptr;
  decltype(&::hwloc_distances_release) distances_release = nullptr;
  decltype(&::hwloc_get_nbobjs_by_depth) get_nbobjs_by_depth = nullptr;
  decltype(&::hwloc_get_obj_by_depth) get_obj_by_depth = nullptr;
  decltype(&::hwloc_get_type_depth) get_type_depth = nullptr;
  decltype(&::hwloc_topology_destroy) topology_destroy = nullptr;
  decltype(&::hwloc_topology_init) topology_init = nullptr;
  decltype(&::hwloc_topology_load) topology_load = nullptr;
  decltype(&::hwloc_topology_set_components) topology_set_components = nullptr;
  decltype(&::hwloc_topology_set_flags) topology_set_flags = nullptr;
};

Result<const HwlocLib*> load_hwloc() {
  static const Result<HwlocLib> loaded = SharedLibrary::load_table<HwlocLib>(
      "libhwloc.so.15", "reading the CPU topology", "libhwloc15",
      [](SharedLibrary::Resolver& r, HwlocLib& api) {
#define DLTUNE_SYMBOL(f) r(api.f, "hwloc_" #f)
        DLTUNE_SYMBOL(bitmap_first);
        DLTUNE_SYMBOL(bitmap_next);
        DLTUNE_SYMBOL(distances_get_by_name);
        DLTUNE_SYMBOL(distances_release);
        DLTUNE_SYMBOL(get_nbobjs_by_depth);
        DLTUNE_SYMBOL(get_obj_by_depth);
        DLTUNE_SYMBOL(get_type_depth);
        DLTUNE_SYMBOL(topology_destroy);
        DLTUNE_SYMBOL(topology_init);
        DLTUNE_SYMBOL(topology_load);
        DLTUNE_SYMBOL(topology_set_components);
        DLTUNE_SYMBOL(topology_set_flags);
#undef DLTUNE_SYMBOL
      });
  if (!loaded) return tl::unexpected(loaded.error());
  return &*loaded;
}

// How many objects of a type the topology has: 0 for a type it lacks, -1 for a type at more
// than one depth (hwloc_get_type_depth's HWLOC_TYPE_DEPTH_UNKNOWN and _MULTIPLE, hwloc.h). The
// other results, NUMA nodes' virtual depth included, are depths hwloc_get_nbobjs_by_depth takes.
int count_of(const HwlocLib& hw, hwloc_topology_t topo, hwloc_obj_type_t type) {
  const int depth = hw.get_type_depth(topo, type);
  if (depth == HWLOC_TYPE_DEPTH_UNKNOWN) return 0;
  if (depth == HWLOC_TYPE_DEPTH_MULTIPLE) return -1;
  return static_cast<int>(hw.get_nbobjs_by_depth(topo, depth));
}

// The index-th object of a type, or null.
hwloc_obj_t object_of(const HwlocLib& hw, hwloc_topology_t topo, hwloc_obj_type_t type,
                      unsigned index) {
  const int depth = hw.get_type_depth(topo, type);
  if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE) return nullptr;
  return hw.get_obj_by_depth(topo, depth, index);
}

std::vector<int> bitmap_ids(const HwlocLib& hw, hwloc_const_bitmap_t b) {
  std::vector<int> out;
  if (b == nullptr) return out;
  for (int i = hw.bitmap_first(b); i >= 0; i = hw.bitmap_next(b, i)) out.push_back(i);
  return out;
}

// hwloc reads the same files as we do; for a host tree it reads them below HWLOC_FSROOT. The
// variable is process-wide, so loads are serialised.
std::mutex& hwloc_env_mutex() {
  static std::mutex mu;
  return mu;
}

void load_topology(Context& ctx, CpuFacts& f) {
  // A host tree gives its own topology or none: without its CPU directory hwloc would fall
  // back to this machine's (its no-OS backend asks sysconf).
  // hwloc's Linux backend needs the first CPU's topology files; without them it gives up and its
  // fallback counts this machine's CPUs (sysconf), which is not the tree's.
  if (!ctx.root().live()) {
    const std::string cpu0 = "/sys/devices/system/cpu/cpu" +
                             std::to_string(f.online.empty() ? 0 : f.online.front()) + "/topology";
    if (!ctx.root().exists(cpu0 + "/thread_siblings") &&
        !ctx.root().exists(cpu0 + "/core_siblings")) {
      f.topology_error = "the tree has no " + cpu0 + "/thread_siblings: no CPU topology";
      return;
    }
  }
  const auto loaded = load_hwloc();
  if (!loaded) {
    f.topology_error = loaded.error().message();
    return;
  }
  const HwlocLib& hw = **loaded;
  std::lock_guard lock(hwloc_env_mutex());
  hwloc_topology_t topo = nullptr;
  if (hw.topology_init(&topo) != 0) {
    f.topology_error = "hwloc_topology_init failed";
    return;
  }
  // The x86 backend reads this machine's CPUID even for another host's tree, and the pci
  // backend is slow (about 80 s) and leaky under ASan: sysfs is enough for CPUs
  // and NUMA nodes, and GPUs are read from sysfs by the GPU module.
  hw.topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
  hw.topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
  // Keep CPUs and nodes that the cpuset hides, so that the host's shape is reported whole.
  hw.topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  const char* old = std::getenv("HWLOC_FSROOT");
  const std::string saved = old ? old : "";
  if (!ctx.root().live()) {
    ::setenv("HWLOC_FSROOT", ctx.root().base().c_str(), 1);
    // A sparse tree is expected: what hwloc cannot read is said by env as unknown, not by
    // hwloc's own messages on stderr.
    ::setenv("HWLOC_HIDE_ERRORS", "2", 0);  // 2: its critical ones too (hwloc 2.x)
  }
  const int rc = hw.topology_load(topo);
  if (!ctx.root().live()) {
    if (old)
      ::setenv("HWLOC_FSROOT", saved.c_str(), 1);
    else
      ::unsetenv("HWLOC_FSROOT");
  }
  if (rc != 0) {
    f.topology_error = fmt::format("hwloc_topology_load failed (errno {})", errno);
    hw.topology_destroy(topo);
    return;
  }
  const int packages = count_of(hw, topo, HWLOC_OBJ_PACKAGE);
  const int cores = count_of(hw, topo, HWLOC_OBJ_CORE);
  const int pus = count_of(hw, topo, HWLOC_OBJ_PU);
  if (packages > 0) f.sockets = packages;
  if (cores > 0) f.cores = cores;
  if (pus > 0) f.threads = pus;

  const int nnodes = count_of(hw, topo, HWLOC_OBJ_NUMANODE);
  std::vector<hwloc_obj_t> node_objs;
  for (int i = 0; i < nnodes; ++i) {
    hwloc_obj_t n = object_of(hw, topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    node_objs.push_back(n);
    NumaNode node;
    node.id = static_cast<int>(n->os_index);
    node.cpus = bitmap_ids(hw, n->cpuset);
    if (n->attr && n->attr->numanode.local_memory > 0)
      node.memory_bytes = n->attr->numanode.local_memory;
    f.numa_nodes.push_back(std::move(node));
  }
  // The SLIT distances ("NUMALatency"), the matrix `numactl -H` prints.
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hw.distances_get_by_name(topo, "NUMALatency", &nr, &dist, 0) == 0 && nr >= 1 && dist) {
    for (auto& node : f.numa_nodes) {
      hwloc_obj_t self = nullptr;
      for (auto* o : node_objs)
        if (static_cast<int>(o->os_index) == node.id) self = o;
      for (auto* other : node_objs) {
        hwloc_uint64_t from_to = 0, to_from = 0;
        if (hwloc_distances_obj_pair_values(dist, self, other, &from_to, &to_from) == 0)
          node.distances.push_back(static_cast<int>(from_to));
      }
    }
    hw.distances_release(topo, dist);
  }
  hw.topology_destroy(topo);
}

// What hwloc read we read too, through Root: the facts hwloc does not give, and a capture then
// holds every file that hwloc needs to rebuild the same topology from it.
void read_sysfs(Context& ctx, CpuFacts& f, std::map<int, std::vector<int>>& sysfs_distances) {
  if (auto v = ctx.read_value("cpu.online", "/sys/devices/system/cpu/online")) {
    if (auto ids = text::parse_cpu_list(*v))
      f.online = *ids;
    else
      ctx.problem("cpu.online", "/sys/devices/system/cpu/online", "expected a CPU list");
  }
  (void)ctx.read("cpu.topology", "/sys/devices/system/cpu/possible", 4096);
  (void)ctx.read("cpu.topology", "/sys/devices/system/node/online", 4096);
  (void)ctx.read("cpu.topology", "/sys/devices/system/node/possible", 4096);
  for (const auto& name : ctx.list("cpu.numa", "/sys/devices/system/node")) {
    if (!name.starts_with("node") || !text::to_uint(name.substr(4))) continue;
    const std::string dir = "/sys/devices/system/node/" + name;
    for (const char* file : {"cpumap", "meminfo"})
      (void)ctx.read("cpu.numa", dir + "/" + file, 65536);
    // hwloc makes no distance matrix for a single node; the kernel's row is the same data.
    if (auto d = ctx.read_value("cpu.numa", dir + "/distance")) {
      std::vector<int> row;
      for (const auto x : text::fields(*d))
        if (auto v = text::to_int(x)) row.push_back(static_cast<int>(*v));
      sysfs_distances[static_cast<int>(*text::to_uint(name.substr(4)))] = row;
    }
  }
  for (int cpu : f.online) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}", cpu);
    for (const char* file :
         {"topology/physical_package_id", "topology/core_id", "topology/core_cpus",
          "topology/package_cpus", "topology/thread_siblings", "topology/core_siblings",
          "topology/die_cpus", "topology/cluster_cpus"})
      (void)ctx.read("cpu.topology", dir + "/" + file, 4096);
    if (auto g = ctx.read_value("cpu.governor", dir + "/cpufreq/scaling_governor"))
      f.governors[*g].push_back(cpu);
    if (!f.scaling_driver)
      f.scaling_driver = ctx.read_value("cpu.governor", dir + "/cpufreq/scaling_driver");
    // One driver serves every CPU, so the first CPU's list is the host's (cpufreq's
    // scaling_available_governors: names separated by spaces).
    if (f.available_governors.empty())
      if (auto a = ctx.read_value("cpu.governor", dir + "/cpufreq/scaling_available_governors"))
        for (const auto name : text::fields(*a)) f.available_governors.emplace_back(name);
    // Documentation/admin-guide/pm/intel_pstate.rst and amd-pstate.rst: the hint to the
    // hardware's own frequency choice, a name from energy_performance_available_preferences (or
    // a number, 0-255, that the file then reads back).
    if (auto p = ctx.read_value("cpu.epp", dir + "/cpufreq/energy_performance_preference")) {
      f.epp[*p].push_back(cpu);
      if (f.available_epp.empty())
        if (auto a = ctx.read_value("cpu.epp",
                                    dir + "/cpufreq/energy_performance_available_preferences"))
          for (const auto name : text::fields(*a)) f.available_epp.emplace_back(name);
    }
    // Absent where the CPU has no EPB (not Intel, or a VM that hides the MSR): nothing to say.
    if (ctx.root().exists(dir + "/power/energy_perf_bias"))
      if (auto b = ctx.read_value("cpu.epp", dir + "/power/energy_perf_bias"))
        if (auto n = text::to_int(*b); n && *n >= 0 && *n <= 15)
          f.epb[static_cast<int>(*n)].push_back(cpu);
  }
  // The cpuset this process may use (hwloc reads it to find the allowed CPUs).
  (void)ctx.read("cpu.allowed", "/proc/mounts", 1 << 20);
  if (auto cs = ctx.read_value("cpu.allowed", "/proc/self/cpuset")) {
    const std::string rel = *cs == "/" ? "" : *cs;
    for (const char* dir : {"/sys/fs/cgroup/cpuset", "/sys/fs/cgroup"}) {
      const std::string base = std::string(dir) + rel;
      auto cpus = ctx.read_value(
          "cpu.allowed", base + (std::string(dir) == "/sys/fs/cgroup" ? "/cpuset.cpus.effective"
                                                                      : "/cpuset.cpus"));
      (void)ctx.read(
          "cpu.allowed",
          base + (std::string(dir) == "/sys/fs/cgroup" ? "/cpuset.mems.effective" : "/cpuset.mems"),
          4096);
      if (cpus && !cpus->empty()) {
        auto ids = text::parse_cpu_list(*cpus);
        if (ids && *ids != f.online) f.allowed = *ids;
        break;
      }
    }
  }
}

}  // namespace

CpuFacts collect_cpu(Context& ctx) {
  CpuFacts f;
  if (auto text = ctx.read("cpu.model", "/proc/cpuinfo")) {
    const auto info = host::parse::cpuinfo(*text);
    f.model = info.model_name;
    f.vendor = info.vendor;
    for (const auto& flag : interesting_cpu_flags())
      if (std::binary_search(info.flags.begin(), info.flags.end(), flag)) f.flags.push_back(flag);
  }
  std::map<int, std::vector<int>> sysfs_distances;
  read_sysfs(ctx, f, sysfs_distances);
  load_topology(ctx, f);
  for (auto& node : f.numa_nodes) {
    const auto it = sysfs_distances.find(node.id);
    if (node.distances.empty() && it != sysfs_distances.end()) node.distances = it->second;
  }
  if (f.topology_error) ctx.problem("cpu.topology", "hwloc", *f.topology_error);
  return f;
}

Json to_json(const CpuFacts& f) {
  Json j = Json::object();
  put(j, "model", f.model);
  put(j, "vendor", f.vendor);
  put(j, "sockets", f.sockets);
  put(j, "cores", f.cores);
  put(j, "threads", f.threads);
  j["online"] = text::format_cpu_list(f.online);
  if (f.allowed) j["allowed"] = text::format_cpu_list(*f.allowed);
  j["flags"] = f.flags;
  Json g = Json::object();
  for (const auto& [gov, cpus] : f.governors) g[gov] = text::format_cpu_list(cpus);
  j["governors"] = std::move(g);
  j["available_governors"] = f.available_governors;
  put(j, "scaling_driver", f.scaling_driver);
  if (!f.epp.empty()) {
    Json e = Json::object();
    for (const auto& [pref, cpus] : f.epp) e[pref] = text::format_cpu_list(cpus);
    j["energy_performance_preferences"] = std::move(e);
    j["available_energy_performance_preferences"] = f.available_epp;
  }
  if (!f.epb.empty()) {
    Json e = Json::object();
    for (const auto& [bias, cpus] : f.epb) e[std::to_string(bias)] = text::format_cpu_list(cpus);
    j["energy_perf_bias"] = std::move(e);
  }
  Json nodes = Json::array();
  for (const auto& n : f.numa_nodes) {
    Json x;
    x["id"] = n.id;
    x["cpus"] = text::format_cpu_list(n.cpus);
    put(x, "memory_bytes", n.memory_bytes);
    x["distances"] = n.distances;
    nodes.push_back(std::move(x));
  }
  j["numa_nodes"] = std::move(nodes);
  return j;
}

std::vector<text::Section> render_cpu(const CpuFacts& f) {
  text::Section s{"CPU", {}};
  if (f.model) s.add("model", *f.model);
  if (f.sockets || f.cores || f.threads) {
    const int cores = f.cores.value_or(0);
    const int threads = f.threads.value_or(0);
    s.add("topology", fmt::format("{} socket(s), {} cores, {} threads{}", f.sockets.value_or(0),
                                  cores, threads, cores > 0 && threads > cores ? " (SMT on)" : ""));
  }
  if (!f.online.empty()) s.add("online", text::format_cpu_list(f.online));
  if (f.allowed) s.add("allowed here", text::format_cpu_list(*f.allowed));
  s.add("flags", f.flags.empty() ? "none of the vector/matrix extensions"
                                 : fmt::format("{}", fmt::join(f.flags, " ")));
  if (f.governors.empty()) {
    s.add("governor", "no cpufreq (fixed frequency or managed by the hypervisor)");
  } else {
    std::vector<std::string> parts;
    for (const auto& [gov, cpus] : f.governors)
      parts.push_back(f.governors.size() == 1
                          ? gov
                          : fmt::format("{} on {}", gov, text::format_cpu_list(cpus)));
    s.add("governor", fmt::format("{}{}", fmt::join(parts, ", "),
                                  f.scaling_driver ? " (" + *f.scaling_driver + ")" : ""));
  }
  // Per CPU values grouped: "balance_performance on 16-31, performance on 0-15".
  const auto grouped = [](const auto& by_value) {
    std::vector<std::string> parts;
    for (const auto& [value, cpus] : by_value)
      parts.push_back(by_value.size() == 1
                          ? fmt::format("{}", value)
                          : fmt::format("{} on {}", value, text::format_cpu_list(cpus)));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  if (!f.epp.empty()) s.add("energy preference", grouped(f.epp));
  if (!f.epb.empty()) s.add("energy_perf_bias", grouped(f.epb) + " (0 performance, 15 power)");
  text::Section n{"NUMA", {}};
  for (const auto& node : f.numa_nodes) {
    std::string v = "CPUs " + text::format_cpu_list(node.cpus);
    if (node.memory_bytes) v += ", " + text::human_bytes(*node.memory_bytes);
    if (!node.distances.empty()) v += fmt::format(", distances {}", fmt::join(node.distances, " "));
    n.add(fmt::format("node {}", node.id), v);
  }
  return {s, n};
}

}  // namespace dltune::inventory
