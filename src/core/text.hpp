#pragma once
// Small pure helpers on text that every parser uses.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace dltune::text {

[[nodiscard]] std::string_view trim(std::string_view s);
// The last component of a path: what follows its last '/' (all of it when it has none).
[[nodiscard]] std::string_view base_name(std::string_view path);
// Whether `path` is `dir` or lies below it, component by component ("/a/bc" is not below "/a/b").
[[nodiscard]] bool path_within(std::string_view path, std::string_view dir);
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
// `s` as one word for a POSIX shell: as it is when it holds only safe characters
// (letters, digits, _ - . / : = + , @ %), else in single quotes ('it'\''s').
[[nodiscard]] std::string shell_quote(std::string_view s);
// Text that another process chose (its name, command line, a Python function's name, an
// environment variable's value) made safe for a terminal and for line-based readers (Slurm's
// TaskProlog, a folded stack): each control character (C0, DEL, and C1 as UTF-8's U+0080 to
// U+009F), a newline among them, becomes '?', as ps(1) shows it. Everything else is kept.
[[nodiscard]] std::string printable(std::string_view s);
// The edit distance of `a` and `b`: insertions, deletions, substitutions and swaps of two
// neighbouring characters, one each (the optimal string alignment distance).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);
// The word of `known` nearest to `word` for a "did you mean": at most one edit per three
// characters of `word` (at least one, at most two); empty when none is that near.
[[nodiscard]] std::string nearest_word(std::string_view word,
                                       const std::vector<std::string>& known);
// Whether `shown` is printable(`raw`), without making it (the sampler compares every process's
// name every sample).
[[nodiscard]] bool is_printable_of(std::string_view shown, std::string_view raw);
// `s` wrapped at spaces to `width` columns, the lines after the first indented by `indent`
// spaces (the first starts at column `indent` too); its own line breaks are kept.
[[nodiscard]] std::string wrap(std::string_view s, std::size_t indent, std::size_t width);
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
// The largest id a list may name: no host has more CPUs (the kernel's NR_CPUS is at most 8192).
inline constexpr int kMaxListId = 1 << 20;
// A GPU list (SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES, --gpus) names fewer: no host has more GPUs.
inline constexpr int kMaxGpuId = 1023;
// Parses a CPU list ("0-3,8,10-11") into sorted, distinct ids; nullopt for anything else and for
// an id above `max_id`. Memory is bounded by `max_id`, not by the text: a list that repeats a
// range costs what the range does once.
[[nodiscard]] std::optional<std::vector<int>> parse_cpu_list(std::string_view s,
                                                             int max_id = kMaxListId);
// Formats ids as a CPU list ("0-3,8").
[[nodiscard]] std::string format_cpu_list(const std::vector<int>& ids);
// Parses a sysfs hex mask ("ffffffff,00000000" or "f0") into set bit indices.
[[nodiscard]] std::optional<std::vector<int>> parse_cpu_mask(std::string_view s);
// A duration in nanoseconds: a bare number is seconds ("1.5"); otherwise NUMBER UNIT parts,
// largest unit first ("500ms", "90s", "15m", "2h", "1d", "1w", "1h30m", "1m30.5s"), units w, d,
// h, m (or min), s, ms, us, ns. nullopt for anything else (negative, no number, an unknown or
// repeated unit, more than 292 years).
[[nodiscard]] std::optional<std::int64_t> parse_duration_ns(std::string_view s);
// The shortest exact form parse_duration_ns reads back: "250ms", "5s", "1h30m", "1.5s".
[[nodiscard]] std::string format_duration_ns(std::int64_t ns);
// What every command's options say about a value out of place, without naming the option (the
// caller adds "--interval 5ms: "): "expected a duration such as 500ms, 90s, 15m or 1h30m",
// "too short (at least 50ms)", "too long (at most 10s)".
[[nodiscard]] Result<std::int64_t> duration_within(std::string_view s, std::int64_t min_ns,
                                                   std::int64_t max_ns);
// "expected a whole number from 1 to 256", "too small (at least 2)", "too large (at most 256)".
[[nodiscard]] Result<std::int64_t> integer_within(std::string_view s, std::int64_t min,
                                                  std::int64_t max);
// "expected a number from 50 to 99.9", "too small (at least 50)", "too large (at most 99.9)".
[[nodiscard]] Result<double> number_within(std::string_view s, double min, double max);

}  // namespace dltune::text
