#include "settings/value_types.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "core/text.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::settings {

namespace {

constexpr std::int64_t kAny = std::numeric_limits<std::int64_t>::max();

enum class Type {
  kInteger,   // one whole number in [min, max]
  kIntegers,  // `fields` whole numbers in [min, max] each (tcp_rmem: min default max)
  kBool,      // true or false (a check that is yes or no)
  kChoice,    // one of `choices`
  kLimit,     // "unlimited" or a whole number in [min, max] (limits.conf)
  kName,      // a word: letters, digits, _ + - (a governor; the CPU's own list is the planner's)
  kText,      // one line of printable text (a sysctl without a known range)
  kCpus,      // "auto" or a CPU list ("0-3,8")
};

struct Rule {
  std::string_view key;
  Type type;
  std::int64_t min = 0;
  std::int64_t max = kAny;
  int fields = 1;
  std::vector<std::string_view> choices = {};
};

// The kernel's ranges: Documentation/admin-guide/sysctl/vm.rst and net.rst, and the bounds of
// the proc_dointvec_minmax handlers (mm/vmscan.c: swappiness 0..200 since 5.8;
// mm/util.c: overcommit_memory 0..2; mm/page-writeback.c: dirty ratios 0..100). THP's modes:
// Documentation/admin-guide/mm/transhuge.rst. limits: limits.conf(5).
const std::vector<Rule>& rules() {
  static const std::vector<Rule> kRules = {
      {"vm.swappiness", Type::kInteger, 0, 200},
      {"vm.overcommit_memory", Type::kInteger, 0, 2},
      {"vm.overcommit_ratio", Type::kInteger, 0, INT_MAX},
      {"vm.dirty_ratio", Type::kInteger, 0, 100},
      {"vm.dirty_background_ratio", Type::kInteger, 0, 100},
      {"vm.dirty_bytes", Type::kInteger},
      {"vm.dirty_background_bytes", Type::kInteger},
      {"vm.dirty_expire_centisecs", Type::kInteger, 0, INT_MAX},
      {"vm.dirty_writeback_centisecs", Type::kInteger, 0, INT_MAX},
      {"vm.min_free_kbytes", Type::kInteger, 0, INT_MAX},
      {"vm.zone_reclaim_mode", Type::kInteger, 0, 7},
      {"vm.max_map_count", Type::kInteger, 0, INT_MAX},
      {"vm.vfs_cache_pressure", Type::kInteger, 0, INT_MAX},
      {"vm.nr_hugepages", Type::kInteger},
      {"kernel.numa_balancing", Type::kInteger, 0, 3},
      {"net.core.rmem_max", Type::kInteger, 0, INT_MAX},
      {"net.core.wmem_max", Type::kInteger, 0, INT_MAX},
      {"net.core.rmem_default", Type::kInteger, 0, INT_MAX},
      {"net.core.wmem_default", Type::kInteger, 0, INT_MAX},
      {"net.core.somaxconn", Type::kInteger, 0, INT_MAX},
      {"net.core.netdev_max_backlog", Type::kInteger, 0, INT_MAX},
      {"net.ipv4.tcp_rmem", Type::kIntegers, 0, INT_MAX, 3},
      {"net.ipv4.tcp_wmem", Type::kIntegers, 0, INT_MAX, 3},
      {"net.ipv4.tcp_mem", Type::kIntegers, 0, kAny, 3},
      {"net.ipv4.tcp_fastopen", Type::kInteger, 0, 0x7ff},
      {"fs.file-max", Type::kInteger},
      {"fs.nr_open", Type::kInteger, 0, INT_MAX},
      {"thp.enabled", Type::kChoice, 0, 0, 1, {"always", "madvise", "never"}},
      {"thp.defrag",
       Type::kChoice,
       0,
       0,
       1,
       {"always", "defer", "defer+madvise", "madvise", "never"}},
      {"cpu.governor", Type::kName},
      {"cpu.epp", Type::kName},
      {"cpu.latency_us", Type::kInteger, 0, 2000000000},
      {"irq.affinity", Type::kCpus},
      {"limits.nofile", Type::kLimit, 1, INT_MAX},
      {"limits.memlock", Type::kLimit},
      {"block.read_ahead_kb", Type::kInteger, 0, INT_MAX},
      // 4: BLKDEV_MIN_RQ; 2048: MAX_SCHED_RQ (block/blk-mq.c, blk_mq_update_nr_requests)
      {"block.nr_requests", Type::kInteger, 4, 2048},
      {"block.scheduler", Type::kChoice, 0, 0, 1, {"auto", "none", "mq-deadline", "bfq", "kyber"}},
      {"shm.size", Type::kInteger},
      {"mount.noatime", Type::kBool},
      {"swap.consistency", Type::kBool},
      {"storage.data_device", Type::kBool},
      {"storage.trim", Type::kBool},
      {"build.toolchain", Type::kBool},
      {"blas.library", Type::kBool},
      {"gpu.persistence", Type::kBool},
      {"gpu.nouveau", Type::kBool},
      {"gpu.driver_match", Type::kBool},
      {"gpu.driver_cuda", Type::kBool},
      {"gpu.pcie_link", Type::kBool},
      {"gpu.ecc", Type::kBool},
      {"gpu.throttle", Type::kBool},
      {"gpu.power_limit", Type::kBool},
      {"gpu.mig", Type::kBool},
      {"gpu.nvlink", Type::kBool},
      {"gpu.numa_placement", Type::kBool},
      {"env.training", Type::kBool},
      {"iommu.mode", Type::kChoice, 0, 0, 1, {"pt", "off", "on", "default"}},
      {"pci.acs", Type::kChoice, 0, 0, 1, {"enabled", "disabled"}},
      {"pci.gpu_nic", Type::kBool},
      {"nic.settings", Type::kBool},
      {"rdma.ports", Type::kChoice, 0, 0, 1, {"ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER"}},
  };
  return kRules;
}

const Rule kSysctlText{"", Type::kText};

// The rule for `key`: its own, or one printable line for any other well-formed sysctl name;
// null for anything else (the key check refuses it). Pure: the fuzzed profile parser links it.
const Rule* rule_for(std::string_view key) {
  for (const auto& r : rules())
    if (r.key == key) return &r;
  return sysctl_path(std::string(key)) ? &kSysctlText : nullptr;
}

std::string range_text(const Rule& r) {
  if (r.max == kAny) return fmt::format("a whole number, {} or more", r.min);
  return fmt::format("a whole number from {} to {}", r.min, r.max);
}

std::string type_text(const Rule& r, bool one_field) {
  switch (r.type) {
    case Type::kInteger:
      return range_text(r);
    case Type::kIntegers:
      if (one_field) return range_text(r);
      return fmt::format("{} whole numbers separated by spaces, each {}", r.fields,
                         r.max == kAny ? fmt::format("{} or more", r.min)
                                       : fmt::format("from {} to {}", r.min, r.max));
    case Type::kBool:
      return "true or false";
    case Type::kChoice: {
      std::string s = "one of ";
      for (std::size_t i = 0; i < r.choices.size(); ++i)
        s += std::string(i == 0 ? "" : (i + 1 == r.choices.size() ? " or " : ", ")) +
             std::string(r.choices[i]);
      return s;
    }
    case Type::kLimit:
      return "unlimited or " + range_text(r);
    case Type::kName:
      return "a name (letters, digits, _ + -)";
    case Type::kText:
      return "one line of printable text";
    case Type::kCpus:
      return "auto or a CPU list (\"0-3,8\")";
  }
  return "";
}

bool integer_in(std::string_view v, const Rule& r) {
  const auto n = text::to_int(text::trim(v));
  return n && *n >= r.min && *n <= r.max;
}

bool fits(std::string_view v, const Rule& r, bool one_field) {
  switch (r.type) {
    case Type::kInteger:
      return integer_in(v, r);
    case Type::kIntegers: {
      if (one_field) return integer_in(v, r);
      const auto parts = text::fields(v);
      if (parts.size() != static_cast<std::size_t>(r.fields)) return false;
      for (const auto p : parts)
        if (!integer_in(p, r)) return false;
      return true;
    }
    case Type::kBool: {
      Expected e;
      e.values = {std::string(v)};
      return e.as_bool().has_value();
    }
    case Type::kChoice:
      for (const auto c : r.choices)
        if (v == c) return true;
      return false;
    case Type::kLimit:
      return v == "unlimited" || integer_in(v, r);
    case Type::kName:
      return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '+' || c == '-';
      });
    case Type::kCpus:
      return v == "auto" || text::parse_cpu_list(v, 8191).has_value();
    case Type::kText:
      return !v.empty() && v.size() <= 4096 && std::none_of(v.begin(), v.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 && c != '\t';
      });
  }
  return false;
}

