#include "pystack/walk.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include <fmt/core.h>

namespace dltune::pystack {

namespace {

constexpr std::size_t kMaxCodes = 8192;
// What a code object costs in the cache beyond its strings: the map's node and Code itself.
constexpr std::size_t kCodeOverhead = 128;

std::string hex(std::uint64_t a) {
  return fmt::format("{:#x}", a);
}

template <class T>
T field(const std::string& block, std::uint64_t offset) {
  T v{};
  if (offset <= block.size() && block.size() - offset >= sizeof(T))
    std::memcpy(&v, block.data() + offset, sizeof(T));
  return v;
}

// Appends code point `c` as UTF-8 (a surrogate or a value past U+10FFFF as U+FFFD, a control
// character as '?').
void utf8(std::string& out, std::uint32_t c) {
  if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff) c = 0xfffd;
  // A control character (C0, DEL, C1) in a name the target chose reaches no terminal.
  if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) c = '?';
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

// The varints of the location table (Objects/locations.md): 6 bits a byte, least significant
// first, bit 6 set on every byte but the last.
bool varint(std::string_view t, std::size_t& pos, std::uint64_t& out) {
  out = 0;
  for (unsigned shift = 0; shift < 64; shift += 6) {
    if (pos >= t.size()) return false;
    const auto b = static_cast<unsigned char>(t[pos++]);
    out |= static_cast<std::uint64_t>(b & 63) << shift;
    if ((b & 64) == 0) return true;
  }
  return false;
}

bool svarint(std::string_view t, std::size_t& pos, std::int64_t& out) {
  std::uint64_t u = 0;
  if (!varint(t, pos, u)) return false;
  const auto magnitude = static_cast<std::int64_t>(u >> 1);
  out = (u & 1) != 0 ? -magnitude : magnitude;
  return true;
}

}  // namespace

Result<std::optional<int>> line_of(std::string_view t, int first_line, std::int64_t index) {
  if (index < 0) return std::optional<int>(first_line);  // before the first instruction
  std::int64_t line = first_line;
  std::int64_t address = 0;
  std::size_t pos = 0;
  while (pos < t.size()) {
    const auto b = static_cast<unsigned char>(t[pos++]);
    if ((b & 0x80) == 0)
      return fail("location table entry without its first-byte bit at",
                  fmt::format("byte {}", pos - 1));
    const int code = (b >> 3) & 15;
    const std::int64_t length = (b & 7) + 1;
    std::int64_t delta = 0;
    bool none = false;
    std::uint64_t skip = 0;
    if (code == 15) {
      none = true;
    } else if (code == 14) {
      if (!svarint(t, pos, delta) || !varint(t, pos, skip) || !varint(t, pos, skip) ||
          !varint(t, pos, skip))
        return fail("truncated location table entry at", fmt::format("byte {}", pos));
    } else if (code == 13) {
      if (!svarint(t, pos, delta))
        return fail("truncated location table entry at", fmt::format("byte {}", pos));
    } else if (code >= 10) {
      delta = code - 10;
      pos += 2;
    } else {
      pos += 1;
    }
    if (pos > t.size()) return fail("truncated location table entry at", "the end");
    // A long form's delta is a varint of up to 64 bits: bounded before it is added.
    if (delta < -(1 << 30) || delta > (1 << 30)) return fail("absurd line in location table");
    line += delta;
    if (line < -(1 << 30) || line > (1 << 30)) return fail("absurd line in location table");
    if (index < address + length)
      return none ? std::optional<int>() : std::optional<int>(static_cast<int>(line));
    address += length;
  }
  return std::optional<int>();
}

Result<std::optional<int>> line_of_lnotab(std::string_view t, int first_line, std::int64_t offset) {
  // CPython 3.9's PyCode_Addr2Line: add each pair's line increment while the address reached by
  // its offset increment is not past `offset`.
  std::int64_t line = first_line;
  std::int64_t address = 0;
  for (std::size_t pos = 0; pos + 1 < t.size(); pos += 2) {
    address += static_cast<unsigned char>(t[pos]);
    if (address > offset) break;
    line += static_cast<signed char>(t[pos + 1]);
    if (line < -(1 << 30) || line > (1 << 30)) return fail("absurd line in line number table");
  }
  return std::optional<int>(static_cast<int>(line));
}

