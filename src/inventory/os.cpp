#include "inventory/os.hpp"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/time_format.hpp"
#include "host/parse/proc.hpp"
#include "inventory/json.hpp"
#include "inventory/mounts.hpp"

namespace dltune::inventory {

namespace {

void collect_cmdline(Context& ctx, OsFacts& f) {
  auto raw = ctx.read("os.cmdline", "/proc/cmdline");
  if (!raw) return;
  KernelCmdline c;
  c.raw = std::string(text::trim(*raw));
  for (const auto& p : host::parse::cmdline(*raw)) {
    if (p.key == "iommu") c.iommu = p.value.value_or("");
    if (p.key == "intel_iommu") c.intel_iommu = p.value.value_or("");
    if (p.key == "amd_iommu") c.amd_iommu = p.value.value_or("");
    if (p.key == "pci" && p.value) {
      for (const auto v : text::split(*p.value, ','))
        if (v == "noacs") c.pci_noacs = true;
    }
    // Ways to keep nouveau off the GPUs (kernel-parameters.txt; modprobe.d(5)).
    if ((p.key == "modprobe.blacklist" || p.key == "rd.driver.blacklist" ||
         p.key == "module_blacklist") &&
        p.value) {
      for (const auto v : text::split(*p.value, ','))
        if (v == "nouveau")
          f.nouveau_blacklist.push_back("/proc/cmdline: " + p.key + "=" + *p.value);
    }
    if (p.key == "nouveau.modeset" && p.value == "0")
      f.nouveau_blacklist.push_back("/proc/cmdline: nouveau.modeset=0");
  }
  f.cmdline = std::move(c);
}

void collect_modprobe(Context& ctx, OsFacts& f) {
  for (const char* dir : {"/etc/modprobe.d", "/usr/lib/modprobe.d", "/lib/modprobe.d"}) {
    for (const auto& name : ctx.list("os.modprobe", dir)) {
      if (!name.ends_with(".conf")) continue;
      const std::string path = std::string(dir) + "/" + name;
      auto content = ctx.read("os.modprobe", path, 65536);
      if (!content) continue;
      for (const auto line : text::lines(*content)) {
        const auto fl = text::fields(line);
        if (fl.size() >= 2 && fl[0] == "blacklist" && fl[1] == "nouveau")
          f.nouveau_blacklist.push_back(path + ": blacklist nouveau");
      }
    }
  }
}

// DMI vendor strings of the common hypervisors (systemd's detect-virt.c keeps the same table).
std::optional<std::string> virt_from_dmi(const std::string& s) {
  static const std::pair<const char*, const char*> kTable[] = {
      {"KVM", "kvm"},
      {"Amazon EC2", "amazon"},
      {"QEMU", "qemu"},
      {"VMware", "vmware"},
      {"VMW", "vmware"},
      {"innotek GmbH", "oracle"},
      {"VirtualBox", "oracle"},
      {"Xen", "xen"},
      {"Bochs", "bochs"},
      {"Parallels", "parallels"},
      {"BHYVE", "bhyve"},
      {"Google", "google"},
      {"Microsoft Corporation Virtual Machine", "microsoft"}};
  for (const auto& [needle, name] : kTable)
    if (s.find(needle) != std::string::npos) return std::string(name);
  return std::nullopt;
}

void collect_virtualization(Context& ctx, OsFacts& f, bool cpu_hypervisor_flag) {
  std::string dmi;
  for (const char* p : {"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name",
                        "/sys/class/dmi/id/board_vendor"}) {
    if (auto v = ctx.read_value("os.virtualization", p)) dmi += *v + " ";
  }
  if (auto v = virt_from_dmi(dmi)) {
    f.virtualization = *v;
  } else if (auto xen = ctx.read_value("os.virtualization", "/sys/hypervisor/type")) {
    f.virtualization = *xen;
  } else if (cpu_hypervisor_flag) {
    // No DMI (Firecracker, cloud-hypervisor) but the CPU says it runs under a VMM.
    f.virtualization = "vm (unknown hypervisor)";
  } else if (!dmi.empty()) {
    f.virtualization = "none";
  }
}

// Apptainer, and Singularity before it, set APPTAINER_CONTAINER (the image's path) and
// APPTAINER_NAME (its name), or SINGULARITY_CONTAINER and SINGULARITY_NAME, in every container,
// and every image holds /.singularity.d (Apptainer's user guide, "Environment and Metadata").
// It is the runtime nearest the process, so it wins over what the rest found (an Apptainer
// container on an overlay root, or started inside Docker). The variables can also come from a
// shell that was in a container (Slurm gives a job the environment it was submitted from), so
// nothing counts when / is a disk's own file system mounted whole: a container's root is its
// image (squashfs on a loop device, squashfuse, an overlay on it) or a directory bound there.
void collect_apptainer(Context& ctx, OsFacts& f, const host::parse::Mount* root_fs) {
  std::optional<std::string> runtime;
  std::vector<std::string> evidence;
  for (const auto& [name, runtime_name] :
       {std::pair{"APPTAINER_CONTAINER", "apptainer"}, std::pair{"APPTAINER_NAME", "apptainer"},
        std::pair{"SINGULARITY_CONTAINER", "singularity"},
        std::pair{"SINGULARITY_NAME", "singularity"}}) {
    const auto v = ctx.env(name);
    if (!v || v->empty()) continue;
    if (!runtime) runtime = runtime_name;  // Apptainer sets both families: its own comes first
    evidence.push_back(fmt::format("{}={}", name, *v));
  }
  if (ctx.root().exists("/.singularity.d")) {
    if (!runtime) runtime = "apptainer";
    evidence.push_back("/.singularity.d exists");
  }
  if (!runtime) return;
  const bool whole_disk = root_fs && root_fs->root == "/" && root_fs->source.starts_with("/dev/") &&
                          !root_fs->source.starts_with("/dev/loop") &&
                          root_fs->fstype != "overlay" && root_fs->fstype != "squashfs" &&
                          !root_fs->fstype.starts_with("fuse");
  if (whole_disk) {
    f.container_evidence.push_back(fmt::format("{}, but / is {} on {}: not counted",
                                               fmt::join(evidence, ", "), root_fs->fstype,
                                               root_fs->source));
    return;
  }
  f.container = *runtime;
  for (auto& e : evidence) f.container_evidence.push_back(std::move(e));
}

void collect_container(Context& ctx, OsFacts& f, const std::vector<host::parse::Mount>& mounts,
                       const std::vector<host::parse::CgroupMembership>& own) {
  const host::parse::Mount* root_fs = nullptr;
  for (const auto& m : mounts)
    if (m.mount_point == "/") root_fs = &m;
  // A root file system on a block device is a machine's own disk, not a container's layers.
  const bool root_on_disk =
      root_fs && root_fs->source.starts_with("/dev/") && root_fs->fstype != "overlay";
  if (ctx.root().exists("/.dockerenv")) {
    if (root_on_disk) {
      // Images built from a container (a VM's disk made from a Docker image) keep the file.
      f.container_evidence.push_back("/.dockerenv exists, but / is " + root_fs->fstype + " on " +
                                     root_fs->source + ": not counted");
    } else {
      f.container = "docker";
      f.container_evidence.push_back("/.dockerenv exists");
    }
  }
  if (ctx.root().exists("/run/.containerenv")) {
    if (!f.container) f.container = "podman";
    f.container_evidence.push_back("/run/.containerenv exists");
  }
  for (const auto& m : own) {
    if (m.path.find("/kubepods") != std::string::npos) {
      f.container = "kubernetes";
      f.container_evidence.push_back("cgroup " + m.path);
      break;
    }
    if (m.path.find("/docker/") != std::string::npos ||
        m.path.find("docker-") != std::string::npos) {
      if (!f.container) f.container = "docker";
      f.container_evidence.push_back("cgroup " + m.path);
      break;
    }
  }
  if (root_fs && root_fs->fstype == "overlay") {
    if (!f.container) f.container = "container";
    f.container_evidence.push_back("the root file system is overlay");
  }
  collect_apptainer(ctx, f, root_fs);
}

void collect_cgroup(Context& ctx, OsFacts& f, const std::vector<host::parse::Mount>& mounts,
                    const std::vector<host::parse::CgroupMembership>& own) {
  CgroupFacts c;
  std::vector<std::string> v1;
  for (const auto& m : mounts) {
    if (m.fstype == "cgroup2" && !c.v2_mount) c.v2_mount = m.mount_point;
    if (m.fstype == "cgroup") {
      for (const auto& o : m.super_options) {
        if (o == "rw" || o == "ro" || o.find('=') != std::string::npos || o == "xattr" ||
            o == "noprefix" || o == "clone_children")
          continue;
        v1.push_back(o);
      }
    }
  }
  std::sort(v1.begin(), v1.end());
  v1.erase(std::unique(v1.begin(), v1.end()), v1.end());
  if (!c.v2_mount && v1.empty()) return;  // no cgroup file system mounted (or no mountinfo)
  std::vector<std::string> v2;
  if (c.v2_mount) {
    if (auto s = ctx.read_value("os.cgroup", *c.v2_mount + "/cgroup.controllers")) {
      for (const auto x : text::fields(*s)) v2.emplace_back(x);
    }
  }
  if (!v1.empty() && c.v2_mount) {
    c.version = "hybrid";
    c.controllers = v1;
    c.v2_controllers = v2;
  } else if (!v1.empty()) {
    c.version = "v1";
    c.controllers = v1;
  } else {
    c.version = "v2";
    c.controllers = v2;
  }
  for (const auto& m : own) {
    if (c.version == "v2" && m.hierarchy == 0) c.own_path = m.path;
    if (c.version != "v2" &&
        std::find(m.controllers.begin(), m.controllers.end(), "memory") != m.controllers.end())
      c.own_path = m.path;
  }
  auto self_ns = ctx.root().readlink("/proc/self/ns/cgroup");
  auto init_ns = ctx.root().readlink("/proc/1/ns/cgroup");
  if (self_ns && *self_ns && init_ns && *init_ns) c.namespaced = **self_ns != **init_ns;
  if (f.container && c.version == "v2" && c.own_path == "/") c.namespaced = true;
  f.cgroup = std::move(c);
}

}  // namespace

OsFacts collect_os(Context& ctx) {
  OsFacts f;
  auto rel = ctx.read("os.release", "/etc/os-release", 65536);
  if (!rel) rel = ctx.read("os.release", "/usr/lib/os-release", 65536);
  if (rel) {
    const auto kv = host::parse::os_release(*rel);
    auto get = [&](const char* k) -> std::optional<std::string> {
      const auto it = kv.find(k);
      return it == kv.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    f.name = get("PRETTY_NAME");
    f.id = get("ID");
    f.version_id = get("VERSION_ID");
  }
  f.hostname = ctx.read_value("os.hostname", "/proc/sys/kernel/hostname");
  f.kernel_release = ctx.read_value("os.kernel", "/proc/sys/kernel/osrelease");
  f.kernel_version = ctx.read_value("os.kernel", "/proc/sys/kernel/version");
  collect_cmdline(ctx, f);
  collect_modprobe(ctx, f);
  if (auto stat = ctx.read("os.boot_time", "/proc/stat")) {
    f.boot_time = host::parse::boot_time(*stat);
    if (!f.boot_time) ctx.problem("os.boot_time", "/proc/stat", "no 'btime N' line");
  }
  if (auto up = ctx.read_value("os.uptime", "/proc/uptime")) {
    const auto fl = text::fields(*up);
    if (!fl.empty()) f.uptime_seconds = text::to_double(fl[0]);
    if (!f.uptime_seconds) ctx.problem("os.uptime", "/proc/uptime", "expected 'SECONDS IDLE'");
  }
  bool hv = false;
  if (auto ci = ctx.read("os.virtualization", "/proc/cpuinfo"))
    hv = host::parse::cpuinfo(*ci).hypervisor;
  collect_virtualization(ctx, f, hv);

  const auto& mounts = host_mounts(ctx);
  std::vector<host::parse::CgroupMembership> own;
  if (auto text = ctx.read("os.cgroup", "/proc/self/cgroup")) {
    if (auto parsed = host::parse::proc_cgroup(*text)) {
      own = std::move(*parsed);
    } else {
      ctx.problem("os.cgroup", "/proc/self/cgroup", parsed.error().message());
    }
  }
  // Without the mount table the root file system cannot be told (an overlay, a disk): unknown.
  f.container_known = !mounts.empty();
  collect_container(ctx, f, mounts, own);
  collect_cgroup(ctx, f, mounts, own);
  return f;
}

Json to_json(const OsFacts& f) {
  Json j = Json::object();
  put(j, "name", f.name);
  put(j, "id", f.id);
  put(j, "version_id", f.version_id);
  put(j, "hostname", f.hostname);
  put(j, "kernel_release", f.kernel_release);
  put(j, "kernel_version", f.kernel_version);
  if (f.cmdline) {
    Json c;
    c["raw"] = f.cmdline->raw;
    put(c, "iommu", f.cmdline->iommu);
    put(c, "intel_iommu", f.cmdline->intel_iommu);
    put(c, "amd_iommu", f.cmdline->amd_iommu);
    c["pci_noacs"] = f.cmdline->pci_noacs;
    j["cmdline"] = std::move(c);
  }
  j["nouveau_blacklisted"] = !f.nouveau_blacklist.empty();
  j["nouveau_blacklist"] = f.nouveau_blacklist;
  put(j, "boot_time", f.boot_time);
  put(j, "uptime_seconds", f.uptime_seconds);
  put(j, "virtualization", f.virtualization);
  put(j, "container", f.container);
  j["container_evidence"] = f.container_evidence;
  if (f.cgroup) {
    Json c;
    c["version"] = f.cgroup->version;
    put(c, "v2_mount", f.cgroup->v2_mount);
    c["controllers"] = f.cgroup->controllers;
    if (f.cgroup->version == "hybrid") c["v2_controllers"] = f.cgroup->v2_controllers;
    put(c, "own_path", f.cgroup->own_path);
    put(c, "namespaced", f.cgroup->namespaced);
    j["cgroup"] = std::move(c);
  }
  return j;
}

std::vector<text::Section> render_os(const OsFacts& f) {
  text::Section s{"Host", {}};
  if (f.hostname) s.add("hostname", *f.hostname);
  if (f.name) s.add("os", *f.name);
  if (f.kernel_release) s.add("kernel", *f.kernel_release);
  if (f.cmdline) {
    std::vector<std::string> notable;
    if (f.cmdline->iommu) notable.push_back("iommu=" + *f.cmdline->iommu);
    if (f.cmdline->intel_iommu) notable.push_back("intel_iommu=" + *f.cmdline->intel_iommu);
    if (f.cmdline->amd_iommu) notable.push_back("amd_iommu=" + *f.cmdline->amd_iommu);
    if (f.cmdline->pci_noacs) notable.push_back("pci=noacs");
    s.add("kernel options", notable.empty() ? "no iommu or pci options set"
                                            : fmt::format("{}", fmt::join(notable, " ")));
  }
  s.add("nouveau blacklist", f.nouveau_blacklist.empty()
                                 ? "none"
                                 : fmt::format("{}", fmt::join(f.nouveau_blacklist, "; ")));
  if (f.boot_time) {
    std::string v = text::format_time(static_cast<std::int64_t>(*f.boot_time),
                                      "%Y-%m-%d %H:%M:%S UTC", text::TimeZone::kUtc);
    if (f.uptime_seconds) {
      const auto up = static_cast<std::int64_t>(*f.uptime_seconds);
      v += fmt::format(" (up {}d {}h {}m)", up / 86400, up % 86400 / 3600, up % 3600 / 60);
    }
    s.add("booted", v);
  }
  if (f.virtualization) s.add("virtualization", *f.virtualization);
  s.add("container",
        f.container ? fmt::format("{} ({})", *f.container, fmt::join(f.container_evidence, "; "))
        : f.container_known ? "none detected"
                            : "unknown (no mount table: see Unknown)");
  if (f.cgroup) {
    std::string v = "cgroup " + f.cgroup->version;
    if (!f.cgroup->controllers.empty())
      v += fmt::format(": {}", fmt::join(f.cgroup->controllers, " "));
    s.add("cgroups", v);
    if (f.cgroup->version == "hybrid")
      s.add("cgroup2 mount",
            fmt::format("{} ({})", f.cgroup->v2_mount.value_or("?"),
                        f.cgroup->v2_controllers.empty()
                            ? "no controllers"
                            : fmt::format("{}", fmt::join(f.cgroup->v2_controllers, " "))));
    if (f.cgroup->own_path) s.add("own cgroup", *f.cgroup->own_path);
  }
  return {s};
}

}  // namespace dltune::inventory
