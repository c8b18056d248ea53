#include "audit/baseline.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "core/toml_parse.hpp"
#include "host/parse/pci_device.hpp"

namespace dltune::audit {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Host memory moves a little between boots (firmware and crash-kernel reservations): less than
// 3% below the baseline is the same memory; a DIMM or a NUMA node lost is far more. A GPU's
// total is the same for the same board and mode: 2% covers ECC's reservation on HBM boards.
constexpr double kHostMemorySlack = 0.03, kGpuMemorySlack = 0.02;

double round1(double v) {
  return std::round(v * 10.0) / 10.0;
}

std::string number(double v) {
  return fmt::format("{}", v);  // the shortest form that reads back the same
}

// "400 Gb/sec (4X NDR)" -> 400 (Documentation/ABI/stable/sysfs-class-infiniband, rate).
std::optional<double> rate_gbps(std::string_view rate) {
  rate = text::trim(rate);
  double v = 0;
  const auto [p, ec] = std::from_chars(rate.data(), rate.data() + rate.size(), v);
  if (ec != std::errc() || p == rate.data() || !std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out += {'\\', c};
    else if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\u{:04X}", u);
    else
      out += c;
  }
  return out + "\"";
}

std::string pci_id(const inventory::PciGpu& d) {
  return fmt::format("{:04x}:{:04x}", d.vendor_id, d.device_id);
}

const gpu::Device* backend_device(const inventory::GpuFacts& g, const inventory::PciGpu& d) {
  const gpu::Report* report = d.nvml_index ? &g.nvml : d.amdgpu_index ? &g.amdgpu : nullptr;
  const auto index = d.nvml_index ? d.nvml_index : d.amdgpu_index;
  if (report == nullptr) return nullptr;
  for (const auto& x : report->devices)
    if (x.index == *index) return &x;
  return nullptr;
}

std::vector<const inventory::PciGpu*> compute_gpus(const inventory::HostFacts& f) {
  std::vector<const inventory::PciGpu*> out;
  for (const auto& d : f.gpu.devices)
    if (d.compute) out.push_back(&d);
  return out;
}

bool counted_nic(const inventory::NetInterface& i) {
  return !i.is_virtual && i.speed_mbps && *i.speed_mbps >= inventory::kTrainingNicMbps &&
         i.operstate == "up";
}

}  // namespace

Baseline baseline_of(const inventory::HostFacts& f) {
  Baseline b;
  if (f.os.hostname) b.host = *f.os.hostname;
  if (!f.cpu.online.empty()) b.cpus = static_cast<int>(f.cpu.online.size());
  b.sockets = f.cpu.sockets;
  if (f.memory.total_bytes)
    b.memory_gib = round1(static_cast<double>(*f.memory.total_bytes) / kGiB);
  b.gpus.emplace();
  for (const auto* d : compute_gpus(f)) {
    BaselineGpu g;
    g.pci_bus_id = d->address;
    g.pci_id = pci_id(*d);
    const auto* dev = backend_device(f.gpu, *d);
    if (dev != nullptr && dev->name)
      g.model = *dev->name;
    else if (d->device_name)
      g.model = *d->device_name;
    if (dev != nullptr && dev->memory_total_bytes)
      g.memory_gib = round1(static_cast<double>(*dev->memory_total_bytes) / kGiB);
    // What the link can be, not what it is now: a link already degraded when the baseline is
    // written is a fault to find, not the norm (baseline_notes says so on writing).
    g.pcie_width = d->link.max_width ? d->link.max_width : d->link.width;
    g.pcie_generation = d->link.max_generation;
    b.gpus->push_back(std::move(g));
  }
  b.gpu_count = static_cast<int>(b.gpus->size());
  b.rdma.emplace();
  for (const auto& r : f.network.rdma)
    for (const auto& p : r.ports) {
      if (p.state != "ACTIVE") continue;  // an unused port (no cable) is not expected up
      BaselineRdmaPort x;
      x.device = r.name;
      x.port = p.port;
      if (p.rate) x.rate_gbps = rate_gbps(*p.rate);
      x.link_layer = p.link_layer;
      b.rdma->push_back(std::move(x));
    }
  b.rdma_count = static_cast<int>(f.network.rdma.size());
  b.nics.emplace();
  for (const auto& i : f.network.interfaces)
    if (counted_nic(i)) b.nics->push_back({i.name, *i.speed_mbps / 1000.0});
  return b;
}

