// Kernel lines of syslog files (diagnose/syslog_files.hpp).
#include "diagnose/syslog_files.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

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
  int y, mo, d, h, mi, s;
  if (!digits(line, 0, 4, y) || line[4] != '-' || !digits(line, 5, 2, mo) || line[7] != '-' ||
      !digits(line, 8, 2, d) || line[10] != 'T' || !digits(line, 11, 2, h) || line[13] != ':' ||
      !digits(line, 14, 2, mi) || line[16] != ':' || !digits(line, 17, 2, s) || mo < 1 || mo > 12 ||
      d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
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
                        const std::function<void(const std::string&, const SyslogLine&)>& each) {
  SyslogStats st;
  std::string buf(65536, '\0');
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
    gzFile f = ::gzopen(real.c_str(), "rb");
    if (f == nullptr) {
      st.errors.push_back(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
      continue;
    }
    ::gzbuffer(f, 256 * 1024);
    bool partial = false;  // the rest of a line longer than the buffer
    while (::gzgets(f, buf.data(), static_cast<int>(buf.size())) != nullptr) {
      const std::size_t len = std::strlen(buf.data());
      const bool whole = len > 0 && buf[len - 1] == '\n';
      if (partial) {
        partial = !whole;
        continue;
      }
      if (!whole && !::gzeof(f)) {  // longer than 64 KiB: no kernel line is
        ++st.skipped;
        partial = true;
        continue;
      }
      ++st.lines;
      const string_view line(buf.data(), len);
      // Cheap filter first: most lines are not the kernel's.
      if (line.find(" kernel: ") == string_view::npos) continue;
      const auto k = parse_syslog_line(line, sb.st_mtime);
      if (!k) {
        ++st.skipped;
        continue;
      }
      ++st.kernel_lines;
      if (k->wall_ns < since_wall_ns || (until_wall_ns > 0 && k->wall_ns >= until_wall_ns))
        continue;
      each(path, *k);
    }
    int err = Z_OK;
    const char* msg = ::gzerror(f, &err);
    if (err != Z_OK && err != Z_STREAM_END)
      st.errors.push_back(fmt::format("{}: {} (read up to there)", path, msg));
    ::gzclose(f);
  }
  return st;
}

}  // namespace dltune::diagnose
