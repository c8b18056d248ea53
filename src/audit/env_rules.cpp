// The training environment's variables (audit/env_rules.hpp). What each variable does is from
// its owner's documentation: NCCL's "Environment Variables" page (docs.nvidia.com/deeplearning/
// nccl/user-guide/docs/env.html), CUDA's "CUDA Environment Variables" (CUDA C++ Programming
// Guide), PyTorch's "CUDA semantics: Memory management" (PYTORCH_CUDA_ALLOC_CONF) and OpenMP's
// OMP_NUM_THREADS.
#include "audit/env_rules.hpp"

#include <algorithm>
#include <set>

#include <fmt/core.h>

#include "audit/rules.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"
#include "settings/judge.hpp"

namespace dltune::audit {

namespace {

using Env = std::map<std::string, std::string>;

const std::string* get(const Env& env, const std::string& key) {
  const auto it = env.find(key);
  return it == env.end() ? nullptr : &it->second;
}

std::string upper(std::string s) {
  for (auto& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

bool truthy(const std::string& v) {
  return v == "1" || upper(v) == "TRUE" || upper(v) == "YES";
}

// NCCL's interface and HCA lists (NCCL_SOCKET_IFNAME, NCCL_IB_HCA): comma-separated entries, a
// leading '^' for "all but these", a leading '=' for exact names (else each entry is a prefix);
// an HCA entry may name a port ("mlx5_0:1").
struct NcclList {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
};
NcclList nccl_list(std::string v) {
  NcclList l;
  if (!v.empty() && v[0] == '^') {
    l.exclude = true;
    v.erase(0, 1);
  }
  if (!v.empty() && v[0] == '=') {
    l.exact = true;
    v.erase(0, 1);
  }
  for (const auto part : text::split(v, ','))
    if (!part.empty()) l.names.emplace_back(part);
  return l;
}
bool matches(const NcclList& l, const std::string& entry, const std::string& name) {
  return l.exact ? name == entry : name.starts_with(entry);
}

void nccl(const Env& env, const inventory::HostFacts& facts, std::vector<EnvProblem>& out) {
  if (const auto* v = get(env, "NCCL_DEBUG"); v && (upper(*v) == "INFO" || upper(*v) == "TRACE"))
    out.push_back(
        {"NCCL_DEBUG", *v, Severity::kWarn, fmt::format("NCCL_DEBUG={} is left on", *v),
         upper(*v) == "TRACE"
             ? "TRACE logs every collective call of every rank: the job slows down and its logs "
               "grow by gigabytes."
             : "INFO logs each rank's whole set-up (topology, rings, every connection), which "
               "slows the job's start and buries its real messages; it is for debugging.",
         "unset NCCL_DEBUG (or NCCL_DEBUG=WARN, which still reports errors)"});
  const auto& rdma = facts.network.rdma;
  std::vector<std::string> active_ports;
  for (const auto& d : rdma)
    for (const auto& p : d.ports)
      if (p.state && p.state->find("ACTIVE") != std::string::npos)
        active_ports.push_back(fmt::format("{}:{}", d.name, p.port));
  if (const auto* v = get(env, "NCCL_IB_DISABLE"); v && truthy(*v) && !active_ports.empty())
    out.push_back(
        {"NCCL_IB_DISABLE", *v, Severity::kWarn,
         fmt::format("NCCL_IB_DISABLE={} although this host has active InfiniBand/RoCE ports ({})",
                     *v, text::join(active_ports, ", ")),
         "NCCL then sends all traffic between nodes through TCP sockets, at a fraction of the "
         "RDMA fabric's bandwidth and with the CPUs copying every byte.",
         "unset NCCL_IB_DISABLE"});
  if (const auto* v = get(env, "NCCL_SOCKET_IFNAME")) {
    const auto l = nccl_list(*v);
    if (!l.exclude) {
      std::vector<std::string> missing, down;
      for (const auto& entry : l.names) {
        const inventory::NetInterface* found = nullptr;
        for (const auto& i : facts.network.interfaces)
          if (matches(l, entry, i.name) && (found == nullptr || i.operstate == "up")) found = &i;
        if (found == nullptr)
          missing.push_back(entry);
        else if (found->operstate && *found->operstate != "up" && *found->operstate != "unknown")
          down.push_back(fmt::format("{} ({})", found->name, *found->operstate));
      }
      std::vector<std::string> names;
      for (const auto& i : facts.network.interfaces) names.push_back(i.name);
      if (!missing.empty() && !facts.network.interfaces.empty())
        out.push_back(
            {"NCCL_SOCKET_IFNAME", *v,
             missing.size() == l.names.size() ? Severity::kCritical : Severity::kWarn,
             fmt::format("NCCL_SOCKET_IFNAME={} names no interface of this host ({} missing)", *v,
                         text::join(missing, ", ")),
             fmt::format("NCCL's bootstrap and socket transport use only the interfaces named; "
                         "with none found NCCL fails to start (\"no socket interface found\"). "
                         "This host has: {}.",
                         text::join(names, ", ")),
             "set NCCL_SOCKET_IFNAME to the interface of the nodes' network (ip -br link), or "
             "unset it to let NCCL choose"});
      if (!down.empty())
        out.push_back({"NCCL_SOCKET_IFNAME", *v, Severity::kWarn,
                       fmt::format("NCCL_SOCKET_IFNAME={} names interfaces that are down: {}", *v,
                                   text::join(down, ", ")),
                       "A rank cannot reach the others through an interface that is down.",
                       "ip link set DEV up, or name an interface that is up"});
    }
  }
  if (const auto* v = get(env, "NCCL_IB_HCA")) {
    const auto l = nccl_list(*v);
    if (!l.exclude) {
      std::vector<std::string> missing, inactive;
      for (const auto& entry : l.names) {
        const auto colon = entry.find(':');
        const std::string hca = entry.substr(0, colon);
        const inventory::RdmaDevice* found = nullptr;
        for (const auto& d : rdma)
          if (matches(l, hca, d.name)) found = &d;
        if (found == nullptr) {
          missing.push_back(entry);
          continue;
        }
        const bool up = std::any_of(found->ports.begin(), found->ports.end(), [](const auto& p) {
          return p.state && p.state->find("ACTIVE") != std::string::npos;
        });
        if (!up && !found->ports.empty()) inactive.push_back(found->name);
      }
      std::vector<std::string> names;
      for (const auto& d : rdma) names.push_back(d.name);
      if (!missing.empty())
        out.push_back(
            {"NCCL_IB_HCA", *v, Severity::kWarn,
             fmt::format("NCCL_IB_HCA={} names HCAs this host does not have: {}", *v,
                         text::join(missing, ", ")),
             names.empty() ? "This host has no RDMA device (/sys/class/infiniband): NCCL falls "
                             "back to TCP sockets."
                           : fmt::format("NCCL uses only the HCAs named; the others ({}) stay "
                                         "idle, and with none found it falls back to sockets.",
                                         text::join(names, ", ")),
             "set NCCL_IB_HCA to the HCAs of this host (ibv_devices; rdma link), or unset it"});
      if (!inactive.empty())
        out.push_back({"NCCL_IB_HCA", *v, Severity::kWarn,
                       fmt::format("NCCL_IB_HCA={} names HCAs with no active port: {}", *v,
                                   text::join(inactive, ", ")),
                       "A port that is not ACTIVE carries no traffic (cable, switch or subnet "
                       "manager).",
                       "ibstat; bring the port up or name HCAs whose ports are ACTIVE"});
    }
  }
  if (const auto* v = get(env, "NCCL_P2P_DISABLE"); v && truthy(*v))
    out.push_back({"NCCL_P2P_DISABLE", *v, Severity::kWarn,
                   fmt::format("NCCL_P2P_DISABLE={} turns off peer-to-peer between the GPUs", *v),
                   "The GPUs of this host then exchange data through host memory instead of "
                   "NVLink or PCIe peer-to-peer: all-reduce within the node slows several times. "
                   "It is a workaround for broken P2P (some virtual machines, ACS), not a "
                   "setting to keep.",
                   "unset NCCL_P2P_DISABLE (if P2P hangs, fix ACS or the IOMMU: dltune check "
                   "--only pci.acs,iommu.mode)"});
  if (const auto* v = get(env, "NCCL_SHM_DISABLE"); v && truthy(*v))
    out.push_back({"NCCL_SHM_DISABLE", *v, Severity::kWarn,
                   fmt::format("NCCL_SHM_DISABLE={} turns off NCCL's shared-memory transport", *v),
                   "Without it, ranks on this host whose GPUs cannot reach each other peer to "
                   "peer talk through the network stack instead.",
                   "unset NCCL_SHM_DISABLE (give containers a large /dev/shm: --shm-size or "
                   "--ipc=host)"});
}

// The GPUs CUDA_VISIBLE_DEVICES may name: NVML's indexes and UUIDs (GPU-... and MIG-...).
void cuda(const Env& env, const inventory::HostFacts& facts, std::vector<EnvProblem>& out) {
  if (const auto* v = get(env, "CUDA_LAUNCH_BLOCKING"); v && truthy(*v))
    out.push_back({"CUDA_LAUNCH_BLOCKING", *v, Severity::kWarn,
                   fmt::format("CUDA_LAUNCH_BLOCKING={} is left on", *v),
                   "Every kernel launch then waits for the kernel to finish: the CPU can no "
                   "longer queue work ahead of the GPU, and training runs much slower. It is for "
                   "finding which kernel failed.",
                   "unset CUDA_LAUNCH_BLOCKING"});
  const auto& nvml = facts.gpu.nvml;
  if (const auto* v = get(env, "CUDA_VISIBLE_DEVICES"); v && nvml.loaded && !v->empty()) {
    std::set<std::string> uuids;
    for (const auto& d : nvml.devices) {
      if (d.uuid) uuids.insert(*d.uuid);
      for (const auto& m : d.mig_devices)
        if (m.uuid) uuids.insert(*m.uuid);
    }
    const auto count = nvml.devices.size();
    std::vector<std::string> missing;
    for (const auto part : text::split(*v, ',')) {
      const std::string id(part);
      if (id.empty()) continue;
      if (const auto n = text::to_uint(id)) {
        if (*n >= count) missing.push_back(id);
      } else if (id.starts_with("GPU-") || id.starts_with("MIG-")) {
        const bool found = std::any_of(uuids.begin(), uuids.end(),
                                       [&](const std::string& u) { return u.starts_with(id); });
        if (!found) missing.push_back(id);
      } else if (id != "-1") {
        missing.push_back(id);
      }
    }
    if (!missing.empty())
      out.push_back(
          {"CUDA_VISIBLE_DEVICES", *v, Severity::kCritical,
           fmt::format("CUDA_VISIBLE_DEVICES={} names GPUs this host does not have: {}", *v,
                       text::join(missing, ", ")),
           fmt::format("CUDA stops reading the list at the first entry it cannot find, so the "
                       "job sees fewer GPUs than it asks for, or none (torch.cuda.device_count() "
                       "== 0). This host has {} GPU{} (indexes 0-{}, or their UUIDs from "
                       "nvidia-smi -L).",
                       count, count == 1 ? "" : "s", count == 0 ? 0 : count - 1),
           "name indexes below the GPU count or UUIDs that nvidia-smi -L lists"});
  }
  if (const auto* v = get(env, "PYTORCH_CUDA_ALLOC_CONF")) {
    // The keys of PyTorch's caching allocator (CUDA semantics: "Optimizing memory usage with
    // PYTORCH_CUDA_ALLOC_CONF").
    static const std::set<std::string> kKeys = {"backend",
                                                "max_split_size_mb",
                                                "roundup_power2_divisions",
                                                "garbage_collection_threshold",
                                                "expandable_segments",
                                                "release_lock_on_cudamalloc",
                                                "pinned_use_cuda_host_register",
                                                "pinned_num_register_threads"};
    std::vector<std::string> unknown;
    for (const auto part : text::split(*v, ',')) {
      const std::string kv(part);
      const auto key = std::string(text::trim(kv.substr(0, kv.find(':'))));
      if (!key.empty() && !kKeys.count(key)) unknown.push_back(key);
    }
    if (!unknown.empty())
      out.push_back({"PYTORCH_CUDA_ALLOC_CONF", *v, Severity::kWarn,
                     fmt::format("PYTORCH_CUDA_ALLOC_CONF has keys PyTorch does not know: {}",
                                 text::join(unknown, ", ")),
                     "PyTorch refuses the whole setting at the first CUDA allocation "
                     "(\"Unrecognized CachingAllocator option\"), so the job fails at start.",
                     "use the keys of PyTorch's CUDA semantics page, e.g. "
                     "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"});
  } else if (!nvml.devices.empty()) {
    out.push_back(
        {"PYTORCH_CUDA_ALLOC_CONF", "", Severity::kInfo,
         "PYTORCH_CUDA_ALLOC_CONF is not set: with shapes that change from step to step, GPU "
         "memory fragments",
         "An out-of-memory error whose message shows much memory \"reserved by PyTorch but "
         "unallocated\" is fragmentation, not a too-large model: restarting only postpones it. "
         "expandable_segments:True lets the allocator grow segments instead of leaving holes.",
         "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"});
  }
}

void threads(const Env& env, const inventory::HostFacts& facts, const EnvJob& job,
             std::vector<EnvProblem>& out) {
  const auto* v = get(env, "OMP_NUM_THREADS");
  if (v == nullptr) return;
  const auto n = text::to_uint(*v);
  if (!n || *n == 0) return;
  std::optional<unsigned> ranks = job.ranks;
  if (!ranks)
    if (const auto* w = get(env, "LOCAL_WORLD_SIZE"))
      if (const auto r = text::to_uint(*w); r && *r > 0) ranks = static_cast<unsigned>(*r);
  const unsigned r = ranks.value_or(1);
  unsigned cpus = job.cpus.value_or(0);
  if (cpus == 0)
    cpus = facts.cpu.allowed ? static_cast<unsigned>(facts.cpu.allowed->size())
                             : static_cast<unsigned>(facts.cpu.online.size());
  if (cpus == 0 || *n * r <= cpus) return;
  out.push_back(
      {"OMP_NUM_THREADS", *v, Severity::kWarn,
       fmt::format("OMP_NUM_THREADS={} times {} rank{} is {} threads for {} CPUs", *v, r,
                   r == 1 ? "" : "s", *n * r, cpus),
       "Each rank's intra-op pool then competes with the others' and with the DataLoader "
       "workers for the same CPUs: threads wait for a CPU, and every step slows.",
       fmt::format("OMP_NUM_THREADS={} (the CPUs divided by the ranks, less the DataLoader "
                   "workers; dltune run sets it)",
                   std::max(1u, cpus / r))});
}

// "9.1" of "9.1.0.70"; the whole text when it has fewer parts.
std::string major_minor(const std::string& v) {
  const auto first = v.find('.');
  if (first == std::string::npos) return v;
  const auto second = v.find('.', first + 1);
  return second == std::string::npos ? v : v.substr(0, second);
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string("/") : path.substr(0, slash);
}

// A system cuDNN, NCCL or CUDA runtime in a directory of LD_LIBRARY_PATH, whose version is not
// the one of the NVIDIA wheel the Python environment has (nvidia-cudnn-cu12, nvidia-nccl-cu12,
// nvidia-cuda-runtime-cu12, which torch's wheels depend on). The dynamic linker searches
// LD_LIBRARY_PATH before a library's RUNPATH (ld.so(8)), so torch can load the system one;
// ld.so.conf's directories come after RUNPATH and shadow nothing.
void shadowing(const Env& env, const inventory::HostFacts& facts, const EnvJob& job,
               std::vector<EnvProblem>& out) {
  const auto* ld = get(env, "LD_LIBRARY_PATH");
  if (ld == nullptr || ld->empty()) return;
  auto real = [&](std::string d) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    if (job.resolve)
      if (auto r = job.resolve(d)) return *r;
    return d;
  };
  std::vector<std::pair<std::string, std::string>> dirs;  // as written, resolved
  for (const auto part : text::split(*ld, ':'))
    if (!part.empty() && part[0] == '/')
      dirs.emplace_back(std::string(part), real(std::string(part)));
  auto wheel = [&](std::string_view prefix) -> const inventory::PythonPackage* {
    for (const auto& p : facts.cuda.python_packages)
      if (p.name.starts_with(prefix) && !p.version.empty()) return &p;
    return nullptr;
  };
  struct System {
    std::string dir, version, path;
  };
  // The first directory of LD_LIBRARY_PATH that holds the library, with its version.
  auto first_in_path = [&](const std::vector<inventory::VersionFinding>& found)
      -> std::optional<std::pair<std::string, System>> {
    for (const auto& [written, resolved] : dirs)
      for (const auto& f : found)
        if (f.source == "library" && f.version && parent_of(f.path) == resolved)
          return std::make_pair(written, System{resolved, *f.version, f.path});
    return std::nullopt;
  };
  auto rest_of = [&](const std::string& written) {
    std::vector<std::string> keep;
    for (const auto part : text::split(*ld, ':'))
      if (!part.empty() && std::string(part) != written) keep.emplace_back(part);
    return text::join(keep, ":");
  };
  auto problem = [&](const char* what, const std::string& written, const System& sys,
                     const inventory::PythonPackage& w) {
    out.push_back(
        {"LD_LIBRARY_PATH", *ld, Severity::kWarn,
         fmt::format("LD_LIBRARY_PATH puts {} {} ({}) ahead of the {} {} wheel", what, sys.version,
                     written, w.name, w.version),
         fmt::format("The dynamic linker searches LD_LIBRARY_PATH before the wheel's own "
                     "RUNPATH, so torch can load {} instead, a version it was not built with: "
                     "it then fails at start (for cuDNN: \"cuDNN version incompatibility: "
                     "PyTorch was compiled against ... but found runtime version ...\") or runs "
                     "with that version's bugs and speed.",
                     sys.path),
         fmt::format("leave {} out of the training job's LD_LIBRARY_PATH (torch finds its "
                     "wheels' libraries itself): {}",
                     written,
                     rest_of(written).empty() ? std::string("unset LD_LIBRARY_PATH")
                                              : "export LD_LIBRARY_PATH=" + rest_of(written))});
  };
  if (const auto* w = wheel("nvidia-cudnn-cu"))
    if (auto s = first_in_path(facts.cuda.cudnn);
        s && major_minor(s->second.version) != major_minor(w->version))
      problem("cuDNN", s->first, s->second, *w);
  if (const auto* w = wheel("nvidia-nccl-cu"))
    if (auto s = first_in_path(facts.cuda.nccl);
        s && major_minor(s->second.version) != major_minor(w->version))
      problem("NCCL", s->first, s->second, *w);
  if (const auto* w = wheel("nvidia-cuda-runtime-cu"))
    for (const auto& [written, resolved] : dirs) {
      const inventory::Toolkit* toolkit = nullptr;
      for (const auto& t : facts.cuda.toolkits)
        for (const char* sub : {"/lib64", "/lib", "/targets/x86_64-linux/lib"})
          if (resolved == t.path + sub || real(t.path + sub) == resolved) toolkit = &t;
      if (toolkit == nullptr || !toolkit->version) continue;
      if (major_minor(*toolkit->version) != major_minor(w->version))
        problem("the CUDA runtime", written,
                System{resolved, *toolkit->version, resolved + "/libcudart.so"}, *w);
      break;
    }
}

}  // namespace

std::vector<EnvProblem> judge_environment(const Env& env, const inventory::HostFacts& facts,
                                          const EnvJob& job) {
  std::vector<EnvProblem> out;
  nccl(env, facts, out);
  cuda(env, facts, out);
  threads(env, facts, job, out);
  shadowing(env, facts, job, out);
  return out;
}

inventory::Json to_json(const EnvProblem& p) {
  return {{"variable", p.variable}, {"value", p.value}, {"severity", severity_name(p.severity)},
          {"summary", p.summary},   {"why", p.why},     {"fix", p.fix}};
}

std::string one_line(const EnvProblem& p) {
  return fmt::format("{}: {}", p.summary, p.fix);
}

std::vector<std::string> training_variables(const Env& env) {
  static const std::vector<std::string> kPrefixes = {
      "NCCL_",           "CUDA_",           "PYTORCH_",         "TORCH_",
      "OMP_NUM_THREADS", "MKL_NUM_THREADS", "LOCAL_WORLD_SIZE", "WORLD_SIZE"};
  std::vector<std::string> out;
  for (const auto& [k, v] : env)
    for (const auto& p : kPrefixes)
      if (k.starts_with(p)) {
        out.push_back(k + "=" + v);
        break;
      }
  return out;
}

std::vector<Finding> env_training(const AuditInput& in, const settings::ProfileEntry& e) {
  const std::string expected = "no variable that slows or breaks training";
  auto frame = [&] {
    Finding f;
    f.id = e.key;
    f.area = "environment";
    f.expected = expected;
    f.reason = e.reason;
    f.source = e.source;
    return f;
  };
  if (e.expected.as_bool() == false) {
    Finding f = frame();
    f.severity = Severity::kInfo;
    f.summary = "the training environment is not checked (the profile says false)";
    return {f};
  }
  const auto env = inventory::environment_for(in.root);
  const std::string where =
      in.root.live() ? "this shell's environment" : "the captured environment";
  EnvJob job;
  job.resolve = [&](const std::string& dir) -> std::optional<std::string> {
    auto r = in.root.resolve(dir);
    if (!r || !*r) return std::nullopt;
    return **r;
  };
  const auto problems = judge_environment(env, in.facts, job);
  const auto set = training_variables(env);
  if (problems.empty()) {
    Finding f = frame();
    f.summary = set.empty() ? fmt::format("no NCCL, CUDA or PyTorch variable in {}", where)
                            : fmt::format("{}: nothing against this host", where);
    f.actual = set.empty() ? "none set" : text::join(set, " ");
    f.evidence.push_back({"environ", f.actual});
    return {f};
  }
  std::vector<Finding> out;
  for (const auto& p : problems) {
    Finding f = frame();
    // A problem's own severity, never above what the profile gives the check.
    f.severity = std::min(p.severity, settings::severity_from(e.severity).value_or(p.severity));
    if (p.severity == Severity::kInfo) f.severity = Severity::kInfo;
    f.summary = p.summary;
    f.actual = p.value.empty() ? p.variable + " unset" : p.variable + "=" + p.value;
    f.evidence.push_back({"environ", f.actual});
    f.notes.push_back(p.why);
    f.fix = Fix{p.fix, false};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace dltune::audit