std::vector<std::string> baseline_notes(const inventory::HostFacts& f) {
  std::vector<std::string> out;
  for (const auto* d : compute_gpus(f))
    if (d->link.width && d->link.max_width && *d->link.width < *d->link.max_width)
      out.push_back(fmt::format(
          "GPU {} runs at PCIe x{} of its x{}: the baseline expects x{} (edit it if x{} is "
          "the slot's by design)",
          d->address, *d->link.width, *d->link.max_width, *d->link.max_width, *d->link.width));
  for (const auto& r : f.network.rdma)
    for (const auto& p : r.ports)
      if (p.state != "ACTIVE")
        out.push_back(fmt::format("{} port {} is {}: left out of the baseline", r.name, p.port,
                                  p.state.value_or("in an unknown state")));
  return out;
}

std::string to_toml(const Baseline& b, std::string_view written) {
  std::string o;
  auto line = [&](std::string_view key, const std::string& value, std::string_view note = {}) {
    o += fmt::format("{} = {}{}{}\n", key, value, note.empty() ? "" : "  # ", note);
  };
  o += fmt::format(
      "# The hardware baseline of {}, written {} by `dltune baseline`.\n"
      "# What this host should have. Review it: a part that was already missing or slow when\n"
      "# it was written is fixed here by hand (the count of GPUs, a link rate). A key or table\n"
      "# left out is not checked. Check against it with `dltune check --baseline FILE` (also\n"
      "# with --npd), `dltune slurm health --baseline FILE`, or `baseline = \"FILE\"` in a\n"
      "# profile's [profile] table: every drift is a critical finding.\n",
      b.host.value_or("this host"), written);
  line("schema", toml_string(kBaselineSchema));
  if (b.host) line("host", toml_string(*b.host), "where it was written; not compared");
  if (b.cpus || b.sockets) {
    o += "\n[cpu]\n";
    if (b.cpus) line("logical", std::to_string(*b.cpus), "online CPUs (hardware threads)");
    if (b.sockets) line("sockets", std::to_string(*b.sockets));
  }
  if (b.memory_gib) {
    o += "\n[memory]\n";
    line("total_gib", number(*b.memory_gib), "MemTotal; less than 3% below is the same memory");
  }
  if (b.gpus) {
    o += "\n[gpus]\n";
    line("count", std::to_string(b.gpu_count.value_or(static_cast<int>(b.gpus->size()))),
         "NVIDIA and AMD GPUs on PCI");
    for (const auto& g : *b.gpus) {
      o += "\n[[gpus.device]]\n";
      line("pci_bus_id", toml_string(g.pci_bus_id));
      if (g.pci_id) line("pci_id", toml_string(*g.pci_id), "vendor:device");
      if (g.model) line("model", toml_string(*g.model), "not compared");
      if (g.memory_gib) line("memory_gib", number(*g.memory_gib));
      if (g.pcie_width) line("pcie_width", std::to_string(*g.pcie_width), "lanes");
      if (g.pcie_generation)
        line("pcie_generation", std::to_string(*g.pcie_generation), "the device's maximum");
    }
  }
  if (b.rdma) {
    o += "\n[rdma]\n";
    line("count", std::to_string(b.rdma_count.value_or(0)), "RDMA devices (InfiniBand, RoCE)");
    for (const auto& p : *b.rdma) {
      o += "\n[[rdma.port]]\n";
      line("device", toml_string(p.device));
      line("port", std::to_string(p.port));
      if (p.rate_gbps) line("rate_gbps", number(*p.rate_gbps));
      if (p.link_layer) line("link_layer", toml_string(*p.link_layer));
    }
  }
  if (b.nics) {
    o += "\n[nics]  # physical interfaces of 25 Gb/s or more that were up\n";
    for (const auto& n : *b.nics) {
      o += "\n[[nics.interface]]\n";
      line("name", toml_string(n.name));
      if (n.speed_gbps) line("speed_gbps", number(*n.speed_gbps));
    }
  }
  return o;
}

