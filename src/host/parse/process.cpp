// Parsers of /proc/PID/{stat,schedstat,status,io,cmdline} (proc(5)).
#include "host/parse/process.hpp"

#include <algorithm>

#include <charconv>
#include <type_traits>

#include "core/text.hpp"

namespace dltune::host::parse {

namespace {

constexpr std::string_view kStat = "/proc/PID/stat";

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n';
}

// The next space-separated field of `s` from `pos`, moving `pos` past it; empty at the end.
std::string_view next_field(std::string_view s, std::size_t& pos) {
  while (pos < s.size() && is_space(s[pos])) ++pos;
  const std::size_t start = pos;
  while (pos < s.size() && !is_space(s[pos])) ++pos;
  return s.substr(start, pos - start);
}

template <class T>
std::optional<T> number(std::string_view s) {
  T v{};
  const auto* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end || s.empty()) return std::nullopt;
  return v;
}

// "name: 123 kB" → 123, for the line that starts with `key` (which includes the ':').
std::optional<std::uint64_t> keyed(std::string_view text, std::string_view key) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto eol = text.find('\n', pos);
    const auto line = text.substr(pos, eol == std::string_view::npos ? text.npos : eol - pos);
    if (line.substr(0, key.size()) == key) {
      std::size_t p = key.size();
      return number<std::uint64_t>(next_field(line, p));
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  return std::nullopt;
}

}  // namespace

Result<ProcStat> parse_proc_stat(std::string_view text) {
  ProcStat s;
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return fail("no (name) in", std::string(kStat));
  const auto pid = number<pid_t>(text::trim(text.substr(0, open)));
  if (!pid) return fail("no pid in", std::string(kStat));
  s.pid = *pid;
  s.comm = text.substr(open + 1, close - open - 1);
  // Fields 3 onwards follow the ')'; field N is the (N - 3)th of them.
  const std::string_view rest = text.substr(close + 1);
  std::size_t pos = 0;
  int field = 3;
  auto take = [&](int want) -> std::string_view {
    std::string_view f;
    while (field <= want) {
      f = next_field(rest, pos);
      if (f.empty()) return f;
      ++field;
    }
    return f;
  };
  auto need = [&](int want, auto& out, const char* name) -> Result<void> {
    const auto f = take(want);
    using T = std::remove_reference_t<decltype(out)>;
    const auto v = number<T>(f);
    if (!v)
      return fail(f.empty() ? "missing field" : "not a number", std::string(kStat) + " " + name);
    out = *v;
    return {};
  };
  const auto state = take(3);
  if (state.size() != 1) return fail("missing field", std::string(kStat) + " state");
  s.state = state[0];
  Result<void> ok;
  if (!(ok = need(4, s.ppid, "ppid"))) return tl::unexpected(ok.error());
  if (!(ok = need(9, s.flags, "flags"))) return tl::unexpected(ok.error());
  if (!(ok = need(10, s.minflt, "minflt"))) return tl::unexpected(ok.error());
  if (!(ok = need(12, s.majflt, "majflt"))) return tl::unexpected(ok.error());
  if (!(ok = need(14, s.utime, "utime"))) return tl::unexpected(ok.error());
  if (!(ok = need(15, s.stime, "stime"))) return tl::unexpected(ok.error());
  if (!(ok = need(20, s.threads, "num_threads"))) return tl::unexpected(ok.error());
  if (!(ok = need(22, s.start_ticks, "starttime"))) return tl::unexpected(ok.error());
  if (!(ok = need(24, s.rss_pages, "rss"))) return tl::unexpected(ok.error());
  if (!(ok = need(28, s.startstack, "startstack"))) return tl::unexpected(ok.error());
  if (!(ok = need(39, s.processor, "processor"))) return tl::unexpected(ok.error());
  return s;
}

Result<ProcSchedstat> parse_proc_schedstat(std::string_view text) {
  constexpr std::string_view kFile = "/proc/PID/schedstat";
  std::size_t pos = 0;
  const auto run = number<std::uint64_t>(next_field(text, pos));
  const auto wait = number<std::uint64_t>(next_field(text, pos));
  const auto slices = number<std::uint64_t>(next_field(text, pos));
  if (!run || !wait || !slices) return fail("not three numbers in", std::string(kFile));
  return ProcSchedstat{*run, *wait, *slices};
}

ProcSwitches parse_proc_status_switches(std::string_view text) {
  return {keyed(text, "voluntary_ctxt_switches:"), keyed(text, "nonvoluntary_ctxt_switches:")};
}

ProcIo parse_proc_io(std::string_view text) {
  return {keyed(text, "rchar:"), keyed(text, "wchar:"), keyed(text, "read_bytes:"),
          keyed(text, "write_bytes:")};
}

void cmdline_text(std::string_view raw, std::string& out) {
  // The arguments end with a NUL each; a process that rewrote its argv (setproctitle) may leave
  // a run of NULs or spaces: those are trimmed.
  while (!raw.empty() && (raw.back() == '\0' || raw.back() == ' ')) raw.remove_suffix(1);
  if (raw.size() > kCmdlineMax) raw = raw.substr(0, kCmdlineMax);
  out.assign(raw);
  for (char& c : out)
    if (c == '\0') c = ' ';
  // Its arguments are the process's to choose: no control character reaches a terminal.
  if (std::any_of(out.begin(), out.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7f || u == 0xc2;
      }))
    out = text::printable(out);
}

std::map<std::string, std::string> environ_entries(std::string_view raw) {
  std::map<std::string, std::string> out;
  while (!raw.empty()) {
    const auto end = raw.find('\0');
    const std::string_view entry = raw.substr(0, end);
    if (const auto eq = entry.find('='); eq != std::string_view::npos && eq > 0)
      out.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    if (end == std::string_view::npos) break;
    raw.remove_prefix(end + 1);
  }
  return out;
}

std::optional<std::string_view> environ_value(std::string_view raw, std::string_view name) {
  while (!raw.empty()) {
    const auto end = raw.find('\0');
    const std::string_view entry = raw.substr(0, end);
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
    if (end == std::string_view::npos) break;
    raw.remove_prefix(end + 1);
  }
  return std::nullopt;
}

}  // namespace dltune::host::parse
