#include "pystack/debug_offsets.hpp"

#include <cstring>
#include <string>

#include <fmt/core.h>

namespace dltune::pystack {

namespace {

// Where each field sits in 3.13's _Py_DebugOffsets: the cookie (8 bytes), version and
// free_threaded, then runtime_state {size, finalizing, interpreters_head}, interpreter_state
// (13 fields from size), thread_state (9), interpreter_frame (6), code_object (10), each a
// uint64_t (Include/internal/pycore_runtime.h, v3.13.0).
constexpr std::size_t kFreeThreaded = 16;
constexpr std::size_t kRuntime = 24, kInterp = 48, kThread = 152, kFrame = 224, kCode = 272;

}  // namespace

Result<bool> check_debug_offsets(const Memory& memory, std::uint64_t runtime,
                                 const PythonLayout& l) {
  std::string block(kDebugOffsetsRead, '\0');
  if (auto ok = memory.read(runtime, block.data(), block.size()); !ok)
    return tl::unexpected(ok.error());
  if (block.compare(0, 8, "xdebugpy") != 0) return false;
  const auto at = [&](std::size_t offset) {
    std::uint64_t v = 0;
    std::memcpy(&v, block.data() + offset, sizeof v);
    return v;
  };
  if (at(kFreeThreaded) != 0)
    return fail(
        fmt::format("Python {}.{}: a free-threaded build: no layout known "
                    "(knowledge/python_layouts.toml)",
                    l.major, l.minor));
  const struct {
    const char* name;
    std::size_t offset;
    std::uint64_t ours;
  } fields[] = {
      {"runtime_interpreters_head", kRuntime + 16, l.runtime_interpreters_head},
      {"interp_next", kInterp + 16, l.interp_next},
      {"interp_threads_head", kInterp + 24, l.interp_threads_head},
      {"tstate_next", kThread + 16, l.tstate_next},
      {"tstate_current_frame", kThread + 32, l.tstate_current_frame.value_or(~0ull)},
      {"tstate_thread_id", kThread + 40, l.tstate_thread_id},
      {"tstate_native_thread_id", kThread + 48, l.tstate_native_thread_id},
      {"frame_previous", kFrame + 8, l.frame_previous},
      {"frame_code", kFrame + 16, l.frame_code},
      {"frame_instr", kFrame + 24, l.frame_instr},
      {"frame_owner", kFrame + 40, l.frame_owner},
      {"code_filename", kCode + 8, l.code_filename},
      {"code_name", kCode + 16, l.code_name},
      {"code_qualname", kCode + 24, l.code_qualname},
      {"code_linetable", kCode + 32, l.code_linetable},
      {"code_firstlineno", kCode + 40, l.code_firstlineno},
      {"code_adaptive", kCode + 72, l.code_adaptive},
  };
  for (const auto& f : fields) {
    if (at(f.offset) != f.ours)
      return fail(
          fmt::format("Python {}.{}: the interpreter's _Py_DebugOffsets put {} at {}, "
                      "knowledge/python_layouts.toml at {}: a build this layout does "
                      "not fit",
                      l.major, l.minor, f.name, at(f.offset), f.ours));
  }
  return true;
}

}  // namespace dltune::pystack