inventory::Json to_json(const Baseline& b) {
  inventory::Json j{{"schema", kBaselineSchema}};
  auto put = [](inventory::Json& x, const char* k, const auto& v) {
    if (v) x[k] = *v;
  };
  put(j, "host", b.host);
  if (b.cpus || b.sockets) {
    j["cpu"] = inventory::Json::object();
    put(j["cpu"], "logical", b.cpus);
    put(j["cpu"], "sockets", b.sockets);
  }
  if (b.memory_gib) j["memory"] = {{"total_gib", *b.memory_gib}};
  if (b.gpus) {
    auto list = inventory::Json::array();
    for (const auto& g : *b.gpus) {
      inventory::Json x{{"pci_bus_id", g.pci_bus_id}};
      put(x, "pci_id", g.pci_id);
      put(x, "model", g.model);
      put(x, "memory_gib", g.memory_gib);
      put(x, "pcie_width", g.pcie_width);
      put(x, "pcie_generation", g.pcie_generation);
      list.push_back(std::move(x));
    }
    j["gpus"] = {{"count", b.gpu_count.value_or(static_cast<int>(b.gpus->size()))},
                 {"device", std::move(list)}};
  }
  if (b.rdma) {
    auto list = inventory::Json::array();
    for (const auto& p : *b.rdma) {
      inventory::Json x{{"device", p.device}, {"port", p.port}};
      put(x, "rate_gbps", p.rate_gbps);
      put(x, "link_layer", p.link_layer);
      list.push_back(std::move(x));
    }
    j["rdma"] = {{"count", b.rdma_count.value_or(0)}, {"port", std::move(list)}};
  }
  if (b.nics) {
    auto list = inventory::Json::array();
    for (const auto& n : *b.nics) {
      inventory::Json x{{"name", n.name}};
      put(x, "speed_gbps", n.speed_gbps);
      list.push_back(std::move(x));
    }
    j["nics"] = {{"interface", std::move(list)}};
  }
  return j;
}

namespace {

// Reads one table's keys, refusing those it does not know and values of the wrong type, with
// the file, line and key named.
class Fields {
 public:
  Fields(const toml::table& t, std::string where, std::string_view origin,
         std::vector<std::string_view> known)
      : t_(t), where_(std::move(where)), origin_(origin), known_(std::move(known)) {}

  Result<void> check_keys() const {
    for (const auto& [k, v] : t_)
      if (std::find(known_.begin(), known_.end(), k.str()) == known_.end())
        return refuse(v, fmt::format("unknown key \"{}\" in {} (keys: {})", k.str(), where_,
                                     fmt::join(known_, ", ")));
    return {};
  }
  Result<std::optional<std::string>> text(std::string_view key, bool required = false) const {
    const auto* n = t_.get(key);
    if (n == nullptr) return missing(key, required);
    if (!n->is_string() || n->as_string()->get().empty())
      return refuse(*n, fmt::format("{} in {} must be a non-empty string", key, where_));
    return n->as_string()->get();
  }
  Result<std::optional<int>> count(std::string_view key, int max, bool required = false) const {
    const auto* n = t_.get(key);
    if (n == nullptr) return missing<int>(key, required);
    const auto* i = n->as_integer();
    if (i == nullptr || i->get() < 0 || i->get() > max)
      return refuse(*n,
                    fmt::format("{} in {} must be a whole number from 0 to {}", key, where_, max));
    return static_cast<int>(i->get());
  }
  Result<std::optional<double>> amount(std::string_view key) const {
    const auto* n = t_.get(key);
    if (n == nullptr) return std::optional<double>();
    const auto v = n->value<double>();
    if (!v || !std::isfinite(*v) || *v <= 0 || *v > 1e9)
      return refuse(*n, fmt::format("{} in {} must be a positive number", key, where_));
    return *v;
  }

 private:
  template <class T = std::string>
  Result<std::optional<T>> missing(std::string_view key, bool required) const {
    if (!required) return std::optional<T>();
    return fail(fmt::format("{}: {} has no {}", origin_, where_, key));
  }
  tl::unexpected<Error> refuse(const toml::node& n, std::string why) const {
    return fail(fmt::format("{}:{}: {}", origin_, n.source().begin.line, why));
  }

