#include "inventory/gpu.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "gpu/amdgpu_sysfs.hpp"
#include "gpu/nvml_library.hpp"
#include "gpu/report_json.hpp"
#include "gpu/report_text.hpp"
#include "host/parse/nvidia_version.hpp"
#include "host/parse/pci_device.hpp"
#include "host/parse/pci_ids.hpp"
#include "host/parse/proc_modules.hpp"
#include "inventory/capture_files.hpp"
#include "inventory/json.hpp"

namespace dltune::inventory {

namespace {

constexpr const char* kFact = "gpu";
constexpr const char* kPciDevices = "/sys/bus/pci/devices";
constexpr std::uint16_t kNvidia = 0x10de;
constexpr std::uint16_t kAmd = 0x1002;

// The modules env reports on (/proc/modules names).
constexpr const char* kModules[] = {"nvidia",         "nvidia_uvm", "nvidia_drm",
                                    "nvidia_modeset", "nouveau",    "amdgpu"};
// Debian and Ubuntu keep pci.ids in /usr/share/misc; Fedora, RHEL and Arch in /usr/share/hwdata.
constexpr const char* kPciIdsPaths[] = {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"};
// Where the driver installs libnvidia-ml.so.<version> (Debian/Ubuntu multiarch, RHEL, others).
constexpr const char* kLibraryDirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                        "/usr/lib64", "/usr/lib"};

// Names of display vendors that are not compute GPUs, for when pci.ids is not read (it is only
// read when there is a compute GPU) or does not know them. Names as pci.ids writes them.
std::optional<std::string> builtin_vendor_name(std::uint16_t vendor) {
  switch (vendor) {
    case kNvidia:
      return "NVIDIA Corporation";
    case kAmd:
      return "Advanced Micro Devices, Inc. [AMD/ATI]";
    case 0x1a03:
      return "ASPEED Technology, Inc.";
    case 0x1af4:
      return "Red Hat, Inc.";
    case 0x8086:
      return "Intel Corporation";
    case 0x15ad:
      return "VMware";
    case 0x102b:
      return "Matrox Electronics Systems Ltd.";
    case 0x1013:
      return "Cirrus Logic";
    default:
      return std::nullopt;
  }
}

PciLinkFacts read_link(Context& ctx, const std::string& dir) {
  PciLinkFacts l;
  auto value = [&](const char* name) { return ctx.read_value(kFact, dir + "/" + name); };
  if (const auto v = value("current_link_speed"))
    if (const auto s = host::parse::pcie_link_speed(*v)) {
      l.speed_gts = s->gts;
      l.generation = s->generation;
    }
  if (const auto v = value("max_link_speed"))
    if (const auto s = host::parse::pcie_link_speed(*v)) {
      l.max_speed_gts = s->gts;
      l.max_generation = s->generation;
    }
  if (const auto v = value("current_link_width")) l.width = host::parse::pcie_link_width(*v);
  if (const auto v = value("max_link_width")) l.max_width = host::parse::pcie_link_width(*v);
  if ((l.speed_gts && l.max_speed_gts) || (l.width && l.max_width))
    l.downgraded = (l.speed_gts && l.max_speed_gts && *l.speed_gts + 0.01 < *l.max_speed_gts) ||
                   (l.width && l.max_width && *l.width < *l.max_width);
  return l;
}

std::optional<PciGpu> read_pci_device(Context& ctx, const std::string& name) {
  const std::string dir = std::string(kPciDevices) + "/" + name;
  const auto cls = ctx.read_value(kFact, dir + "/class");
  const auto class_code = cls ? host::parse::pci_hex(*cls) : std::nullopt;
  // Display controllers (0x03); processing accelerators (0x12) only from NVIDIA and AMD, whose
  // Instinct MI300 are such (any other accelerator is not a GPU).
  if (!class_code || ((*class_code >> 16) != 0x03 && (*class_code >> 16) != 0x12))
    return std::nullopt;
  const auto vendor = ctx.read_value(kFact, dir + "/vendor");
  const auto device = ctx.read_value(kFact, dir + "/device");
  const auto vendor_id = vendor ? host::parse::pci_hex(*vendor) : std::nullopt;
  const auto device_id = device ? host::parse::pci_hex(*device) : std::nullopt;
  if (!vendor_id || !device_id) {
    ctx.problem(kFact, dir + "/vendor", "no vendor or device id");
    return std::nullopt;
  }
  PciGpu g;
  g.address = host::parse::pci_address(name).value_or(name);
  g.class_code = *class_code;
  g.vendor_id = static_cast<std::uint16_t>(*vendor_id);
  g.device_id = static_cast<std::uint16_t>(*device_id);
  if ((g.class_code >> 16) == 0x12 && g.vendor_id != kNvidia && g.vendor_id != kAmd)
    return std::nullopt;
  g.vendor = g.vendor_id == kNvidia ? "nvidia" : g.vendor_id == kAmd ? "amd" : "other";
  g.compute = g.vendor != "other";
  g.vendor_name = builtin_vendor_name(g.vendor_id);
  if (const auto v = ctx.read_value(kFact, dir + "/subsystem_vendor"))
    if (const auto id = host::parse::pci_hex(*v))
      g.subsystem_vendor_id = static_cast<std::uint16_t>(*id);
  if (const auto v = ctx.read_value(kFact, dir + "/subsystem_device"))
    if (const auto id = host::parse::pci_hex(*v))
      g.subsystem_device_id = static_cast<std::uint16_t>(*id);
  if (!g.compute) return g;  // the rest only matters for a GPU that trains

  std::optional<std::vector<int>> cpus;
  if (const auto v = ctx.read_value(kFact, dir + "/local_cpulist")) {
    cpus = text::parse_cpu_list(*v);
    if (cpus && !cpus->empty()) g.local_cpus = text::format_cpu_list(*cpus);
  }
  if (const auto v = ctx.read_value(kFact, dir + "/numa_node")) {
    const auto n = text::to_int(*v);
    if (n && *n >= 0 && *n < 4096) {
      g.numa_node = static_cast<int>(*n);
      g.numa_node_source = "numa_node";
    }
  }
  if (!g.numa_node && cpus) {
    if (const auto n = node_of_cpus(ctx, kFact, *cpus)) {
      g.numa_node = *n;
      g.numa_node_source = "local_cpulist";
    }
  }
  if (auto link = ctx.root().readlink(dir + "/driver"); link && *link)
    g.driver = text::base_name(**link);
  else if (!link)
    ctx.problem(kFact, link.error());
  g.link = read_link(ctx, dir);
  g.pcie_place = read_pcie_place(ctx, kFact, dir);
  return g;
}

// Names from pci.ids (format: host/parse/pci_ids.hpp), path by path. The next file is read only
// while a compute GPU has no device name yet: one file can be older than the GPU (Debian 12's
// pci.ids of 2023.04 knows the H100s but none of the later GPUs), and the other may be newer. A
// name a file gave is kept; a later file fills in only what is still missing.
void name_devices(Context& ctx, GpuFacts& f) {
  std::vector<host::parse::PciId> wanted;
  for (const auto& d : f.devices)
    wanted.push_back({d.vendor_id, d.device_id, d.subsystem_vendor_id, d.subsystem_device_id});
  std::vector<bool> vendor_named(f.devices.size(), false);  // by a pci.ids, not built in
  bool named_any = false;
  auto unnamed_gpu = [&] {
    return std::any_of(f.devices.begin(), f.devices.end(),
                       [](const PciGpu& d) { return d.compute && !d.device_name; });
  };
  for (const char* path : kPciIdsPaths) {
    if (f.pci_ids && !unnamed_gpu()) break;
    const auto text = ctx.read(kFact, path, 8u << 20);
    if (!text) continue;
    const auto names = host::parse::pci_ids_lookup(*text, wanted);
    bool named_here = false;
    for (std::size_t i = 0; i < f.devices.size(); ++i) {
      auto& d = f.devices[i];
      if (names[i].vendor && !vendor_named[i]) {
        d.vendor_name = names[i].vendor;
        vendor_named[i] = true;
      }
      if (!d.device_name && names[i].device) {
        d.device_name = names[i].device;
        named_here = named_here || d.compute;
      }
      if (!d.subsystem_name) d.subsystem_name = names[i].subsystem;
    }
    // The file the names came from: the first one read, unless only a later one named a GPU.
    if (!f.pci_ids || (!named_any && named_here)) f.pci_ids = path;
    named_any = named_any || named_here;
  }
}

void read_driver_versions(Context& ctx, GpuFacts& f) {
  constexpr const char* kVersion = "/proc/driver/nvidia/version";
  if (const auto text = ctx.read(kFact, kVersion, 65536)) {
    if (auto v = host::parse::nvidia_version(*text)) {
      f.driver.kernel_module_version = v->version;
      f.driver.kernel_module_open = v->open_kernel_module;
    } else {
      ctx.problem(kFact, kVersion, v.error().message());
    }
  }
  if (f.nvml.loaded && f.nvml.driver_version) {
    f.driver.user_library_version = f.nvml.driver_version;
    f.driver.user_library_source = "nvml";
  } else {
    // The driver installs libnvidia-ml.so.<version> and the link libnvidia-ml.so.1 to it.
    constexpr std::string_view kPrefix = "libnvidia-ml.so.";
    auto version_of = [&](std::string_view file) -> std::optional<std::string> {
      if (!file.starts_with(kPrefix)) return std::nullopt;
      const auto v = file.substr(kPrefix.size());
      if (!host::parse::is_driver_version(v)) return std::nullopt;
      return std::string(v);
    };
    for (const char* dir : kLibraryDirs) {
      const std::string so1 = std::string(dir) + "/libnvidia-ml.so.1";
      std::optional<std::string> found;
      if (auto link = ctx.root().readlink(so1); link && *link) {
        if (const auto v = version_of(text::base_name(**link)))
          found = std::string(dir) + "/" + std::string(text::base_name(**link));
      }
      if (!found && ctx.root().exists(so1)) {
        for (const auto& name : ctx.list(kFact, dir))
          if (version_of(name)) found = std::string(dir) + "/" + name;
      }
      if (found) {
        f.driver.user_library_version = version_of(text::base_name(*found));
        f.driver.user_library_source = *found;
        break;
      }
    }
  }
  if (f.driver.kernel_module_version && f.driver.user_library_version)
    f.driver.match = *f.driver.kernel_module_version == *f.driver.user_library_version;
}

void read_modules(Context& ctx, GpuFacts& f) {
  const auto text = ctx.read(kFact, "/proc/modules");
  if (!text) return;
  const auto parsed = host::parse::proc_modules(*text);
  if (!parsed.errors.empty()) ctx.problem(kFact, "/proc/modules", parsed.errors.front());
  for (const char* name : kModules) f.modules[name] = false;
  for (const auto& m : parsed.modules)
    if (f.modules.count(m.name)) f.modules[m.name] = true;
}

void read_dev_nodes(Context& ctx, GpuFacts& f) {
  auto names = ctx.root().list("/dev");
  if (!names) {
    ctx.problem(kFact, names.error());
    return;
  }
  if (!*names) return;
  std::vector<std::string> nodes;
  for (const auto& n : **names)
    if (n.starts_with("nvidia")) nodes.push_back(n);
  f.dev_nodes = std::move(nodes);
}

// Whether depmod's modules.dep lists an nvidia.ko (any compression): a line starts with the
// module's path, relative to the release's directory, and a colon.
std::optional<std::string> nvidia_module_in(std::string_view modules_dep) {
  for (const auto line : text::lines(modules_dep)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const auto path = line.substr(0, colon);
    const auto name = text::base_name(path);
    if (name == "nvidia.ko" || name.starts_with("nvidia.ko.")) return std::string(path);
  }
  return std::nullopt;
}

void read_module_builds(Context& ctx, GpuFacts& f) {
  const auto nvidia = f.modules.find("nvidia");
  if (nvidia == f.modules.end() || nvidia->second) return;
  if (std::none_of(f.devices.begin(), f.devices.end(),
                   [](const PciGpu& d) { return d.vendor == "nvidia" && d.compute; }))
    return;
  NvidiaModuleBuilds b;
  b.running_kernel = ctx.read_value(kFact, "/proc/sys/kernel/osrelease");
  constexpr std::size_t kMaxModulesDep = 16u << 20;
  for (const auto& release : ctx.list(kFact, "/lib/modules")) {
    const auto dep = ctx.read(kFact, "/lib/modules/" + release + "/modules.dep", kMaxModulesDep);
    if (!dep) continue;
    const auto path = nvidia_module_in(*dep);
    if (b.running_kernel && release == *b.running_kernel) {
      b.for_running_kernel = path.has_value();
      b.path = path;
    } else if (path) {
      b.other_kernels.push_back(release);
    }
  }
  f.module_builds = std::move(b);
}

gpu::Report nvml_from_capture(Context& ctx) {
  gpu::Report r;
  r.backend = "nvml";
  const auto text = ctx.read(kFact, capture_files::kNvml, 16u << 20);
  if (!text) {
    r.error = fmt::format("not recorded in this host tree ({})", capture_files::kNvml);
    return r;
  }
  auto parsed = gpu::report_from_json(*text);
  if (!parsed.issues.empty()) ctx.problem("gpu.nvml", capture_files::kNvml, parsed.issues.front());
  if (!parsed.report.loaded && !parsed.report.error && !parsed.issues.empty())
    parsed.report.error =
        fmt::format("unreadable record {}: {}", capture_files::kNvml, parsed.issues.front());
  return std::move(parsed.report);
}

}  // namespace

GpuFacts collect_gpus(Context& ctx, const std::string& nvml_library) {
  // A tree that is this kernel's own (a mount of the live host) has a live NVML to ask.
  if (!ctx.root().this_kernel()) {
    auto f = collect_gpus(ctx, nvml_from_capture(ctx));
    f.nvml_from_capture = true;
    return f;
  }
  gpu::Report nvml;
  for (const auto& backend : gpu::make_backends({nvml_library, gpu::nvml_libraries_in(ctx.root())}))
    if (backend->name() == "nvml") nvml = backend->query();
  return collect_gpus(ctx, std::move(nvml));
}

namespace {

// AMD's GPUs from amdgpu's sysfs, in a host tree as on the live host (the files are sysfs's).
void read_amdgpu(Context& ctx, GpuFacts& f) {
  if (std::none_of(f.devices.begin(), f.devices.end(),
                   [](const PciGpu& d) { return d.vendor == "amd" && d.driver == "amdgpu"; }))
    return;
  f.amdgpu = gpu::amdgpu::query(ctx.root());
  for (auto& d : f.devices)
    for (const auto& a : f.amdgpu.devices)
      if (a.pci_bus_id == d.address) d.amdgpu_index = a.index;
}

}  // namespace

GpuFacts collect_gpus(Context& ctx, gpu::Report nvml) {
  GpuFacts f;
  f.nvml = std::move(nvml);
  for (const auto& name : ctx.list(kFact, kPciDevices))
    if (auto g = read_pci_device(ctx, name)) f.devices.push_back(std::move(*g));
  std::sort(f.devices.begin(), f.devices.end(),
            [](const PciGpu& a, const PciGpu& b) { return a.address < b.address; });
  if (std::any_of(f.devices.begin(), f.devices.end(), [](const PciGpu& d) { return d.compute; }))
    name_devices(ctx, f);
  for (auto& d : f.devices)
    for (const auto& n : f.nvml.devices)
      if (n.pci_bus_id == d.address) d.nvml_index = n.index;
  read_amdgpu(ctx, f);
  read_driver_versions(ctx, f);
  read_modules(ctx, f);
  if (has_nvidia_gpu(f)) read_dev_nodes(ctx, f);
  read_module_builds(ctx, f);
  return f;
}

namespace {

std::string hex4(std::uint32_t v) {
  return fmt::format("{:04x}", v);
}

Json device_json(const PciGpu& d) {
  Json j;
  j["pci_address"] = d.address;
  j["vendor"] = d.vendor;
  j["compute"] = d.compute;
  j["vendor_id"] = hex4(d.vendor_id);
  j["device_id"] = hex4(d.device_id);
  if (d.subsystem_vendor_id) j["subsystem_vendor_id"] = hex4(*d.subsystem_vendor_id);
  if (d.subsystem_device_id) j["subsystem_device_id"] = hex4(*d.subsystem_device_id);
  j["class"] = fmt::format("{:06x}", d.class_code);
  put(j, "vendor_name", d.vendor_name);
  put(j, "device_name", d.device_name);
  put(j, "subsystem_name", d.subsystem_name);
  put(j, "numa_node", d.numa_node);
  put(j, "numa_node_source", d.numa_node_source);
  put(j, "local_cpus", d.local_cpus);
  if (d.pcie_place) {
    j["pcie_root"] = d.pcie_place->root;
    j["pcie_path"] = d.pcie_place->path;
  }
  put(j, "driver", d.driver);
  Json pcie = Json::object();
  put(pcie, "speed_gts", d.link.speed_gts);
  put(pcie, "max_speed_gts", d.link.max_speed_gts);
  put(pcie, "generation", d.link.generation);
  put(pcie, "max_generation", d.link.max_generation);
  put(pcie, "width", d.link.width);
  put(pcie, "max_width", d.link.max_width);
  if (!pcie.empty()) j["pcie"] = std::move(pcie);
  put(j, "link_downgraded", d.link.downgraded);
  put(j, "nvml_index", d.nvml_index);
  put(j, "amdgpu_index", d.amdgpu_index);
  return j;
}

const gpu::Device* nvml_device(const GpuFacts& f, std::optional<unsigned> index) {
  if (!index) return nullptr;
  for (const auto& n : f.nvml.devices)
    if (n.index == *index) return &n;
  return nullptr;
}

std::string pci_row(const PciGpu& d) {
  std::string s = fmt::format("{}  {}:{}", d.address, hex4(d.vendor_id), hex4(d.device_id));
  if (d.subsystem_vendor_id && d.subsystem_device_id)
    s +=
        fmt::format(" subsystem {}:{}", hex4(*d.subsystem_vendor_id), hex4(*d.subsystem_device_id));
  return s;
}

// "NVIDIA Corporation GH100 [H100 SXM5 80GB] (H100 SXM5 80GB)" from pci.ids, as far as known.
std::string pci_name(const PciGpu& d) {
  std::string s = d.vendor_name.value_or(d.vendor);
  if (d.device_name) s += " " + *d.device_name;
  if (d.subsystem_name) s += fmt::format(" ({})", *d.subsystem_name);
  return s;
}

void add_gpu_block(text::Section& s, const GpuFacts& f, const PciGpu& d, std::size_t ordinal) {
  const auto* n = nvml_device(f, d.nvml_index);
  if (n == nullptr && d.amdgpu_index)
    for (const auto& a : f.amdgpu.devices)
      if (a.index == *d.amdgpu_index) n = &a;
  const unsigned index = n != nullptr ? n->index : static_cast<unsigned>(ordinal);
  s.add(fmt::format("GPU {}", index), n != nullptr && n->name ? *n->name : pci_name(d));
  s.add("PCI", pci_row(d), 1);
  if (d.driver) s.add("Driver", *d.driver, 1);
  std::string numa = d.numa_node ? fmt::format("{}", *d.numa_node) : "unknown";
  if (d.numa_node_source && *d.numa_node_source == "local_cpulist")
    numa += " (from its local CPUs)";
  if (d.local_cpus) numa += fmt::format(", local CPUs {}", *d.local_cpus);
  s.add("NUMA node", numa, 1);
  if (d.pcie_place) s.add("PCIe path", pcie_path_text(*d.pcie_place), 1);
  const auto& l = d.link;
  std::string link = gpu::pcie_text(l.generation, l.width, l.max_generation, l.max_width);
  if (!link.empty()) {
    if (!l.generation && l.speed_gts) link = fmt::format("{} GT/s ", *l.speed_gts) + link;
    if (l.downgraded == true)
      link +=
          " DOWNGRADED (an idle GPU may lower its link speed to save power; "
          "check again under load)";
    s.add("PCIe link", link, 1);
  }
  if (n != nullptr) gpu::add_device_rows(s, *n, 1, link.empty());
}

}  // namespace

Json nvml_json(const GpuFacts& f) {
  return gpu::to_json(f.nvml);
}

Json to_json(const GpuFacts& f) {
  Json j;
  Json devices = Json::array();
  for (const auto& d : f.devices) devices.push_back(device_json(d));
  j["devices"] = std::move(devices);
  j["nvml"] = nvml_json(f);
  j["nvml_source"] = f.nvml_from_capture ? "capture" : "live";
  if (f.amdgpu.loaded) j["amdgpu"] = gpu::to_json(f.amdgpu);
  Json driver = Json::object();
  put(driver, "kernel_module_version", f.driver.kernel_module_version);
  put(driver, "kernel_module_open", f.driver.kernel_module_open);
  put(driver, "user_library_version", f.driver.user_library_version);
  put(driver, "user_library_source", f.driver.user_library_source);
  put(driver, "match", f.driver.match);
  j["driver"] = std::move(driver);
  Json modules = Json::object();
  for (const auto& [name, loaded] : f.modules) modules[name] = loaded;
  j["modules"] = std::move(modules);
  put(j, "pci_ids", f.pci_ids);
  if (f.dev_nodes) j["dev_nodes"] = *f.dev_nodes;
  if (f.module_builds) {
    Json b = Json::object();
    put(b, "running_kernel", f.module_builds->running_kernel);
    put(b, "for_running_kernel", f.module_builds->for_running_kernel);
    put(b, "path", f.module_builds->path);
    b["other_kernels"] = f.module_builds->other_kernels;
    j["module_builds"] = std::move(b);
  }
  return j;
}

std::vector<text::Section> render_gpus(const GpuFacts& f) {
  text::Section s{"GPUs", {}};
  std::size_t ordinal = 0;
  std::set<unsigned> shown;
  for (const auto& d : f.devices) {
    if (!d.compute) continue;
    add_gpu_block(s, f, d, ordinal++);
    if (d.nvml_index) shown.insert(*d.nvml_index);
  }
  // NVML devices that sysfs does not show (a container without /sys/bus/pci, a capture of one).
  for (const auto& n : f.nvml.devices) {
    if (shown.count(n.index)) continue;
    s.add(fmt::format("GPU {}", n.index), n.name.value_or("(NVML only)"));
    if (n.pci_bus_id) s.add("PCI", *n.pci_bus_id, 1);
    gpu::add_device_rows(s, n, 1, true);
  }
  if (s.rows.empty()) s.add("GPU", "none found in PCI sysfs");
  for (const auto& d : f.devices) {
    if (d.compute) continue;
    s.add("Display", fmt::format("{}  {}{} (not a compute GPU)", pci_row(d), pci_name(d),
                                 d.driver ? ", driver " + *d.driver : ""));
  }
  if (f.driver.kernel_module_version)
    s.add("Kernel module",
          *f.driver.kernel_module_version +
              (f.driver.kernel_module_open == true ? " (open kernel module)" : ""));
  if (f.driver.user_library_version) {
    std::string lib = fmt::format("{} ({})", *f.driver.user_library_version,
                                  f.driver.user_library_source == "nvml"
                                      ? "from NVML"
                                      : f.driver.user_library_source.value_or(""));
    if (f.driver.match == false)
      lib +=
          " MISMATCH with the kernel module (NVML fails with \"Driver/library version "
          "mismatch\" until they agree: reboot or reload the module)";
    s.add("User library", lib);
  }
  if (!f.modules.empty()) {
    std::vector<std::string> on, off;
    for (const auto& [name, loaded] : f.modules) (loaded ? on : off).push_back(name);
    std::string m;
    if (!on.empty()) m += fmt::format("{} loaded", fmt::join(on, ", "));
    if (!off.empty())
      m += fmt::format("{}{} not loaded", m.empty() ? "" : "; ", fmt::join(off, ", "));
    s.add("Modules", m);
  }
  // An AMD host without NVIDIA GPUs has nothing to say about NVML.
  if (has_nvidia_gpu(f) || !f.amdgpu.loaded)
    s.add("NVML",
          (f.nvml_from_capture && f.nvml.loaded ? "as recorded: " : "") + gpu::summary(f.nvml));
  if (f.amdgpu.loaded)
    s.add("amdgpu", fmt::format("{} GPU{} from sysfs{}", f.amdgpu.devices.size(),
                                f.amdgpu.devices.size() == 1 ? "" : "s",
                                f.amdgpu.driver_version ? ", driver " + *f.amdgpu.driver_version
                                                        : " (the kernel's own driver)"));
  const auto matrix = gpu::topology_matrix(f.nvml);
  if (matrix.empty()) return {s};
  // nvidia-smi topo -m's matrix and legend.
  text::Section topo{"GPU topology (nvidia-smi topo -m)", {}};
  for (const auto& row : matrix) topo.add("", row);
  topo.add("",
           "NV#: NVLinks; PIX: one PCIe switch; PXB: several switches; PHB: a host bridge; "
           "NODE: the same NUMA node; SYS: across the CPUs' interconnect");
  return {s, topo};
}

bool has_nvidia_gpu(const GpuFacts& g) {
  return !g.nvml.devices.empty() ||
         std::any_of(g.devices.begin(), g.devices.end(),
                     [](const PciGpu& d) { return d.vendor == "nvidia"; });
}

}  // namespace dltune::inventory
