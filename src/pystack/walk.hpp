#pragma once
// The frame walker: every thread's Python stack, read from an interpreter's memory through a
// Memory (the live process, or an image in tests) with the layout of its version. Every pointer
// it follows is bounded and checked; anything inconsistent (a read that fails, a loop, a null
// where there must be an object, a code object that is not one) fails that sample, never more.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "pystack/layout.hpp"
#include "pystack/memory.hpp"

namespace dltune::pystack {

inline constexpr std::size_t kMaxFrames = 256;        // per thread; deeper stacks are cut
inline constexpr std::size_t kMaxThreads = 512;       // per process
inline constexpr std::size_t kMaxInterpreters = 64;   // subinterpreters
inline constexpr std::size_t kMaxStringChars = 1024;  // a longer name or path is cut
inline constexpr std::size_t kMaxLineTable = 1u << 20;
// The cache of code objects, in bytes (their names and line tables): a target whose code
// objects share one large line table must not cost a table per object without bound.
inline constexpr std::size_t kMaxCodeCacheBytes = 32u << 20;

struct Frame {
  std::string function;  // co_qualname: "Model.forward" (3.9 and 3.10: co_name, "forward")
  std::string file;      // co_filename
  int line = 0;          // 0 when the instruction has no line
  auto operator<=>(const Frame&) const = default;
  bool operator==(const Frame&) const = default;
};

struct ThreadStack {
  std::uint64_t thread_id = 0;  // pthread_t, as threading.get_ident() says
  std::uint64_t native_id = 0;  // the kernel's TID (3.9, 3.10: as the process's namespace sees it)
  std::vector<Frame> frames;    // innermost first
  bool truncated = false;       // more than kMaxFrames
};

// The line of code unit `index` in a 3.11-format location table (CPython's
// Objects/locations.md): nullopt for an instruction without a location, or beyond the table;
// an error for a table that does not parse.
[[nodiscard]] Result<std::optional<int>> line_of(std::string_view table, int first_line,
                                                 std::int64_t index);

// The line of the instruction at byte `offset` in 3.9's co_lnotab (CPython 3.9's
// Objects/lnotab_notes.txt): pairs of an unsigned byte-offset increment and a signed line
// increment; every instruction has a line. An odd last byte is ignored, as CPython does.
[[nodiscard]] Result<std::optional<int>> line_of_lnotab(std::string_view table, int first_line,
                                                        std::int64_t offset);

// The line of the instruction at byte `offset` in 3.10's co_linetable (PEP 626; CPython 3.10's
// Objects/lnotab_notes.txt): pairs of an unsigned byte-range length and a signed line delta,
// -128 for a range without a line; nullopt for such a range or beyond the table.
[[nodiscard]] Result<std::optional<int>> line_of_pep626(std::string_view table, int first_line,
                                                        std::int64_t offset);

class StackReader {
 public:
  // `runtime`: the address of _PyRuntime; `code_type`: of PyCode_Type, when known, to check
  // that each frame's code is a code object.
  StackReader(const Memory& memory, PythonLayout layout, std::uint64_t runtime,
              std::optional<std::uint64_t> code_type = std::nullopt);

  // One sample: each thread of each interpreter, in CPython's order (the newest thread first).
  [[nodiscard]] Result<std::vector<ThreadStack>> read();
  // What the cache of code objects holds, in bytes (at most kMaxCodeCacheBytes).
  [[nodiscard]] std::size_t cached_bytes() const { return codes_bytes_; }

 private:
  struct Code {
    std::string function, file, linetable;
    int first_line = 0;
  };
  Result<std::uint64_t> pointer(std::uint64_t address) const;
  Result<std::string> text(std::uint64_t address) const;
  Result<std::string> bytes(std::uint64_t address) const;
  Result<const Code*> code(std::uint64_t address);
  Result<std::uint64_t> current_frame(std::uint64_t tstate) const;
  Result<std::optional<int>> line(const Code& code, const std::string& frame,
                                  std::uint64_t code_address) const;
  Result<void> frames(std::uint64_t top, ThreadStack& t, std::string& top_block);
  Result<ThreadStack> thread(std::uint64_t tstate);

  const Memory& memory_;
  PythonLayout layout_;
  std::uint64_t runtime_;
  std::optional<std::uint64_t> code_type_;
  // Code objects by address (their names do not change; bounded in count and bytes, emptied
  // when full).
  std::unordered_map<std::uint64_t, Code> codes_;
  std::size_t codes_bytes_ = 0;
};

}  // namespace dltune::pystack