  const toml::table& t_;
  std::string where_;
  std::string_view origin_;
  std::vector<std::string_view> known_;
};

// A table's array of tables (`[[gpus.device]]`), each read by `read`.
template <class T, class Read>
Result<std::vector<T>> each_table(const toml::table& parent, std::string_view key,
                                  const std::string& where, std::string_view origin, Read read) {
  std::vector<T> out;
  const auto* n = parent.get(key);
  if (n == nullptr) return out;
  const auto* a = n->as_array();
  if (a == nullptr || !a->is_array_of_tables())
    return fail(fmt::format("{}:{}: {}.{} must be tables ([[{}.{}]])", origin,
                            n->source().begin.line, where, key, where, key));
  std::size_t i = 0;
  for (const auto& item : *a) {
    auto x = read(*item.as_table(), fmt::format("[[{}.{}]] #{}", where, key, ++i));
    if (!x) return tl::unexpected(x.error());
    out.push_back(std::move(*x));
  }
  return out;
}

#define DLTUNE_TRY(var, expr) \
  auto var = (expr);          \
  if (!var) return tl::unexpected(std::move(var.error()))

Result<BaselineGpu> read_gpu(const toml::table& t, const std::string& where,
                             std::string_view origin) {
  const Fields f(t, where, origin,
                 {"pci_bus_id", "pci_id", "model", "memory_gib", "pcie_width", "pcie_generation"});
  if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
  BaselineGpu g;
  DLTUNE_TRY(bus, f.text("pci_bus_id", true));
  const auto address = host::parse::pci_address(**bus);
  if (!address)
    return fail(fmt::format("{}: {}: pci_bus_id \"{}\" is not a PCI address (0000:18:00.0)", origin,
                            where, **bus));
  g.pci_bus_id = *address;
  DLTUNE_TRY(id, f.text("pci_id"));
  g.pci_id = *id;
  if (g.pci_id) {
    std::transform(g.pci_id->begin(), g.pci_id->end(), g.pci_id->begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const auto& s = *g.pci_id;
    const bool hex = s.size() == 9 && s[4] == ':' && std::all_of(s.begin(), s.end(), [](char c) {
                       return c == ':' || std::isxdigit(static_cast<unsigned char>(c));
                     });
    if (!hex)
      return fail(fmt::format("{}: {}: pci_id \"{}\" is not vendor:device in hex (10de:2330)",
                              origin, where, s));
  }
  DLTUNE_TRY(model, f.text("model"));
  g.model = *model;
  DLTUNE_TRY(memory, f.amount("memory_gib"));
  g.memory_gib = *memory;
  DLTUNE_TRY(width, f.count("pcie_width", 32));
  g.pcie_width = *width;
  DLTUNE_TRY(generation, f.count("pcie_generation", 7));
  g.pcie_generation = *generation;
  return g;
}

Result<BaselineRdmaPort> read_port(const toml::table& t, const std::string& where,
                                   std::string_view origin) {
  const Fields f(t, where, origin, {"device", "port", "rate_gbps", "link_layer"});
  if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
  BaselineRdmaPort p;
  DLTUNE_TRY(device, f.text("device", true));
  p.device = **device;
  DLTUNE_TRY(port, f.count("port", 255));
  p.port = port->value_or(1);
  DLTUNE_TRY(rate, f.amount("rate_gbps"));
  p.rate_gbps = *rate;
  DLTUNE_TRY(layer, f.text("link_layer"));
  p.link_layer = *layer;
  return p;
}

Result<BaselineNic> read_nic(const toml::table& t, const std::string& where,
                             std::string_view origin) {
  const Fields f(t, where, origin, {"name", "speed_gbps"});
  if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
  BaselineNic n;
  DLTUNE_TRY(name, f.text("name", true));
  n.name = **name;
  DLTUNE_TRY(speed, f.amount("speed_gbps"));
  n.speed_gbps = *speed;
  return n;
}

// The table at `key`: null when absent, an error when it is not a table.
Result<const toml::table*> sub_table(const toml::table& doc, std::string_view key,
                                     std::string_view origin) {
  const auto* n = doc.get(key);
  if (n == nullptr) return nullptr;
  if (!n->is_table())
    return fail(
        fmt::format("{}:{}: {} must be a table ([{}])", origin, n->source().begin.line, key, key));
  return n->as_table();
}

}  // namespace

Result<Baseline> parse_baseline(std::string_view toml_text, std::string_view origin) {
  auto doc = parse_toml(toml_text, origin);
  if (!doc) return tl::unexpected(doc.error());
  const Fields top(*doc, "the baseline", origin,
                   {"schema", "host", "cpu", "memory", "gpus", "rdma", "nics"});
  if (auto ok = top.check_keys(); !ok) return tl::unexpected(ok.error());
  DLTUNE_TRY(schema, top.text("schema", true));
  if (**schema != kBaselineSchema)
    return fail(fmt::format("{}: schema \"{}\" is not one this dltune reads ({})", origin, **schema,
                            kBaselineSchema));
  Baseline b;
  b.origin = origin;
  DLTUNE_TRY(host, top.text("host"));
  b.host = *host;
  DLTUNE_TRY(cpu, sub_table(*doc, "cpu", origin));
  DLTUNE_TRY(memory, sub_table(*doc, "memory", origin));
  DLTUNE_TRY(gpus, sub_table(*doc, "gpus", origin));
  DLTUNE_TRY(rdma, sub_table(*doc, "rdma", origin));
  DLTUNE_TRY(nics, sub_table(*doc, "nics", origin));
  if (const auto* t = *cpu) {
    const Fields f(*t, "[cpu]", origin, {"logical", "sockets"});
    if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
    DLTUNE_TRY(cpus, f.count("logical", 1 << 20));
    b.cpus = *cpus;
    DLTUNE_TRY(sockets, f.count("sockets", 4096));
    b.sockets = *sockets;
  }
  if (const auto* t = *memory) {
    const Fields f(*t, "[memory]", origin, {"total_gib"});
    if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
    DLTUNE_TRY(total, f.amount("total_gib"));
    b.memory_gib = *total;
  }
  if (const auto* t = *gpus) {
    const Fields f(*t, "[gpus]", origin, {"count", "device"});
    if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
    DLTUNE_TRY(count, f.count("count", 4096));
    b.gpu_count = *count;
    DLTUNE_TRY(list, each_table<BaselineGpu>(*t, "device", "gpus", origin,
                                             [&](const toml::table& x, const std::string& w) {
                                               return read_gpu(x, w, origin);
                                             }));
    b.gpus = std::move(*list);
  }
  if (const auto* t = *rdma) {
    const Fields f(*t, "[rdma]", origin, {"count", "port"});
    if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
    DLTUNE_TRY(count, f.count("count", 4096));
    b.rdma_count = *count;
    DLTUNE_TRY(list, each_table<BaselineRdmaPort>(*t, "port", "rdma", origin,
                                                  [&](const toml::table& x, const std::string& w) {
                                                    return read_port(x, w, origin);
                                                  }));
    b.rdma = std::move(*list);
  }
  if (const auto* t = *nics) {
    const Fields f(*t, "[nics]", origin, {"interface"});
    if (auto ok = f.check_keys(); !ok) return tl::unexpected(ok.error());
    DLTUNE_TRY(list, each_table<BaselineNic>(*t, "interface", "nics", origin,
                                             [&](const toml::table& x, const std::string& w) {
                                               return read_nic(x, w, origin);
                                             }));
    b.nics = std::move(*list);
  }
  return b;
}

#undef DLTUNE_TRY

Result<Baseline> load_baseline(const std::string& path) {
  // A baseline is a few kilobytes; a FIFO or a device is refused at once, not waited on.
  auto text = local_file::read_regular(path, 4u << 20);
  if (!text && text.error().errno_ != 0)
    return fail("cannot read the baseline", path, text.error().errno_);
  if (!text) return fail("the baseline: " + text.error().message());
  return parse_baseline(*text, path);
}

namespace {

struct Judge {
  const Baseline& b;
  const inventory::HostFacts& f;
  std::vector<Finding> out;