Result<std::optional<int>> line_of_pep626(std::string_view t, int first_line, std::int64_t offset) {
  if (offset < 0) return std::optional<int>(first_line);  // before the first instruction
  if (t.size() % 2 != 0) return fail("a 3.10 line table of odd length");
  // Each pair covers bytes [end, end + length) with the line so far plus its delta (a range of
  // length 0 moves the line only); a delta of -128 is a range without a line, the line
  // unchanged.
  std::int64_t line = first_line;
  std::int64_t end = 0;
  for (std::size_t pos = 0; pos < t.size(); pos += 2) {
    const std::int64_t start = end;
    end += static_cast<unsigned char>(t[pos]);
    const auto delta = static_cast<signed char>(t[pos + 1]);
    const bool none = delta == -128;
    if (!none) line += delta;
    if (line < -(1 << 30) || line > (1 << 30)) return fail("absurd line in line number table");
    if (offset >= start && offset < end)
      return none ? std::optional<int>() : std::optional<int>(static_cast<int>(line));
  }
  return std::optional<int>();
}

StackReader::StackReader(const Memory& memory, PythonLayout layout, std::uint64_t runtime,
                         std::optional<std::uint64_t> code_type)
    : memory_(memory), layout_(std::move(layout)), runtime_(runtime), code_type_(code_type) {}

Result<std::uint64_t> StackReader::pointer(std::uint64_t address) const {
  std::uint64_t v = 0;
  if (auto ok = memory_.read(address, &v, sizeof v); !ok) return tl::unexpected(ok.error());
  return v;
}

