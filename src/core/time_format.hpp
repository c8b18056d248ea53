#pragma once
// Times as people read them, in one place: strftime(3) of a time since the epoch, in the host's
// local time or in UTC.
#include <cstdint>
#include <string>

namespace dltune::text {

enum class TimeZone { kLocal, kUtc };

// strftime(3) of `seconds` since the epoch with `format` ("%Y-%m-%d %H:%M:%S"); empty when the
// time cannot be broken down (out of range) or the result is longer than 255 characters.
[[nodiscard]] std::string format_time(std::int64_t seconds, const char* format, TimeZone zone);
// The same for a time in nanoseconds since the epoch (whole seconds shown).
[[nodiscard]] std::string format_time_ns(std::int64_t ns, const char* format, TimeZone zone);
// "2026-11-30 14:05:00" in local time, for a time in nanoseconds since the epoch: how reports
// and doctor show when something happened.
[[nodiscard]] std::string local_time_ns(std::int64_t ns);
// "+01:00": the local time's offset from UTC at `seconds` since the epoch.
[[nodiscard]] std::string utc_offset(std::int64_t seconds);

}  // namespace dltune::text
