#pragma once
// Profiles: what a training host should look like (docs/architecture.md). TOML under profiles/,
// compiled into the binary; user profiles in /etc/dltune/profiles/NAME.toml or a file.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"

namespace dltune::settings {

// Where a site's own profiles are: NAME.toml here is the profile NAME.
inline constexpr std::string_view kUserProfileDir = "/etc/dltune/profiles";

// What a value must be: exactly one value, at least a number, or one of a set.
// TOML: value = 10 | value = "madvise" | value = true | value = ">= 16777216" |
//       value = ["always", "madvise"]
struct Expected {
  enum class Kind { kExact, kAtLeast, kOneOf };
  Kind kind = Kind::kExact;
  std::vector<std::string> values;  // kExact: 1, kAtLeast: 1 (a decimal number), kOneOf: >= 1

  // Whether `actual` satisfies it. kExact/kOneOf compare whitespace-normalised text, and numbers
  // numerically ("10" == "10\n"); kAtLeast compares as unsigned integers ("unlimited" is at least
  // anything). A non-number for kAtLeast never matches.
  [[nodiscard]] bool matches(std::string_view actual) const;
  // "10", ">= 16777216", "one of always, madvise"
  [[nodiscard]] std::string text() const;
  // An exact boolean ("true", "1", "yes", "on"; "false", "0", "no", "off", any case); nullopt
  // for anything else.
  [[nodiscard]] std::optional<bool> as_bool() const;
};

// The text form of a value: ">= N" (or ">=N") is a minimum, anything else is exact. Refuses an
// empty value and a minimum that is not an unsigned decimal number.
[[nodiscard]] Result<Expected> parse_expected(std::string_view text);

// One key of a profile.
struct ProfileEntry {
  std::string key;  // "vm.swappiness", "thp.enabled", "shm.size", ...
  Expected expected;
  std::optional<int> field;          // 1-based field of a multi-field value (tcp_rmem max = 3)
  std::string severity = "warn";     // severity when `expected` is not met: info|warn|critical
  std::optional<Expected> critical;  // when even this is not met, the finding is critical
  std::string reason;                // one short paragraph a user can read
  std::string source;                // where the advice comes from (doc, measurement)
  std::string origin;                // the profile that set it (after includes), or "--set"
  std::string origin_file;           // where: "<built-in>/training.toml", a path, "--set"
  // For people: a built-in's name ("training"), a user profile's file, or "--set".
  [[nodiscard]] std::string origin_text() const;
};

struct Profile {
  std::string name;
  std::string description;
  std::vector<std::string> chain;     // include order, this profile last
  std::vector<ProfileEntry> entries;  // in order: included profiles' first, overridden in place
  // As written in this profile's own file: its [profile] include list and the keys it drops
  // (`drop = true`), in file order. load_profile has applied them to `entries`.
  std::vector<std::string> includes;
  std::vector<int> include_lines;  // the line of each include (0: unknown)
  std::vector<std::string> drops;
  std::vector<int> drop_lines;  // the line of each drop's table (0: unknown)
  // [profile] baseline: the hardware baseline file (an absolute path) that check judges the
  // host against besides the settings (audit/baseline.hpp); the last profile of the include
  // chain that names one wins. Empty: none.
  std::string baseline;
  [[nodiscard]] const ProfileEntry* find(std::string_view key) const;
};

// Checks that a key names something dltune knows (a sysctl under /proc/sys, a known sysfs
// setting, a limit or a check); refuses anything else with the key named.
using KeyValidator = std::function<Result<void>(const std::string& key)>;

// The built-in profile names ("defaults", "distributed", "training").
[[nodiscard]] std::vector<std::string> builtin_profiles();
// The TOML text of a built-in profile (profiles/NAME.toml as compiled in); empty when unknown.
[[nodiscard]] std::optional<std::string_view> builtin_profile_text(std::string_view name);

// Loads a profile by name (built-in, then /etc/dltune/profiles/NAME.toml through `root`) or, when
// `name_or_path` contains a '/', from that file on this machine. Resolves `include`s (cycles
// are errors), merges in order (child overrides, `drop = true` removes), validates every key
// with `validate`. Errors name the file, line and column (syntax) or the key (content).
[[nodiscard]] Result<Profile> load_profile(std::string_view name_or_path, const host::Root& root,
                                           const KeyValidator& validate);

// Parses one profile's TOML text (no includes resolved); `origin` names it in errors. A user's
// profile may leave out a setting's reason and source (check then says "(no reason given)"); the
// built-in ones must give both (`require_reasons`).
[[nodiscard]] Result<Profile> parse_profile(std::string_view toml_text, std::string_view origin,
                                            const KeyValidator& validate,
                                            bool require_reasons = false);

// One `--set KEY=VALUE` of check, tune and bench: the value goes through the checks a profile's
// value goes through (parse_expected, then check_value for the key's type and range); the key
// must pass `validate`. Errors name the key and the value and say what is expected. The entry
// has no reason or source; its origin is "--set".
[[nodiscard]] Result<ProfileEntry> parse_set(std::string_view key_value,
                                             const KeyValidator& validate);

// The key check for --set: a profile's (`validate`), and a sysctl must exist on the host
// (/proc/sys under `root`): a key typed on the command line is more likely a typo than a sysctl
// of another kernel. `root` must outlive the validator.
[[nodiscard]] KeyValidator set_key_validator(const host::Root& root, KeyValidator validate);

// "did you mean KEY?" for a key that is unknown (the nearest of the catalog's and the built-in
// profiles' keys), or a sysctl this host lacks (the nearest of the sysctls beside it in
// /proc/sys under `root`); empty when none is near (a sysctl of another kernel, say).
[[nodiscard]] std::string did_you_mean(const host::Root& root, const std::string& key);

// The key check of a user's profile file: `validate`, then a sysctl this host lacks whose name
// is one edit or two from one it has is refused as a typo, with the nearest (a sysctl of
// another kernel, near none here, stays: check says it does not apply). `root` must outlive it.
[[nodiscard]] KeyValidator file_key_validator(const host::Root& root, KeyValidator validate);

// Applies `sets` (each "KEY=VALUE") to `profile`: a key the profile has is replaced in place,
// a new one is added at the end. The first bad one is the error.
[[nodiscard]] Result<void> apply_sets(Profile& profile, const std::vector<std::string>& sets,
                                      const KeyValidator& validate);

// load_profile, then apply_sets (keys checked by set_key_validator). An empty `name_or_path`
// starts from an empty profile (named "--set"): the --set values alone.
[[nodiscard]] Result<Profile> load_profile(std::string_view name_or_path,
                                           const std::vector<std::string>& sets,
                                           const host::Root& root, const KeyValidator& validate);

// The resolved profile as TOML that load_profile reads back as the same profile: [profile] name
// and description, every setting with its value, severity, critical, field, reason and source,
// and a comment naming where each came from. No include: the chain is resolved.
[[nodiscard]] std::string to_toml(const Profile& profile);

}  // namespace dltune::settings