Result<std::string> StackReader::text(std::uint64_t address) const {
  if (address == 0) return fail("a null string pointer");
  // The PyASCIIObject header only: a short ASCII string ends right after it.
  std::string head(layout_.unicode_ascii_data, '\0');
  if (auto ok = memory_.read(address, head.data(), head.size()); !ok)
    return tl::unexpected(ok.error());
  const auto state = field<std::uint32_t>(head, layout_.unicode_state);
  const auto length = field<std::int64_t>(head, layout_.unicode_length);
  const auto kind = (state >> layout_.unicode_kind_shift) & 7;
  const bool compact = ((state >> layout_.unicode_compact_shift) & 1) != 0;
  const bool ascii = ((state >> layout_.unicode_ascii_shift) & 1) != 0;
  if (!compact || length < 0 || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
    return fail("not a compact str object at", hex(address));
  const auto chars = std::min<std::size_t>(static_cast<std::size_t>(length), kMaxStringChars);
  const auto data = address + (ascii ? layout_.unicode_ascii_data : layout_.unicode_compact_data);
  std::string raw(chars * kind, '\0');
  if (auto ok = memory_.read(data, raw.data(), raw.size()); !ok) return tl::unexpected(ok.error());
  if (ascii) return raw;
  std::string out;
  out.reserve(chars);
  for (std::size_t i = 0; i < chars; ++i) {
    std::uint32_t c = 0;
    if (kind == 1) c = static_cast<unsigned char>(raw[i]);
    if (kind == 2) c = field<std::uint16_t>(raw, i * 2);
    if (kind == 4) c = field<std::uint32_t>(raw, i * 4);
    utf8(out, c);
  }
  return out;
}

Result<std::string> StackReader::bytes(std::uint64_t address) const {
  if (address == 0) return fail("a null bytes pointer");
  const auto size = pointer(address + layout_.bytes_size);
  if (!size) return tl::unexpected(size.error());
  if (*size > kMaxLineTable) return fail("absurd bytes object at", hex(address));
  std::string out(*size, '\0');
  if (auto ok = memory_.read(address + layout_.bytes_data, out.data(), out.size()); !ok)
    return tl::unexpected(ok.error());
  return out;
}

Result<const StackReader::Code*> StackReader::code(std::uint64_t address) {
  if (const auto it = codes_.find(address); it != codes_.end()) return &it->second;
  const auto& l = layout_;
  std::string block(std::max({l.code_filename, l.code_name, l.code_qualname, l.code_linetable,
                              l.code_firstlineno, std::uint64_t{8}}) +
                        8,
                    '\0');
  if (auto ok = memory_.read(address, block.data(), block.size()); !ok)
    return tl::unexpected(ok.error());
  if (code_type_ && field<std::uint64_t>(block, 8) != *code_type_)
    return fail("not a code object at", hex(address));
  Code c;
  auto qualname = text(field<std::uint64_t>(block, l.code_qualname));
  if (!qualname) return tl::unexpected(qualname.error());
  auto file = text(field<std::uint64_t>(block, l.code_filename));
  if (!file) return tl::unexpected(file.error());
  auto table = bytes(field<std::uint64_t>(block, l.code_linetable));
  if (!table) return tl::unexpected(table.error());
  c.function = std::move(*qualname);
  c.file = std::move(*file);
  c.linetable = std::move(*table);
  c.first_line = field<std::int32_t>(block, l.code_firstlineno);
  const std::size_t cost = c.function.size() + c.file.size() + c.linetable.size() + kCodeOverhead;
  if (codes_.size() >= kMaxCodes || codes_bytes_ + cost > kMaxCodeCacheBytes) {
    codes_.clear();
    codes_bytes_ = 0;
  }
  codes_bytes_ += cost;
  return &codes_.emplace(address, std::move(c)).first->second;
}

Result<std::uint64_t> StackReader::current_frame(std::uint64_t tstate) const {
  const auto& l = layout_;
  if (l.tstate_frame) return pointer(tstate + *l.tstate_frame);  // 3.9, 3.10
  if (l.tstate_current_frame) return pointer(tstate + *l.tstate_current_frame);
  const auto cframe = pointer(tstate + l.tstate_cframe.value_or(0));
  if (!cframe) return tl::unexpected(cframe.error());
  if (*cframe == 0) return 0;  // a thread that has not started running Python
  return pointer(*cframe + l.cframe_current_frame.value_or(0));
}

Result<std::optional<int>> StackReader::line(const Code& c, const std::string& frame,
                                             std::uint64_t code_address) const {
  const auto& l = layout_;
  if (l.frame_objects()) {
    // PyFrameObject.f_lasti: the instruction running, in frame_lasti_unit bytes (3.9 counts
    // bytes, 3.10 code units); -1 before the first one.
    const auto lasti = field<std::int32_t>(frame, l.frame_lasti);
    const auto offset =
        lasti < 0 ? std::int64_t{-1} : static_cast<std::int64_t>(lasti) * l.frame_lasti_unit;
    if (l.linetable == LineTable::lnotab) return line_of_lnotab(c.linetable, c.first_line, offset);
    return line_of_pep626(c.linetable, c.first_line, offset);
  }
  const auto instr = field<std::uint64_t>(frame, l.frame_instr);
  const auto start = code_address + l.code_adaptive;
  // CPython's _PyInterpreterFrame_LASTI: code units from the first instruction.
  const auto index = (static_cast<std::int64_t>(instr - start)) / 2;
  return line_of(c.linetable, c.first_line, index);
}

Result<void> StackReader::frames(std::uint64_t top, ThreadStack& t, std::string& top_block) {
  const auto& l = layout_;
  const bool objects = l.frame_objects();
  std::string block(
      (objects ? std::max({l.frame_code, l.frame_previous, l.frame_lasti})
               : std::max({l.frame_code, l.frame_previous, l.frame_instr, l.frame_owner})) +
          8,
      '\0');
  std::unordered_set<std::uint64_t> seen;
  for (auto f = top; f != 0;) {
    if (!seen.insert(f).second) return fail("the frames of a thread loop at", hex(f));
    if (seen.size() > kMaxFrames * 4) return fail("absurdly many frames in a thread");
    if (auto ok = memory_.read(f, block.data(), block.size()); !ok)
      return tl::unexpected(ok.error());
    if (f == top) top_block = block;
    const auto previous = field<std::uint64_t>(block, l.frame_previous);
    if (!objects && l.frame_owner_cstack >= 0 &&
        static_cast<unsigned char>(block[l.frame_owner]) == l.frame_owner_cstack) {
      f = previous;  // the C stack's entry frame: no code of its own (3.12+)
      continue;
    }
    if (t.frames.size() >= kMaxFrames) {
      t.truncated = true;
      break;
    }
    const auto code_address = field<std::uint64_t>(block, l.frame_code);
    if (code_address == 0) return fail("a frame without code at", hex(f));
    auto c = code(code_address);
    if (!c) return tl::unexpected(c.error());
    auto at = line(**c, block, code_address);
    if (!at) return tl::unexpected(at.error());
    Frame out;
    out.function = (*c)->function;
    out.file = (*c)->file;
    out.line = at->value_or(0);
    t.frames.push_back(std::move(out));
    f = previous;
  }
  return {};
}

Result<ThreadStack> StackReader::thread(std::uint64_t tstate) {
  const auto& l = layout_;
  ThreadStack t;
  auto id = pointer(tstate + l.tstate_thread_id);
  if (!id) return tl::unexpected(id.error());
  t.thread_id = *id;
  if (l.pthread_tid) {
    // Before 3.11 PyThreadState has no native_thread_id: thread_id is the pthread_t, the
    // address of the C library's thread descriptor, which keeps the TID (a pid_t) at
    // pthread_tid. A descriptor that cannot be read, or holds no plausible TID, says 0.
    std::int32_t tid = 0;
    if (*id != 0 && memory_.read(*id + *l.pthread_tid, &tid, sizeof tid) && tid > 0)
      t.native_id = static_cast<std::uint64_t>(tid);
  } else {
    auto native = pointer(tstate + l.tstate_native_thread_id);
    if (!native) return tl::unexpected(native.error());
    t.native_id = *native;
  }
  // The thread runs on while it is read: a walk is kept only when its innermost frame is still
  // the thread's current one, with the same code and caller, after it (else its frames may be
  // torn: a caller returned and its memory was reused). A few tries, then the sample is skipped.
  constexpr int kTries = 3;
  std::string top_block, check_block;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    const auto top = current_frame(tstate);
    if (!top) return tl::unexpected(top.error());
    if (*top == 0) return t;
    t.frames.clear();
    t.truncated = false;
    top_block.clear();
    const auto walked = frames(*top, t, top_block);
    const auto again = current_frame(tstate);
    if (!again) return tl::unexpected(again.error());
    if (*again == *top) {
      check_block.resize(top_block.size());
      const auto reread = memory_.read(*top, check_block.data(), check_block.size());
      if (!reread) return tl::unexpected(reread.error());
      // The same code called from the same frame: the frames below it are the ones walked.
      // (Its instruction moves on while it runs; that is not a torn stack.)
      const auto same = [&](std::uint64_t offset) {
        return field<std::uint64_t>(check_block, offset) == field<std::uint64_t>(top_block, offset);
      };
      if (same(l.frame_code) && same(l.frame_previous)) {
        if (!walked) return tl::unexpected(walked.error());
        return t;
      }
    }
  }
  return fail("frames changed under the reader of thread", std::to_string(t.native_id), EAGAIN);
}

