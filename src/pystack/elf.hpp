#pragma once
// The few facts of an ELF64 file that finding CPython's state needs: its type, the lowest
// address it loads at, and a symbol's value from .dynsym or .symtab. Pure: the file's bytes in,
// every offset and size checked against them (fuzzed: tests/fuzz/fuzz_pystack.cpp).
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/error.hpp"

namespace dltune::pystack {

struct ElfFile {
  bool shared = false;           // ET_DYN (a PIE or a library): loaded at a bias
  std::uint64_t first_load = 0;  // the lowest PT_LOAD p_vaddr, rounded down to its page
};

// The header and program headers of a little-endian x86-64 ELF64 file; an error names what
// is wrong ("not an ELF file", "truncated program headers", ...).
[[nodiscard]] Result<ElfFile> read_elf(std::string_view bytes);

// The value (st_value) of the defined symbol `name` in .dynsym, else .symtab; nullopt when
// neither has it. An error when a section table or string table is out of bounds.
[[nodiscard]] Result<std::optional<std::uint64_t>> find_symbol(std::string_view bytes,
                                                               std::string_view name);

}  // namespace dltune::pystack
