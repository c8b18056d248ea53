#pragma once
// 3.13+ start _PyRuntime with _Py_DebugOffsets: the offsets of the fields an out-of-process
// reader needs, as the running interpreter was built (Include/internal/pycore_runtime.h,
// v3.13.0). dltune checks its layout from knowledge/python_layouts.toml against them, so that a
// build with other offsets (the free-threaded 3.13t, a debug build) is refused by name rather
// than read wrongly.
#include <cstdint>

#include "core/error.hpp"
#include "pystack/layout.hpp"
#include "pystack/memory.hpp"

namespace dltune::pystack {

// The size of the part of 3.13's _Py_DebugOffsets that is read (cookie to code_object).
inline constexpr std::size_t kDebugOffsetsRead = 352;

// False when there is no "xdebugpy" cookie at `runtime` (before 3.13); an error naming the first
// field whose offset differs from `layout`'s, or a free-threaded build.
[[nodiscard]] Result<bool> check_debug_offsets(const Memory& memory, std::uint64_t runtime,
                                               const PythonLayout& layout);

}  // namespace dltune::pystack