  Finding& add(std::string_view id, const char* area, Severity s, std::string summary,
               std::string expected, std::string actual) {
    Finding x;
    x.id = id;
    x.area = area;
    x.severity = s;
    x.summary = std::move(summary);
    x.expected = std::move(expected);
    x.actual = std::move(actual);
    x.reason =
        "The baseline is what this host had when it was written and reviewed: a part missing, "
        "slower or smaller is a hardware fault or a change nobody recorded, and a job placed "
        "here runs slower or fails.";
    x.source = "dltune baseline (docs/baseline.md)";
    x.origin = b.origin.empty() ? "baseline" : b.origin;
    x.stakes = Severity::kCritical;
    out.push_back(std::move(x));
    return out.back();
  }

  void cpu() {
    if (!b.cpus && !b.sockets) return;
    const auto seen = static_cast<int>(f.cpu.online.size());
    bool drift = false;
    if (b.cpus && !f.cpu.online.empty() && seen != *b.cpus) {
      drift = true;
      auto& x = add("baseline.cpu", "cpu", seen < *b.cpus ? Severity::kCritical : Severity::kWarn,
                    fmt::format("{} CPUs online, {} expected", seen, *b.cpus),
                    std::to_string(*b.cpus), std::to_string(seen));
      x.evidence.push_back({"/sys/devices/system/cpu/online", std::to_string(seen) + " CPUs"});
      if (seen < *b.cpus)
        x.notes.push_back(
            "CPUs taken offline (echo 0 > /sys/devices/system/cpu/cpuN/online), SMT turned off "
            "(/sys/devices/system/cpu/smt/control), or a socket or cores disabled in the "
            "firmware.");
    }
    if (b.sockets && f.cpu.sockets && *f.cpu.sockets != *b.sockets) {
      drift = true;
      add("baseline.cpu", "cpu", Severity::kCritical,
          fmt::format("{} CPU sockets, {} expected", *f.cpu.sockets, *b.sockets),
          std::to_string(*b.sockets), std::to_string(*f.cpu.sockets))
          .evidence.push_back({"hwloc", fmt::format("{} packages", *f.cpu.sockets)});
    }
    if (!drift && b.cpus && f.cpu.online.empty()) {
      auto& x = add("baseline.cpu", "cpu", Severity::kInfo, "the online CPUs could not be read",
                    std::to_string(*b.cpus), "");
      x.unknown = true;
      return;
    }
    if (!drift)
      add("baseline.cpu", "cpu", Severity::kOk,
          fmt::format("{} CPUs online as the baseline has them", seen),
          std::to_string(b.cpus.value_or(seen)), std::to_string(seen));
  }

