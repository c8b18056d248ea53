#pragma once
// Small pure helpers on text that every parser uses.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::text {

[[nodiscard]] std::string_view trim(std::string_view s);
// Splits on `sep`; keeps empty fields.
[[nodiscard]] std::vector<std::string_view> split(std::string_view s, char sep);
// Splits on runs of spaces, tabs, CR and LF; no empty fields.
[[nodiscard]] std::vector<std::string_view> fields(std::string_view s);
// Runs of spaces and tabs as one space, trimmed: how /proc/sys values compare
// ("4096\t16384\t4194304" is "4096 16384 4194304").
[[nodiscard]] std::string normalise_spaces(std::string_view s);
// Lines without their '\n'; a final line without '\n' is kept, a trailing empty one is not.
[[nodiscard]] std::vector<std::string_view> lines(std::string_view s);
// The strings with `sep` between them.
[[nodiscard]] std::string join(const std::vector<std::string>& parts, std::string_view sep);
[[nodiscard]] bool starts_with(std::string_view s, std::string_view prefix);
// ASCII lower case (names, units, hex addresses; not for text in other scripts).
[[nodiscard]] std::string to_lower(std::string_view s);
// Whole-string decimal (or 0x hex when base 0) parse; nullopt on any junk.
[[nodiscard]] std::optional<std::int64_t> to_int(std::string_view s, int base = 10);
[[nodiscard]] std::optional<std::uint64_t> to_uint(std::string_view s, int base = 10);
[[nodiscard]] std::optional<double> to_double(std::string_view s);
// A value in double quotes or single quotes, unquoted; otherwise the trimmed text.
[[nodiscard]] std::string unquote(std::string_view s);
// "1.5 GiB", "512 MiB", "4 KiB", "17 B"
[[nodiscard]] std::string human_bytes(std::uint64_t bytes);
// A time left or taken, for progress lines: "45 s", "3 min", "1 h 20 min".
[[nodiscard]] std::string human_duration(double seconds);
// Parses a CPU list ("0-3,8,10-11") into sorted ids.
[[nodiscard]] std::optional<std::vector<int>> parse_cpu_list(std::string_view s);
// Formats ids as a CPU list ("0-3,8").
[[nodiscard]] std::string format_cpu_list(const std::vector<int>& ids);
// Parses a sysfs hex mask ("ffffffff,00000000" or "f0") into set bit indices.
[[nodiscard]] std::optional<std::vector<int>> parse_cpu_mask(std::string_view s);
// A duration in nanoseconds: "100ms", "1.5s", "2m", "1h", "250us"; a bare number is seconds.
// nullopt for anything else (negative, no number, an unknown unit).
[[nodiscard]] std::optional<std::int64_t> parse_duration_ns(std::string_view s);

}  // namespace dltune::text
