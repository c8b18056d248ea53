// libFuzzer target: what `dltune stacks` reads from outside a Python process (src/pystack): an
// interpreter's ELF file, /proc/PID/maps, the three line table formats (3.9's co_lnotab, 3.10's
// PEP 626 table, 3.11's location table), the layouts table, and the frame walker over a memory
// image built from the input (each range: an 8-byte address, a 2-byte length, the bytes), with
// the 3.9 and 3.10 layouts (PyFrameObjects) and the 3.11, 3.12 and 3.13 ones
// (_PyInterpreterFrames), and 3.13's _Py_DebugOffsets.
//
// DLTUNE_FUZZ_WRITE_SEED=FILE writes the walker's seeds (the unit tests' interpreter images,
// tests/unit/pystack/image.hpp, for each layout: FILE, FILE-3.9, FILE-3.10, FILE-3.12,
// FILE-3.13) and the line tables' (FILE-lnotab, FILE-pep626), and exits.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz_input.hpp"
#include "pystack/debug_offsets.hpp"
#include "pystack/elf.hpp"
#include "pystack/layout.hpp"
#include "pystack/maps.hpp"
#include "pystack/process.hpp"
#include "pystack/walk.hpp"
#include "unit/pystack/image.hpp"

namespace {

namespace pystack = dltune::pystack;

// Selectors (the input's first byte, modulo 16) of the walker: 2 (3.11), 5 (3.12), 6 (3.13),
// 10 (3.9), 11 (3.10); of the line tables: 3 (3.11), 8 (3.9), 9 (3.10).
constexpr unsigned kWalkSelectors[] = {2, 5, 6, 10, 11};
constexpr int kWalkMinors[] = {11, 12, 13, 9, 10};
constexpr std::size_t kWalks = std::size(kWalkMinors);

void write_seed(const std::string& name, unsigned selector, const std::string& bytes) {
  std::ofstream out(name, std::ios::binary);
  out << static_cast<char>(selector) << bytes;
  if (!out) std::exit(2);
}

void write_seeds(const std::string& path) {
  for (std::size_t i = 0; i < kWalks; ++i) {
    const auto layout = pystack::layout_for(3, kWalkMinors[i]);
    if (!layout) {
      std::fprintf(stderr, "fuzz_pystack: %s\n", layout.error().message().c_str());
      std::exit(2);
    }
    const auto image = layout->frame_objects() ? dltune::testing::frame_object_image(*layout)
                                               : dltune::testing::python311_image(*layout);
    write_seed(i == 0 ? path : path + "-3." + std::to_string(kWalkMinors[i]), kWalkSelectors[i],
               image.encoded);
  }
  write_seed(path + "-lnotab", 8, dltune::testing::lnotab39_table());
  write_seed(path + "-pep626", 9, dltune::testing::pep626_table());
  std::exit(0);
}

void walk(std::string_view t, int minor) {
  static const auto layouts = [] {
    std::vector<pystack::PythonLayout> out;
    for (const int m : kWalkMinors) out.push_back(*pystack::layout_for(3, m));
    return out;
  }();
  const auto which = static_cast<std::size_t>(
      std::find(std::begin(kWalkMinors), std::end(kWalkMinors), minor) - std::begin(kWalkMinors));
  pystack::MemoryImage image;
  while (t.size() >= 10) {
    std::uint64_t address = 0;
    std::uint16_t length = 0;
    std::memcpy(&address, t.data(), 8);
    std::memcpy(&length, t.data() + 8, 2);
    t.remove_prefix(10);
    const auto n = std::min<std::size_t>(length, t.size());
    image.add(address, std::string(t.substr(0, n)));
    t.remove_prefix(n);
  }
  pystack::StackReader reader(image, layouts[which], dltune::testing::PythonImage::kRuntime);
  (void)reader.read();
  (void)reader.read();  // again, through the cache of code objects
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* seed = std::getenv("DLTUNE_FUZZ_WRITE_SEED")) write_seeds(seed);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dltune::fuzz::Input in(data, size);
  const auto t = in.text;
  switch (in.selector % 16) {
    case 0:
      (void)pystack::read_elf(t);
      (void)pystack::find_symbol(t, "_PyRuntime");
      break;
    case 1:
      if (const auto maps = pystack::parse_maps(t)) {
        for (const auto& path : pystack::interpreter_candidates(*maps))
          (void)pystack::load_start(*maps, path);
      }
      (void)pystack::version_from_name(t);
      break;
    case 3:
      for (std::int64_t i = -1; i < 64; ++i) (void)pystack::line_of(t, 1, i);
      break;
    case 4:
      (void)pystack::parse_layouts(t, "fuzz");
      break;
    case 2:
      walk(t, 11);
      break;
    case 5:
      walk(t, 12);
      break;
    case 6:
      walk(t, 13);
      break;
    case 8:
      for (std::int64_t i = -1; i < 128; ++i) (void)pystack::line_of_lnotab(t, 1, i);
      break;
    case 9:
      for (std::int64_t i = -1; i < 128; ++i) (void)pystack::line_of_pep626(t, 1, i);
      break;
    case 10:
      walk(t, 9);
      break;
    case 11:
      walk(t, 10);
      break;
    case 7: {  // 3.13's _Py_DebugOffsets against the table
      pystack::MemoryImage image;
      image.add(dltune::testing::PythonImage::kRuntime, std::string(t));
      if (const auto l = pystack::layout_for(3, 13))
        (void)pystack::check_debug_offsets(image, dltune::testing::PythonImage::kRuntime, *l);
      break;
    }
  }
  return 0;
}
