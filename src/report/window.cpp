// --from/--to: times in a recording (series.hpp). Absolute times are RFC 3339 / ISO 8601
// ("2026-11-30T14:05:00Z", with a fraction and an offset, or without a zone for local time);
// "+D" counts from the recording's start and "-D" back from its end, D as parse_duration_ns reads
// it ("90s", "10m", "1.5h").
#include <time.h>

#include <cctype>
#include <cmath>

#include <fmt/core.h>

#include "core/text.hpp"
#include "report/series.hpp"

namespace dltune::report {

namespace {

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

// `n` digits at `s[pos]`, as a number; nullopt when they are not all digits.
std::optional<int> digits(std::string_view s, std::size_t pos, std::size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// "YYYY-MM-DD[T ]HH:MM[:SS[.fff]][Z|+HH:MM|-HH:MM]" into ns since the epoch.
std::optional<std::int64_t> parse_absolute(std::string_view s) {
  const auto year = digits(s, 0, 4), month = digits(s, 5, 2), day = digits(s, 8, 2);
  const auto hour = digits(s, 11, 2), minute = digits(s, 14, 2);
  if (!year || !month || !day || !hour || !minute || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':')
    return std::nullopt;
  std::size_t pos = 16;
  int second = 0;
  std::int64_t fraction_ns = 0;
  if (pos < s.size() && s[pos] == ':') {
    const auto sec = digits(s, pos + 1, 2);
    if (!sec) return std::nullopt;
    second = *sec;
    pos += 3;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      std::int64_t scale = kNsPerSecond / 10;
      const std::size_t begin = pos;
      for (; pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos])); ++pos) {
        fraction_ns += (s[pos] - '0') * scale;
        scale /= 10;
      }
      if (pos == begin) return std::nullopt;
    }
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      second > 60)
    return std::nullopt;
  tm t{};
  t.tm_year = *year - 1900;
  t.tm_mon = *month - 1;
  t.tm_mday = *day;
  t.tm_hour = *hour;
  t.tm_min = *minute;
  t.tm_sec = second;
  time_t seconds = 0;
  const std::string_view zone = s.substr(pos);
  if (zone.empty()) {
    t.tm_isdst = -1;  // local time, whatever daylight saving says on that day
    seconds = ::mktime(&t);
  } else if (zone == "Z" || zone == "z") {
    seconds = ::timegm(&t);
  } else {
    const auto oh = digits(zone, 1, 2), om = digits(zone, 4, 2);
    if ((zone[0] != '+' && zone[0] != '-') || zone.size() != 6 || zone[3] != ':' || !oh || !om)
      return std::nullopt;
    const int offset = (*oh * 60 + *om) * 60 * (zone[0] == '-' ? -1 : 1);
    seconds = ::timegm(&t) - offset;
  }
  return static_cast<std::int64_t>(seconds) * kNsPerSecond + fraction_ns;
}

}  // namespace

Result<std::int64_t> parse_time(std::string_view text, std::int64_t start_ns, std::int64_t end_ns,
                                std::string_view option) {
  const std::string_view s = text::trim(text);
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    if (auto d = text::parse_duration_ns(s.substr(1)))
      return s[0] == '+' ? start_ns + *d : end_ns - *d;
  } else if (auto t = parse_absolute(s)) {
    return *t;
  }
  return fail(
      fmt::format("{} {}: expected a time (2026-11-30T14:05:00Z, 2026-11-30 14:05:00 in "
                  "local time), an offset from the start (+10m) or from the end (-1h)",
                  option, text));
}

}  // namespace dltune::report
