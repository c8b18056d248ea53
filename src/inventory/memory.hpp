#pragma once
// Memory facts: RAM, swap devices, huge pages, THP, /dev/shm, the VM sysctls that training
// touches, and the process limits that jobs inherit.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "host/parse/proc.hpp"
#include "inventory/context.hpp"

namespace dltune::inventory {

struct ShmFacts {
  std::optional<std::uint64_t> size_bytes;
  std::string size_source;  // "size= mount option" or "tmpfs default (half of RAM)"
  std::optional<std::uint64_t> used_bytes;
  std::string fstype;
};

struct ProcessLimit {
  std::optional<std::uint64_t> soft;  // empty = unlimited
  std::optional<std::uint64_t> hard;
};

struct MemoryFacts {
  std::optional<std::uint64_t> total_bytes;
  std::optional<std::uint64_t> available_bytes;
  std::optional<std::uint64_t> swap_total_bytes;
  std::optional<std::uint64_t> swap_free_bytes;
  std::vector<host::parse::Swap> swap_devices;
  bool swaps_known = false;  // /proc/swaps was read: an empty swap_devices is then "none"
  std::optional<std::uint64_t> hugepages_total;
  std::optional<std::uint64_t> hugepages_free;
  std::optional<std::uint64_t> hugepage_size_bytes;
  std::optional<host::parse::Choice> thp_enabled;
  std::optional<host::parse::Choice> thp_defrag;
  std::optional<ShmFacts> shm;
  std::map<std::string, std::string> sysctls;  // vm.* and kernel.numa_balancing
  std::map<std::string, ProcessLimit> limits;  // "nofile", "memlock", "nproc", "stack"
};

[[nodiscard]] MemoryFacts collect_memory(Context& ctx);
[[nodiscard]] Json to_json(const MemoryFacts& f);
[[nodiscard]] std::vector<text::Section> render_memory(const MemoryFacts& f);

}  // namespace dltune::inventory