// What a value looks like in a message: quoted, with control characters spelled out.
std::string shown(std::string_view v) {
  std::string out = "\"";
  for (const char c : v) {
    if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + "\"";
}

Result<void> check_expected(const Expected& e, const Rule& r, bool one_field, const char* what) {
  if (e.kind == Expected::Kind::kAtLeast) {
    const bool numeric = r.type == Type::kInteger || r.type == Type::kLimit ||
                         r.type == Type::kText || r.type == Type::kIntegers;
    if (!numeric)
      return fail(fmt::format("{} \">= {}\": a minimum is for numbers; this setting takes {}", what,
                              e.values.front(), type_text(r, one_field)));
    Rule number = r;
    number.type = Type::kInteger;
    if (r.type != Type::kText && !fits(e.values.front(), number, true))
      return fail(
          fmt::format("{} \">= {}\": expected {}", what, e.values.front(), range_text(number)));
    return {};
  }
  for (const auto& v : e.values)
    if (!fits(v, r, one_field))
      return fail(fmt::format("{} {}: expected {}", what, shown(v), type_text(r, one_field)));
  return {};
}

}  // namespace

Result<void> check_value(const ProfileEntry& entry) {
  const Rule* r = rule_for(entry.key);
  if (r == nullptr) return {};
  const bool one_field = entry.field.has_value();
  if (one_field && r->type == Type::kIntegers && *entry.field > r->fields)
    return fail(fmt::format("field {}: {} has {} fields", *entry.field, entry.key, r->fields));
  if (auto ok = check_expected(entry.expected, *r, one_field, "value"); !ok) return ok;
  if (entry.critical)
    if (auto ok = check_expected(*entry.critical, *r, one_field, "critical"); !ok) return ok;
  return {};
}

std::string value_type_text(const std::string& key) {
  const Rule* r = rule_for(key);
  return r == nullptr ? "" : type_text(*r, false);
}

}  // namespace dltune::settings
