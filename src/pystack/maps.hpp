#pragma once
// /proc/PID/maps (proc(5)): one mapping a line, "START-END PERMS OFFSET DEV INODE [PATH]".
// Pure: the text in, the mappings out (fuzzed: tests/fuzz/fuzz_pystack.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::pystack {

struct Mapping {
  std::uint64_t start = 0, end = 0;
  std::uint64_t offset = 0;  // in the mapped file
  std::uint64_t inode = 0;
  std::uint32_t dev_major = 0, dev_minor = 0;  // the device of the mapped file ("fd:01", hex)
  bool readable = false, writable = false, executable = false;
  std::string path;  // empty for anonymous memory; "[heap]", "[stack]" for the kernel's names
};

// Every line; an error names the first line that does not parse ("line 3").
[[nodiscard]] Result<std::vector<Mapping>> parse_maps(std::string_view text);

}  // namespace dltune::pystack
