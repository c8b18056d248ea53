// Kernel lines of syslog files (diagnose/syslog_files.hpp).
#include "diagnose/syslog_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include <fmt/core.h>

namespace dltune::diagnose {

namespace {

using std::string_view;

bool digits(string_view s, std::size_t at, std::size_t n, int& out) {
  if (at + n > s.size()) return false;
  out = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// "host kernel: [ 123.456] text" → "text"; nullopt when the tag is not the kernel's.
std::optional<string_view> kernel_message(string_view rest) {
  const auto sp = rest.find(' ');
  if (sp == string_view::npos) return std::nullopt;
  rest.remove_prefix(sp + 1);
  if (!rest.starts_with("kernel: ")) return std::nullopt;
  rest.remove_prefix(8);
  if (rest.starts_with("[")) {
    const auto close = rest.find("] ");
    if (close != string_view::npos && close < 20) rest.remove_prefix(close + 2);
  }
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
  return rest;
}

std::optional<SyslogLine> rfc3339(string_view line) {
  // "YYYY-MM-DDTHH:MM:SS" and one more character at least; the checks below index up to [19].
  // (Found by fuzz_kernel_log: "4184" read line[4], past the end; and a year past 2262 made
  // the nanoseconds overflow, hence the years a log of this machine can hold.)
  if (line.size() < 20) return std::nullopt;
  int y, mo, d, h, mi, s;
  if (!digits(line, 0, 4, y) || line[4] != '-' || !digits(line, 5, 2, mo) || line[7] != '-' ||
      !digits(line, 8, 2, d) || line[10] != 'T' || !digits(line, 11, 2, h) || line[13] != ':' ||
      !digits(line, 14, 2, mi) || line[16] != ':' || !digits(line, 17, 2, s) || y < 1970 ||
      y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
    return std::nullopt;
  std::size_t i = 19;
  std::int64_t frac_ns = 0;
  if (i < line.size() && line[i] == '.') {
    std::int64_t scale = 100'000'000;
    for (++i; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i, scale /= 10)
      frac_ns += (line[i] - '0') * scale;
  }
  std::int64_t offset_s = 0;
  if (i < line.size() && line[i] == 'Z') {
    ++i;
  } else if (i < line.size() && (line[i] == '+' || line[i] == '-')) {
    int oh, om;
    if (!digits(line, i + 1, 2, oh) || line.size() <= i + 3 || line[i + 3] != ':' ||
        !digits(line, i + 4, 2, om))
      return std::nullopt;
    offset_s = (oh * 3600 + om * 60) * (line[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i >= line.size() || line[i] != ' ') return std::nullopt;
  const auto msg = kernel_message(line.substr(i + 1));
  if (!msg) return std::nullopt;
  tm t{};
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = s;
  const std::int64_t utc = ::timegm(&t) - offset_s;
  return SyslogLine{utc * 1'000'000'000 + frac_ns, *msg};
}

std::optional<SyslogLine> traditional(string_view line, std::time_t file_mtime) {
  static constexpr std::array<string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  if (line.size() < 16) return std::nullopt;
  const auto m = std::find(kMonths.begin(), kMonths.end(), line.substr(0, 3));
  if (m == kMonths.end() || line[3] != ' ') return std::nullopt;
  int d, h, mi, s;
  const std::size_t dd = line[4] == ' ' ? 5 : 4;  // "Nov  3" or "Nov 30"
  if (!digits(line, dd, line[4] == ' ' ? 1 : 2, d)) return std::nullopt;
  const std::size_t t0 = 7;
  if (line[6] != ' ' || !digits(line, t0, 2, h) || line[t0 + 2] != ':' ||
      !digits(line, t0 + 3, 2, mi) || line[t0 + 5] != ':' || !digits(line, t0 + 6, 2, s) ||
      line.size() <= t0 + 9 || line[t0 + 8] != ' ')
    return std::nullopt;
  const auto msg = kernel_message(line.substr(t0 + 9));
  if (!msg) return std::nullopt;
  tm ref{};
  ::localtime_r(&file_mtime, &ref);
  tm t{};
  t.tm_year = ref.tm_year;
  t.tm_mon = static_cast<int>(m - kMonths.begin());
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = s;
  t.tm_isdst = -1;
  std::time_t when = ::mktime(&t);
  if (when > file_mtime + 86400) {  // December's lines in a file last written in January
    tm back{};
    back.tm_year = ref.tm_year - 1;
    back.tm_mon = t.tm_mon;
    back.tm_mday = d;
    back.tm_hour = h;
    back.tm_min = mi;
    back.tm_sec = s;
    back.tm_isdst = -1;
    when = ::mktime(&back);
  }
  return SyslogLine{static_cast<std::int64_t>(when) * 1'000'000'000, *msg};
}

// "kern.log.3.gz" → 3, "kern.log.1" → 1, "kern.log" → 0; -1 for another file.
int rotation(string_view name, string_view base) {
  if (name == base) return 0;
  if (!name.starts_with(base) || name.size() <= base.size() + 1 || name[base.size()] != '.')
    return -1;
  auto rest = name.substr(base.size() + 1);
  if (rest.ends_with(".gz")) rest.remove_suffix(3);
  int n = 0;
  const auto r = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  return r.ec == std::errc() && r.ptr == rest.data() + rest.size() && n > 0 ? n : -1;
}

}  // namespace

std::optional<SyslogLine> parse_syslog_line(std::string_view line, std::time_t file_mtime) {
  if (!line.empty() && line[0] >= '0' && line[0] <= '9') return rfc3339(line);
  return traditional(line, file_mtime);
}

std::vector<std::string> syslog_files(const host::Root& root) {
  std::vector<std::string> out;
  const auto names = root.list("/var/log");
  if (!names || !*names) return out;
  for (string_view base : {"kern.log", "syslog", "messages"}) {
    std::vector<std::pair<int, std::string>> found;
    for (const auto& n : **names) {
      const int r = rotation(n, base);
      if (r >= 0) found.emplace_back(r, n);
    }
    if (found.empty()) continue;
    std::sort(found.begin(), found.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    for (auto& [r, n] : found) out.push_back("/var/log/" + n);
    break;  // kern.log has the kernel's lines already: syslog would repeat them
  }
  return out;
}

SyslogStats read_syslog(const host::Root& root, const std::vector<std::string>& files,
                        std::int64_t since_wall_ns, std::int64_t until_wall_ns,
                        const std::function<bool(std::string_view)>& wanted,
                        const std::function<void(const std::string&, const SyslogLine&)>& each) {
  SyslogStats st;
  constexpr std::size_t kChunk = 1 << 20, kMaxLine = 65536;
  std::string buf(kChunk + kMaxLine, '\0');
  for (const auto& path : files) {
    const auto resolved = root.resolve(path);
    if (!resolved || !*resolved) {
      st.errors.push_back(
          fmt::format("{}: {}", path, resolved ? "gone" : resolved.error().message()));
      continue;
    }
    const std::string real = root.outside(**resolved);
    struct stat sb {};
    if (::stat(real.c_str(), &sb) != 0) {
      st.errors.push_back(fmt::format("{}: {}", path, std::strerror(errno)));
      continue;
    }
    // A file last written before the window has nothing in it.
    if (static_cast<std::int64_t>(sb.st_mtime) * 1'000'000'000 + 1'000'000'000 < since_wall_ns)
      continue;
    // zlib reads plain files too, but through a buffer of its own: a plain file is read straight
    // into ours (half the copying of a 1 GB kern.log).
    const bool gz = path.ends_with(".gz");
    const int plain = gz ? -1 : ::open(real.c_str(), O_RDONLY | O_CLOEXEC);
    if (!gz && plain < 0) {
      st.errors.push_back(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
      continue;
    }
    gzFile f = gz ? ::gzopen(real.c_str(), "rb") : nullptr;
    if (gz && f == nullptr) {
      st.errors.push_back(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
      continue;
    }
    if (gz) ::gzbuffer(f, 256 * 1024);
    const auto line_of = [&](string_view line) {
      ++st.lines;
      // The tag comes after the time stamp and the host name: RFC 3339's stamp ends at the first
      // space, the traditional one is 15 bytes; then the host up to the next space.
      if (line.size() < 24) return;
      std::size_t host = 16;
      if (line[0] >= '0' && line[0] <= '9') {
        const void* sp = std::memchr(line.data(), ' ', std::min<std::size_t>(line.size(), 40));
        if (sp == nullptr) return;
        host = static_cast<const char*>(sp) - line.data() + 1;
      }
      const void* sp =
          std::memchr(line.data() + host, ' ', std::min<std::size_t>(line.size() - host, 80));
      if (sp == nullptr) return;
      const std::size_t tag = static_cast<const char*>(sp) - line.data() + 1;
      if (line.size() < tag + 8 || std::memcmp(line.data() + tag, "kernel: ", 8) != 0) return;
      auto msg = line.substr(tag + 8);
      if (msg.starts_with("[")) {
        const auto close = msg.find("] ");
        if (close != string_view::npos && close < 20) msg.remove_prefix(close + 2);
      }
      ++st.kernel_lines;
      if (!wanted(msg)) return;
      const auto parsed = parse_syslog_line(line, sb.st_mtime);
      if (!parsed) {
        ++st.skipped;
        return;
      }
      if (parsed->wall_ns < since_wall_ns ||
          (until_wall_ns > 0 && parsed->wall_ns >= until_wall_ns))
        return;
      each(path, *parsed);
    };
    std::size_t have = 0;   // bytes carried over from the last chunk (a line's start)
    bool overlong = false;  // inside a line longer than kMaxLine: skipped to its end
    for (;;) {
      const auto got =
          gz ? static_cast<ssize_t>(::gzread(f, buf.data() + have, static_cast<unsigned>(kChunk)))
             : ::read(plain, buf.data() + have, kChunk);
      if (got <= 0) break;
      const std::size_t end = have + static_cast<std::size_t>(got);
      std::size_t at = 0;
      for (;;) {
        const void* nl = std::memchr(buf.data() + at, '\n', end - at);
        if (nl == nullptr) break;
        const std::size_t stop = static_cast<const char*>(nl) - buf.data();
        if (overlong)
          overlong = false;
        else if (stop - at > kMaxLine)  // no kernel line is this long: not one
          ++st.skipped;
        else
          line_of(string_view(buf.data() + at, stop - at));
        at = stop + 1;
      }
      // The unfinished line moves to the front; one longer than kMaxLine is skipped.
      have = end - at;
      if (have > kMaxLine || overlong) {
        if (!overlong) ++st.skipped;
        overlong = true;
        have = 0;
      } else {
        std::memmove(buf.data(), buf.data() + at, have);
      }
    }
    if (have > 0 && !overlong) line_of(string_view(buf.data(), have));  // no final newline
    if (gz) {
      int err = Z_OK;
      const char* msg = ::gzerror(f, &err);
      if (err != Z_OK && err != Z_STREAM_END)
        st.errors.push_back(fmt::format("{}: {} (read up to there)", path, msg));
      ::gzclose(f);
    } else {
      ::close(plain);
    }
  }
  return st;
}

}  // namespace dltune::diagnose
