#include "core/time_format.hpp"

#include <cstdlib>
#include <ctime>

#include <fmt/core.h>

namespace dltune::text {

namespace {

bool broken_down(std::int64_t seconds, TimeZone zone, std::tm& out) {
  const auto t = static_cast<std::time_t>(seconds);
  return zone == TimeZone::kUtc ? ::gmtime_r(&t, &out) != nullptr
                                : ::localtime_r(&t, &out) != nullptr;
}

}  // namespace

std::string format_time(std::int64_t seconds, const char* format, TimeZone zone) {
  std::tm tm{};
  if (!broken_down(seconds, zone, tm)) return "";
  char buf[256];
  const auto n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);
}

std::string format_time_ns(std::int64_t ns, const char* format, TimeZone zone) {
  return format_time(ns / 1'000'000'000, format, zone);
}

std::string local_time_ns(std::int64_t ns) {
  return format_time_ns(ns, "%Y-%m-%d %H:%M:%S", TimeZone::kLocal);
}

std::string utc_offset(std::int64_t seconds) {
  std::tm tm{};
  if (!broken_down(seconds, TimeZone::kLocal, tm)) return "+00:00";
  const long off = tm.tm_gmtoff / 60;
  return fmt::format("{}{:02}:{:02}", off < 0 ? '-' : '+', std::labs(off) / 60,
                     std::labs(off) % 60);
}

}  // namespace dltune::text