  void memory() {
    if (!b.memory_gib) return;
    if (!f.memory.total_bytes) {
      add("baseline.memory", "memory", Severity::kInfo, "MemTotal could not be read",
          number(*b.memory_gib) + " GiB", "")
          .unknown = true;
      return;
    }
    const double seen = round1(static_cast<double>(*f.memory.total_bytes) / kGiB);
    const std::string expected = number(*b.memory_gib) + " GiB";
    Finding* x = nullptr;
    if (seen < *b.memory_gib * (1 - kHostMemorySlack)) {
      x = &add("baseline.memory", "memory", Severity::kCritical,
               fmt::format("memory {} GiB, {} expected", number(seen), expected), expected,
               number(seen) + " GiB");
      x->notes.push_back(
          "A DIMM failed or was disabled by the firmware, or a NUMA node is missing: the "
          "firmware's event log (ipmitool sel list) and `dmesg | grep -i -e EDAC -e memory` say "
          "which.");
    } else if (seen > *b.memory_gib * (1 + kHostMemorySlack)) {
      x = &add("baseline.memory", "memory", Severity::kWarn,
               fmt::format("memory {} GiB, more than the {} expected", number(seen), expected),
               expected, number(seen) + " GiB");
    } else {
      x = &add("baseline.memory", "memory", Severity::kOk,
               fmt::format("memory {} GiB as the baseline has it", number(seen)), expected,
               number(seen) + " GiB");
    }
    x->evidence.push_back(
        {"/proc/meminfo", fmt::format("MemTotal {} bytes", *f.memory.total_bytes)});
  }