Result<std::vector<ThreadStack>> StackReader::read() {
  std::vector<ThreadStack> out;
  auto interp = pointer(runtime_ + layout_.runtime_interpreters_head);
  if (!interp) return tl::unexpected(interp.error());
  if (*interp == 0) return fail("no interpreter yet (or any more) in _PyRuntime");
  std::unordered_set<std::uint64_t> seen;
  for (std::size_t n = 0; *interp != 0; ++n) {
    if (n >= kMaxInterpreters) return fail("absurdly many interpreters in _PyRuntime");
    if (!seen.insert(*interp).second) return fail("the interpreters loop at", hex(*interp));
    auto tstate = pointer(*interp + layout_.interp_threads_head);
    if (!tstate) return tl::unexpected(tstate.error());
    while (*tstate != 0) {
      if (out.size() >= kMaxThreads) return fail("absurdly many threads in the interpreter");
      if (!seen.insert(*tstate).second) return fail("the threads loop at", hex(*tstate));
      auto t = thread(*tstate);
      if (!t) return tl::unexpected(t.error());
      out.push_back(std::move(*t));
      tstate = pointer(*tstate + layout_.tstate_next);
      if (!tstate) return tl::unexpected(tstate.error());
    }
    interp = pointer(*interp + layout_.interp_next);
    if (!interp) return tl::unexpected(interp.error());
  }
  return out;
}

}  // namespace dltune::pystack
