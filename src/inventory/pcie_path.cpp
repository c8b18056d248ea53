#include "inventory/pcie_path.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/text.hpp"
#include "host/parse/pci_device.hpp"

namespace dltune::inventory {

namespace {

bool all_hex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// "pci0000:3a": a host bridge's directory under /sys/devices (drivers/pci/probe.c names the root
// bus's device "pci%04x:%02x", domain and bus).
bool is_host_bridge(std::string_view c) {
  if (!c.starts_with("pci")) return false;
  const auto parts = text::split(c.substr(3), ':');
  return parts.size() == 2 && all_hex(parts[0]) && all_hex(parts[1]);
}

std::size_t common_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::size_t k = 0;
  while (k < a.size() && k < b.size() && a[k] == b[k]) ++k;
  return k;
}

}  // namespace

bool is_sysfs_pci_address(std::string_view s) {
  const auto a = host::parse::pci_address(s);
  return a && *a == s;
}

std::optional<PciePlace> pcie_place(std::string_view sysfs_path) {
  while (sysfs_path.size() > 1 && sysfs_path.back() == '/') sysfs_path.remove_suffix(1);
  PciePlace p;
  bool below_root = false;
  std::string_view last;
  for (const auto c : text::split(sysfs_path, '/')) {
    if (c.empty()) continue;
    last = c;
    if (!below_root) {
      if (is_host_bridge(c)) {
        p.root = std::string(c);
        below_root = true;
      }
      continue;
    }
    // A nested domain's own "pci10000:e0" (Intel VMD) and other names are not bridges.
    if (is_sysfs_pci_address(c)) p.path.emplace_back(c);
  }
  if (!below_root || p.path.empty() || std::string_view(p.path.back()) != last) return std::nullopt;
  p.path.pop_back();  // the function itself
  return p;
}

std::optional<PciePlace> read_pcie_place(Context& ctx, std::string_view fact,
                                         const std::string& device_link) {
  auto real = ctx.root().resolve(device_link);
  if (!real) {
    ctx.problem(std::string(fact), real.error());
    return std::nullopt;
  }
  if (!*real) return std::nullopt;
  return pcie_place(**real);
}

std::optional<int> node_of_cpus(Context& ctx, std::string_view fact, const std::vector<int>& cpus) {
  if (cpus.empty()) return std::nullopt;
  std::set<int> touched;
  int nodes = 0;
  for (const auto& name : ctx.list(fact, "/sys/devices/system/node")) {
    if (!name.starts_with("node")) continue;
    const auto id = text::to_uint(std::string_view(name).substr(4));
    if (!id) continue;
    ++nodes;
    const auto list = ctx.read_value(fact, "/sys/devices/system/node/" + name + "/cpulist");
    const auto node_cpus = list ? text::parse_cpu_list(*list) : std::nullopt;
    if (!node_cpus) continue;
    for (const int c : cpus)
      if (std::binary_search(node_cpus->begin(), node_cpus->end(), c))
        touched.insert(static_cast<int>(*id));
  }
  if (nodes < 2 || touched.size() != 1) return std::nullopt;
  return *touched.begin();
}

const char* pcie_relation_name(PcieRelation r) {
  switch (r) {
    case PcieRelation::kPix:
      return "PIX";
    case PcieRelation::kPxb:
      return "PXB";
    case PcieRelation::kPhb:
      return "PHB";
    case PcieRelation::kNode:
      return "NODE";
    case PcieRelation::kSys:
      return "SYS";
    case PcieRelation::kUnknown:
      break;
  }
  return "unknown";
}

PcieRelation pcie_relation(const PcieEnd& a, const PcieEnd& b) {
  const bool nodes_known = a.numa_node && b.numa_node;
  if (!a.place || !b.place) {
    // Without a place only the nodes tell, and only that they differ.
    if (nodes_known && *a.numa_node != *b.numa_node) return PcieRelation::kSys;
    return PcieRelation::kUnknown;
  }
  if (a.place->root == b.place->root) {
    const auto& x = a.place->path;
    const auto& y = b.place->path;
    const std::size_t k = common_prefix(x, y);
    if (k == 0) return PcieRelation::kPhb;  // they meet in the root complex
    // A shared bridge below the host bridge: one switch when each is at most one bridge (its
    // downstream port) below the deepest shared one, several when either is deeper.
    return x.size() - k <= 1 && y.size() - k <= 1 ? PcieRelation::kPix : PcieRelation::kPxb;
  }
  if (!nodes_known) return PcieRelation::kUnknown;
  return *a.numa_node == *b.numa_node ? PcieRelation::kNode : PcieRelation::kSys;
}

std::vector<std::string> bridges_between(const PciePlace& a, const PciePlace& b) {
  if (a.root != b.root) return {};
  const std::size_t k = common_prefix(a.path, b.path);
  std::vector<std::string> out(a.path.begin() + static_cast<std::ptrdiff_t>(k), a.path.end());
  out.insert(out.end(), b.path.begin() + static_cast<std::ptrdiff_t>(k), b.path.end());
  return out;
}

std::optional<NearestNic> nearest_nic(const PcieEnd& gpu, const std::vector<PcieEnd>& nics) {
  std::optional<NearestNic> best;
  for (std::size_t i = 0; i < nics.size(); ++i) {
    const auto r = pcie_relation(gpu, nics[i]);
    if (!best || r < best->relation) best = NearestNic{i, r};
  }
  return best;
}

std::string pcie_path_text(const PciePlace& p) {
  std::string out = p.root;
  for (const auto& b : p.path) out += "/" + b;
  return out;
}

}  // namespace dltune::inventory
