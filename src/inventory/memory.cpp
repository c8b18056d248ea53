#include "inventory/memory.hpp"

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "inventory/json.hpp"
#include "inventory/mounts.hpp"

namespace dltune::inventory {

namespace {

std::optional<std::uint64_t> get(const std::map<std::string, std::uint64_t>& m, const char* k) {
  const auto it = m.find(k);
  return it == m.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
}

// tmpfs "size=" accepts a number with k/m/g/t/p/e suffixes or a percentage of RAM
// (Documentation/filesystems/tmpfs.rst).
std::optional<std::uint64_t> tmpfs_size(std::string_view v, std::optional<std::uint64_t> ram) {
  if (v.empty()) return std::nullopt;
  if (v.back() == '%') {
    const auto pct = text::to_uint(v.substr(0, v.size() - 1));
    if (!pct || !ram) return std::nullopt;
    return *ram * *pct / 100;
  }
  std::uint64_t mult = 1;
  switch (v.back()) {
    case 'k':
    case 'K':
      mult = 1ull << 10;
      break;
    case 'm':
    case 'M':
      mult = 1ull << 20;
      break;
    case 'g':
    case 'G':
      mult = 1ull << 30;
      break;
    case 't':
    case 'T':
      mult = 1ull << 40;
      break;
    default:
      break;
  }
  if (mult != 1) v.remove_suffix(1);
  const auto n = text::to_uint(v);
  if (!n) return std::nullopt;
  return *n * mult;
}

void collect_shm(Context& ctx, MemoryFacts& f) {
  const auto* m = find_mount(host_mounts(ctx), "/dev/shm");
  if (m == nullptr) return;
  ShmFacts s;
  s.fstype = m->fstype;
  for (const auto& o : m->super_options) {
    if (o.starts_with("size=")) {
      s.size_bytes = tmpfs_size(std::string_view(o).substr(5), f.total_bytes);
      s.size_source = "size= mount option";
    }
  }
  if (!s.size_bytes && m->fstype == "tmpfs" && f.total_bytes) {
    s.size_bytes = *f.total_bytes / 2;  // tmpfs default: half of RAM
    s.size_source = "tmpfs default (half of RAM)";
  }
  if (ctx.fs_usage) {
    if (auto u = ctx.fs_usage("/dev/shm")) {
      s.used_bytes = u->total_bytes - u->free_bytes;
      if (!s.size_bytes) {
        s.size_bytes = u->total_bytes;
        s.size_source = "statvfs";
      }
    }
  }
  f.shm = std::move(s);
}

}  // namespace

MemoryFacts collect_memory(Context& ctx) {
  MemoryFacts f;
  if (auto text = ctx.read_required("memory.meminfo", "/proc/meminfo")) {
    auto parsed = host::parse::meminfo(*text);
    if (!parsed) {
      ctx.problem("memory.meminfo", "/proc/meminfo", parsed.error().message());
    } else {
      const auto& m = *parsed;
      f.total_bytes = get(m, "MemTotal");
      f.available_bytes = get(m, "MemAvailable");
      f.swap_total_bytes = get(m, "SwapTotal");
      f.swap_free_bytes = get(m, "SwapFree");
      f.hugepages_total = get(m, "HugePages_Total");
      f.hugepages_free = get(m, "HugePages_Free");
      f.hugepage_size_bytes = get(m, "Hugepagesize");
    }
  }
  if (auto text = ctx.read_required("memory.swap", "/proc/swaps")) {
    auto parsed = host::parse::swaps(*text);
    f.swaps_known = static_cast<bool>(parsed);
    if (parsed)
      f.swap_devices = std::move(*parsed);
    else
      ctx.problem("memory.swap", "/proc/swaps", parsed.error().message());
  }
  if (auto v = ctx.read_value("memory.thp", "/sys/kernel/mm/transparent_hugepage/enabled"))
    f.thp_enabled = host::parse::bracket_choice(*v);
  if (auto v = ctx.read_value("memory.thp", "/sys/kernel/mm/transparent_hugepage/defrag"))
    f.thp_defrag = host::parse::bracket_choice(*v);
  collect_shm(ctx, f);
  for (const char* key :
       {"vm.swappiness", "vm.overcommit_memory", "vm.dirty_ratio", "vm.dirty_background_ratio",
        "vm.dirty_bytes", "vm.dirty_background_bytes", "vm.zone_reclaim_mode", "vm.max_map_count",
        "kernel.numa_balancing"}) {
    std::string path = "/proc/sys/" + std::string(key);
    for (auto& c : path)
      if (c == '.') c = '/';
    if (auto v = ctx.read_value("memory.sysctl", path)) f.sysctls[key] = *v;
  }
  if (auto text = ctx.read("memory.limits", "/proc/self/limits")) {
    auto parsed = host::parse::limits(*text);
    if (!parsed) {
      ctx.problem("memory.limits", "/proc/self/limits", parsed.error().message());
    } else {
      // proc(5) names -> the names ulimit and limits.conf use.
      static const std::pair<const char*, const char*> kNames[] = {{"Max open files", "nofile"},
                                                                   {"Max locked memory", "memlock"},
                                                                   {"Max processes", "nproc"},
                                                                   {"Max stack size", "stack"},
                                                                   {"Max core file size", "core"}};
      for (const auto& [proc_name, short_name] : kNames) {
        const auto it = parsed->find(proc_name);
        if (it != parsed->end())
          f.limits[short_name] = ProcessLimit{it->second.soft, it->second.hard};
      }
    }
  }
  return f;
}

namespace {

Json choice_json(const host::parse::Choice& c) {
  Json j;
  put(j, "selected", c.selected);
  j["options"] = c.options;
  return j;
}

Json limit_value(const std::optional<std::uint64_t>& v) {
  if (!v) return "unlimited";
  return *v;
}

std::string limit_text(const std::string& name, const std::optional<std::uint64_t>& v) {
  if (!v) return "unlimited";
  if (name == "memlock" || name == "stack" || name == "core") return text::human_bytes(*v);
  return std::to_string(*v);
}

}  // namespace

Json to_json(const MemoryFacts& f) {
  Json j = Json::object();
  put(j, "total_bytes", f.total_bytes);
  put(j, "available_bytes", f.available_bytes);
  put(j, "swap_total_bytes", f.swap_total_bytes);
  put(j, "swap_free_bytes", f.swap_free_bytes);
  Json sw = Json::array();
  for (const auto& s : f.swap_devices)
    sw.push_back(Json{{"name", s.name},
                      {"type", s.type},
                      {"size_bytes", s.size_bytes},
                      {"used_bytes", s.used_bytes},
                      {"priority", s.priority}});
  j["swap_devices"] = std::move(sw);
  Json hp = Json::object();
  put(hp, "total", f.hugepages_total);
  put(hp, "free", f.hugepages_free);
  put(hp, "size_bytes", f.hugepage_size_bytes);
  j["hugepages"] = std::move(hp);
  Json thp = Json::object();
  if (f.thp_enabled) thp["enabled"] = choice_json(*f.thp_enabled);
  if (f.thp_defrag) thp["defrag"] = choice_json(*f.thp_defrag);
  j["thp"] = std::move(thp);
  if (f.shm) {
    Json s;
    put(s, "size_bytes", f.shm->size_bytes);
    if (!f.shm->size_source.empty()) s["size_source"] = f.shm->size_source;
    put(s, "used_bytes", f.shm->used_bytes);
    s["fstype"] = f.shm->fstype;
    j["shm"] = std::move(s);
  }
  j["sysctls"] = f.sysctls;
  Json l = Json::object();
  for (const auto& [name, v] : f.limits)
    l[name] = Json{{"soft", limit_value(v.soft)}, {"hard", limit_value(v.hard)}};
  j["limits"] = std::move(l);
  return j;
}

std::vector<text::Section> render_memory(const MemoryFacts& f) {
  text::Section s{"Memory", {}};
  if (f.total_bytes)
    s.add("RAM", fmt::format("{}{}", text::human_bytes(*f.total_bytes),
                             f.available_bytes
                                 ? ", " + text::human_bytes(*f.available_bytes) + " available"
                                 : ""));
  if (!f.swaps_known) {
    s.add("swap", "unknown (/proc/swaps could not be read: see Unknown)");
  } else if (f.swap_devices.empty()) {
    s.add("swap", "none");
  } else {
    for (const auto& d : f.swap_devices)
      s.add("swap", fmt::format("{} ({}, {}, {} used, priority {})", d.name, d.type,
                                text::human_bytes(d.size_bytes), text::human_bytes(d.used_bytes),
                                d.priority));
  }
  if (f.hugepages_total && f.hugepage_size_bytes)
    s.add("huge pages",
          fmt::format("{} x {} ({} free)", *f.hugepages_total,
                      text::human_bytes(*f.hugepage_size_bytes), f.hugepages_free.value_or(0)));
  if (f.thp_enabled && f.thp_enabled->selected)
    s.add("THP",
          fmt::format("enabled={} defrag={}", *f.thp_enabled->selected,
                      f.thp_defrag && f.thp_defrag->selected ? *f.thp_defrag->selected : "?"));
  if (f.shm) {
    std::string v = f.shm->size_bytes ? text::human_bytes(*f.shm->size_bytes) : "size unknown";
    if (!f.shm->size_source.empty()) v += " (" + f.shm->size_source + ")";
    if (f.shm->used_bytes) v += ", " + text::human_bytes(*f.shm->used_bytes) + " used";
    s.add("/dev/shm", v);
  } else {
    s.add("/dev/shm", "not mounted");
  }
  if (!f.sysctls.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : f.sysctls) parts.push_back(k + "=" + v);
    s.add("sysctls", fmt::format("{}", fmt::join(parts, " ")));
  }
  for (const auto& [name, v] : f.limits)
    s.add("limit " + name,
          fmt::format("soft {}, hard {}", limit_text(name, v.soft), limit_text(name, v.hard)));
  return {s};
}

}  // namespace dltune::inventory