  void gpus() {
    if (!b.gpus && !b.gpu_count) return;
    const auto seen = compute_gpus(f);
    const int expected_count = b.gpu_count.value_or(b.gpus ? static_cast<int>(b.gpus->size()) : 0);
    const auto count_text = fmt::format("{} expected, {} seen", expected_count, seen.size());
    const std::size_t before = out.size();
    std::map<std::string, const inventory::PciGpu*> by_address;
    for (const auto* d : seen) by_address[d->address] = d;
    const std::vector<BaselineGpu> none;
    for (const auto& g : b.gpus ? *b.gpus : none) {
      const auto it = by_address.find(g.pci_bus_id);
      const std::string sysfs = "/sys/bus/pci/devices/" + g.pci_bus_id;
      if (it == by_address.end()) {
        auto& x = add("baseline.gpu", "gpu", Severity::kCritical,
                      fmt::format("GPU {} missing: {}", g.pci_bus_id, count_text),
                      g.pci_bus_id + (g.model ? " (" + *g.model + ")" : ""), "not on PCI");
        x.evidence.push_back({sysfs, "absent"});
        x.notes.push_back(
            "A GPU gone from PCI fell off the bus (Xid 79 in `dmesg`), lost power, or was "
            "removed: reboot or reseat it, and service it if it happens again. "
            "`dltune doctor` reads the kernel log for it.");
        continue;
      }
      const auto& d = *it->second;
      by_address.erase(it);
      const std::string name = fmt::format("GPU {}", g.pci_bus_id);
      if (g.pci_id && pci_id(d) != *g.pci_id)
        add("baseline.gpu", "gpu", Severity::kCritical,
            fmt::format("{} is {}, {} expected (another board)", name, pci_id(d), *g.pci_id),
            *g.pci_id, pci_id(d))
            .evidence.push_back({sysfs + "/device", fmt::format("0x{:04x}", d.device_id)});
      if (g.pcie_width && d.link.width && *d.link.width < *g.pcie_width)
        add("baseline.gpu", "gpu", Severity::kCritical,
            fmt::format("{} at PCIe x{}, x{} expected", name, *d.link.width, *g.pcie_width),
            fmt::format("x{}", *g.pcie_width), fmt::format("x{}", *d.link.width))
            .evidence.push_back({sysfs + "/current_link_width", std::to_string(*d.link.width)});
      if (g.pcie_width && !d.link.width)
        add("baseline.gpu", "gpu", Severity::kCritical,
            fmt::format("{} has no PCIe link width (the link is down, or the GPU fell off the "
                        "bus), x{} expected",
                        name, *g.pcie_width),
            fmt::format("x{}", *g.pcie_width), "no link")
            .evidence.push_back({sysfs + "/current_link_width", "unreadable or absurd"});
      if (g.pcie_generation && d.link.max_generation && *d.link.max_generation < *g.pcie_generation)
        add("baseline.gpu", "gpu", Severity::kCritical,
            fmt::format("{} can reach PCIe gen {} at most, gen {} expected", name,
                        *d.link.max_generation, *g.pcie_generation),
            fmt::format("gen {}", *g.pcie_generation),
            fmt::format("gen {}", *d.link.max_generation))
            .evidence.push_back(
                {sysfs + "/max_link_speed", fmt::format("gen {}", *d.link.max_generation)});
      if (g.memory_gib)
        if (const auto* dev = backend_device(f.gpu, d); dev && dev->memory_total_bytes) {
          const double mem = round1(static_cast<double>(*dev->memory_total_bytes) / kGiB);
          if (mem < *g.memory_gib * (1 - kGpuMemorySlack))
            add("baseline.gpu", "gpu", Severity::kCritical,
                fmt::format("{} has {} GiB of memory, {} expected", name, number(mem),
                            number(*g.memory_gib)),
                number(*g.memory_gib) + " GiB", number(mem) + " GiB")
                .evidence.push_back(
                    {d.nvml_index ? "nvml" : "amdgpu",
                     fmt::format("memory total {} bytes", *dev->memory_total_bytes)});
        }
    }
    // GPUs the baseline does not list: with a device list, each by address; else by count.
    if (b.gpus)
      for (const auto& [address, d] : by_address)
        add("baseline.gpu", "gpu", Severity::kWarn,
            fmt::format("GPU {} on PCI is not in the baseline: {}", address, count_text),
            "not there", address)
            .evidence.push_back({"/sys/bus/pci/devices/" + address, pci_id(*d)});
    if (b.gpu_count && static_cast<int>(seen.size()) != *b.gpu_count &&
        (!b.gpus || out.size() == before)) {
      const bool fewer = static_cast<int>(seen.size()) < *b.gpu_count;
      add("baseline.gpu", "gpu", fewer ? Severity::kCritical : Severity::kWarn,
          fmt::format("{} GPUs on PCI: {}", seen.size(), count_text), std::to_string(*b.gpu_count),
          std::to_string(seen.size()))
          .evidence.push_back({"/sys/bus/pci/devices", fmt::format("{} GPUs", seen.size())});
    }
    if (out.size() == before)
      add("baseline.gpu", "gpu", Severity::kOk,
          fmt::format("{} GPU{} as the baseline has them", seen.size(),
                      seen.size() == 1 ? "" : "s"),
          std::to_string(expected_count), std::to_string(seen.size()));
  }

