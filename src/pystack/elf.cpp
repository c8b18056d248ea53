#include "pystack/elf.hpp"

#include <cstring>

namespace dltune::pystack {

namespace {

// Field offsets of the ELF64 structures (the System V ABI, "ELF-64 Object File Format" 1.5;
// /usr/include/elf.h's Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr, Elf64_Sym).
constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kPhdrSize = 56;
constexpr std::size_t kShdrSize = 64;
constexpr std::size_t kSymSize = 24;
constexpr std::uint32_t kPtLoad = 1;
constexpr std::uint32_t kShtSymtab = 2;
constexpr std::uint32_t kShtDynsym = 11;
constexpr std::uint16_t kEtExec = 2;
constexpr std::uint16_t kEtDyn = 3;
constexpr std::uint16_t kEmX8664 = 62;

template <class T>
std::optional<T> at(std::string_view b, std::uint64_t off) {
  if (off > b.size() || b.size() - off < sizeof(T)) return std::nullopt;
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

// Does [off, off + count * size) lie in the file? Overflow-safe.
bool fits(std::string_view b, std::uint64_t off, std::uint64_t count, std::uint64_t size) {
  if (off > b.size()) return false;
  if (size != 0 && count > (b.size() - off) / size) return false;
  return true;
}

Result<void> check_header(std::string_view b) {
  if (b.size() < kEhdrSize || b.substr(0, 4) != std::string_view("\x7f"
                                                                 "ELF",
                                                                 4))
    return fail("not an ELF file");
  if (b[4] != 2 || b[5] != 1) return fail("not a little-endian 64-bit ELF file");
  const auto machine = *at<std::uint16_t>(b, 18);
  if (machine != kEmX8664) return fail("not an x86-64 ELF file");
  return {};
}

struct Section {
  std::uint32_t type = 0;
  std::uint64_t offset = 0, size = 0, entsize = 0;
  std::uint32_t link = 0;
};

std::optional<Section> section(std::string_view b, std::uint64_t shoff, std::uint64_t i) {
  const auto base = shoff + i * kShdrSize;
  Section s;
  const auto type = at<std::uint32_t>(b, base + 4);
  const auto offset = at<std::uint64_t>(b, base + 24);
  const auto size = at<std::uint64_t>(b, base + 32);
  const auto link = at<std::uint32_t>(b, base + 40);
  const auto entsize = at<std::uint64_t>(b, base + 56);
  if (!type || !offset || !size || !link || !entsize) return std::nullopt;
  s.type = *type;
  s.offset = *offset;
  s.size = *size;
  s.link = *link;
  s.entsize = *entsize;
  return s;
}

}  // namespace

Result<ElfFile> read_elf(std::string_view b) {
  if (auto ok = check_header(b); !ok) return tl::unexpected(ok.error());
  const auto type = *at<std::uint16_t>(b, 16);
  if (type != kEtExec && type != kEtDyn) return fail("not an executable or shared ELF file");
  const auto phoff = *at<std::uint64_t>(b, 32);
  const auto phentsize = *at<std::uint16_t>(b, 54);
  const auto phnum = *at<std::uint16_t>(b, 56);
  if (phentsize < kPhdrSize || !fits(b, phoff, phnum, phentsize))
    return fail("truncated program headers in ELF file");
  ElfFile out;
  out.shared = type == kEtDyn;
  bool any = false;
  for (std::uint64_t i = 0; i < phnum; ++i) {
    const auto base = phoff + i * phentsize;
    if (*at<std::uint32_t>(b, base) != kPtLoad) continue;
    const auto vaddr = *at<std::uint64_t>(b, base + 16);
    auto align = *at<std::uint64_t>(b, base + 48);
    if (align == 0 || (align & (align - 1)) != 0) align = 1;
    const auto page = vaddr & ~(align - 1);
    if (!any || page < out.first_load) out.first_load = page;
    any = true;
  }
  if (!any) return fail("no loadable segment in ELF file");
  return out;
}

Result<std::optional<std::uint64_t>> find_symbol(std::string_view b, std::string_view name) {
  if (auto ok = check_header(b); !ok) return tl::unexpected(ok.error());
  const auto shoff = *at<std::uint64_t>(b, 40);
  const auto shentsize = *at<std::uint16_t>(b, 58);
  const auto shnum = *at<std::uint16_t>(b, 60);
  if (shnum == 0) return std::optional<std::uint64_t>();  // stripped of sections
  if (shentsize != kShdrSize || !fits(b, shoff, shnum, kShdrSize))
    return fail("truncated section headers in ELF file");
  for (const auto wanted : {kShtDynsym, kShtSymtab}) {
    for (std::uint64_t i = 0; i < shnum; ++i) {
      const auto s = section(b, shoff, i);
      if (!s || s->type != wanted) continue;
      if (s->entsize != kSymSize || !fits(b, s->offset, 1, s->size))
        return fail("symbol table out of bounds in ELF file");
      if (s->link >= shnum) return fail("symbol table names no string table in ELF file");
      const auto strings = section(b, shoff, s->link);
      if (!strings || !fits(b, strings->offset, 1, strings->size))
        return fail("string table out of bounds in ELF file");
      const auto strtab = b.substr(strings->offset, strings->size);
      for (std::uint64_t k = 0; k < s->size / kSymSize; ++k) {
        const auto sym = s->offset + k * kSymSize;
        const auto name_off = *at<std::uint32_t>(b, sym);
        const auto shndx = *at<std::uint16_t>(b, sym + 6);
        if (shndx == 0 || name_off >= strtab.size()) continue;  // undefined, or no name
        const auto rest = strtab.substr(name_off);
        const auto end = rest.find('\0');
        if (end == std::string_view::npos) continue;
        if (rest.substr(0, end) == name)
          return std::optional<std::uint64_t>(*at<std::uint64_t>(b, sym + 8));
      }
    }
  }
  return std::optional<std::uint64_t>();
}

}  // namespace dltune::pystack