  void rdma() {
    if (!b.rdma && !b.rdma_count) return;
    const std::size_t before = out.size();
    const auto count_text = fmt::format("{} RDMA devices expected, {} seen",
                                        b.rdma_count.value_or(0), f.network.rdma.size());
    const std::vector<BaselineRdmaPort> none;
    for (const auto& p : b.rdma ? *b.rdma : none) {
      const auto dev = std::find_if(f.network.rdma.begin(), f.network.rdma.end(),
                                    [&](const auto& d) { return d.name == p.device; });
      const std::string dir = fmt::format("/sys/class/infiniband/{}/ports/{}", p.device, p.port);
      const auto label = fmt::format("{} port {}", p.device, p.port);
      if (dev == f.network.rdma.end()) {
        add("baseline.rdma", "network", Severity::kCritical,
            fmt::format("{} missing: {}", p.device, count_text), label, "absent")
            .evidence.push_back({"/sys/class/infiniband/" + p.device, "absent"});
        continue;
      }
      const auto port = std::find_if(dev->ports.begin(), dev->ports.end(),
                                     [&](const auto& x) { return x.port == p.port; });
      if (port == dev->ports.end()) {
        add("baseline.rdma", "network", Severity::kCritical, label + " missing", label, "absent")
            .evidence.push_back({dir, "absent"});
        continue;
      }
      if (port->state && *port->state != "ACTIVE") {
        auto& x = add("baseline.rdma", "network", Severity::kCritical,
                      fmt::format("{} is {}, ACTIVE expected", label, *port->state), "ACTIVE",
                      *port->state);
        x.evidence.push_back({dir + "/state", *port->state});
        x.notes.push_back(
            "A port that is not ACTIVE carries no traffic: the cable, the switch port, or (on "
            "InfiniBand) the subnet manager. `ibstat` shows the physical state.");
      }
      const auto seen_rate = port->rate ? rate_gbps(*port->rate) : std::nullopt;
      if (p.rate_gbps && seen_rate && *seen_rate < *p.rate_gbps)
        add("baseline.rdma", "network", Severity::kCritical,
            fmt::format("{} at {} Gb/s, {} expected", p.port == 1 ? p.device : label,
                        number(*seen_rate), number(*p.rate_gbps)),
            number(*p.rate_gbps) + " Gb/s", number(*seen_rate) + " Gb/s")
            .evidence.push_back({dir + "/rate", *port->rate});
      if (p.link_layer && port->link_layer && *port->link_layer != *p.link_layer)
        add("baseline.rdma", "network", Severity::kCritical,
            fmt::format("{} runs {}, {} expected", label, *port->link_layer, *p.link_layer),
            *p.link_layer, *port->link_layer)
            .evidence.push_back({dir + "/link_layer", *port->link_layer});
    }
    if (b.rdma_count && static_cast<int>(f.network.rdma.size()) < *b.rdma_count &&
        out.size() == before)
      add("baseline.rdma", "network", Severity::kCritical, count_text,
          std::to_string(*b.rdma_count), std::to_string(f.network.rdma.size()))
          .evidence.push_back(
              {"/sys/class/infiniband", fmt::format("{} devices", f.network.rdma.size())});
    if (out.size() == before)
      add("baseline.rdma", "network", Severity::kOk,
          fmt::format("{} RDMA device{} and their ports as the baseline has them",
                      f.network.rdma.size(), f.network.rdma.size() == 1 ? "" : "s"),
          std::to_string(b.rdma_count.value_or(0)), std::to_string(f.network.rdma.size()));
  }

  void nics() {
    if (!b.nics) return;
    const std::size_t before = out.size();
    for (const auto& n : *b.nics) {
      const auto i = std::find_if(f.network.interfaces.begin(), f.network.interfaces.end(),
                                  [&](const auto& x) { return x.name == n.name; });
      const std::string dir = "/sys/class/net/" + n.name;
      if (i == f.network.interfaces.end()) {
        add("baseline.nic", "network", Severity::kCritical, n.name + " missing", n.name, "absent")
            .evidence.push_back({dir, "absent"});
        continue;
      }
      if (i->operstate && *i->operstate != "up") {
        add("baseline.nic", "network", Severity::kCritical,
            fmt::format("{} is {}, up expected", n.name, *i->operstate), "up", *i->operstate)
            .evidence.push_back({dir + "/operstate", *i->operstate});
        continue;
      }
      if (n.speed_gbps && i->speed_mbps && *i->speed_mbps / 1000.0 < *n.speed_gbps)
        add("baseline.nic", "network", Severity::kCritical,
            fmt::format("{} at {} Gb/s, {} expected", n.name, number(*i->speed_mbps / 1000.0),
                        number(*n.speed_gbps)),
            number(*n.speed_gbps) + " Gb/s", number(*i->speed_mbps / 1000.0) + " Gb/s")
            .evidence.push_back({dir + "/speed", std::to_string(*i->speed_mbps)});
    }
    if (out.size() == before && !b.nics->empty())
      add("baseline.nic", "network", Severity::kOk,
          fmt::format("{} interface{} up at the baseline's speed", b.nics->size(),
                      b.nics->size() == 1 ? "" : "s"),
          "", "");
  }
};

}  // namespace

std::vector<Finding> judge_baseline(const Baseline& b, const inventory::HostFacts& facts) {
  Judge j{b, facts, {}};
  j.gpus();
  j.rdma();
  j.nics();
  j.cpu();
  j.memory();
  // Last, after what each finding says of its own cause.
  for (auto& f : j.out)
    if (f.severity != Severity::kOk && !f.unknown)
      f.notes.push_back(fmt::format(
          "If the change is intended, write the baseline again and review it: dltune baseline "
          "-o {} --force",
          b.origin.empty() ? "FILE" : b.origin));
  return std::move(j.out);
}

}  // namespace dltune::audit
