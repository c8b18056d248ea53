// `--set KEY=VALUE`: one value without a file, checked as a profile's value is; and a resolved
// profile written back as TOML (`dltune profiles show`).
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/text.hpp"
#include "settings/catalog.hpp"
#include "settings/profile.hpp"
#include "settings/sysctl_name.hpp"
#include "settings/value_types.hpp"

namespace dltune::settings {
namespace {

constexpr std::string_view kSetOrigin = "--set";

// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
        else
          out += c;
    }
  }
  return out + "\"";
}

// A long text as the built-in profiles write it: a multi-line string whose lines end in a
// backslash (TOML drops the newline and the next line's indentation), wrapped at spaces. Texts
// that would not read back the same that way (control characters, backslashes, runs of spaces,
// quotes at the end) stay one line.
std::string toml_text(std::string_view s) {
  constexpr std::size_t kWidth = 96;
  const bool plain =
      s.size() > kWidth && s.find_first_of("\\\n\r\t") == s.npos && s.find("  ") == s.npos &&
      s.find("\"\"") == s.npos && s.front() != ' ' && s.back() != ' ' && s.back() != '"' &&
      std::none_of(s.begin(), s.end(),
                   [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (!plain) return toml_string(s);
  std::string out = "\"\"\"\\\n";
  std::size_t line = 0;
  for (std::size_t at = 0; at < s.size();) {
    auto end = s.find(' ', at);
    if (end == s.npos) end = s.size();
    const auto word = s.substr(at, end - at);
    if (line > 0 && line + word.size() + 1 > kWidth) {
      out += "\\\n";  // the space before it stays: "word \" + newline
      line = 0;
    }
    out += word;
    line += word.size();
    if (end < s.size()) {
      out += ' ';
      ++line;
    }
    at = end + 1;
  }
  return out + "\"\"\"";
}

// A value as the TOML that parses back to the same text: an integer where the text is one
// (written back as it reads), a boolean for "true"/"false", else a string.
std::string value_toml(const std::string& v) {
  if (v == "true" || v == "false") return v;
  if (!v.empty() && v.size() < 19 && v.find_first_not_of("0123456789") == v.npos &&
      (v == "0" || v.front() != '0'))
    return v;
  return toml_string(v);
}

std::string expected_toml(const Expected& e) {
  switch (e.kind) {
    case Expected::Kind::kExact:
      return e.values.empty() ? toml_string("") : value_toml(e.values.front());
    case Expected::Kind::kAtLeast:
      return toml_string(">= " + (e.values.empty() ? std::string() : e.values.front()));
    case Expected::Kind::kOneOf: {
      std::vector<std::string> items;
      for (const auto& v : e.values) items.push_back(toml_string(v));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
  }
  return toml_string("");
}

}  // namespace

std::string ProfileEntry::origin_text() const {
  if (origin_file.empty() || origin_file.starts_with("<built-in>/")) return origin;
  return origin_file;
}

std::string did_you_mean(const host::Root& root, const std::string& key) {
  std::vector<std::string> known;
  const auto* spec = spec_for(key);
  if (spec == nullptr || !spec->family()) {
    for (const auto& s : catalog())
      if (!s.family()) known.emplace_back(s.key);
    for (const auto& name : builtin_profiles())
      if (const auto text = builtin_profile_text(name))
        if (auto p = parse_profile(*text, name, nullptr, false))
          for (const auto& e : p->entries) known.push_back(e.key);
  } else {
    // Only sysctls this host has: two of another kernel's are not each other's typos.
    // The sysctls beside it: "vm.swapiness" -> the names in /proc/sys/vm.
    const auto dot = key.rfind('.');
    if (auto path = sysctl_path(key); path && dot != std::string::npos) {
      const auto dir = path->substr(0, path->rfind('/'));
      if (auto names = root.list(dir); names && *names)
        for (const auto& n : **names) known.push_back(key.substr(0, dot + 1) + n);
    }
  }
  const auto guess = text::nearest_word(key, known);
  return guess.empty() ? std::string() : fmt::format("did you mean {}?", guess);
}

namespace {

// Unknown: the catalog's error with a guess after the key. A sysctl absent here: refused when
// `strict` (a key typed on the command line), else only when it is near one this host has.
Result<void> check_key(const host::Root& root, const KeyValidator& validate, const std::string& key,
                       bool strict) {
  if (validate) {
    if (auto ok = validate(key); !ok) {
      const auto guess = did_you_mean(root, key);
      if (guess.empty() || ok.error().input != key) return ok;
      return tl::unexpected(Error{ok.error().what, key + "; " + guess, 0});
    }
  }
  // A sysctl is any well-formed name under a family (catalog.hpp); the others are the
  // catalog's own keys, valid everywhere.
  const auto* spec = spec_for(key);
  if (spec == nullptr || !spec->family()) return {};
  auto path = sysctl_path(key);
  if (!path) return tl::unexpected(path.error());
  auto info = root.stat(*path);
  if (!info || *info) return {};
  const auto guess = did_you_mean(root, key);
  if (!strict && guess.empty()) return {};
  return fail(fmt::format("no such sysctl on this host ({} does not exist){}", root.outside(*path),
                          guess.empty() ? "" : "; " + guess));
}

}  // namespace

KeyValidator set_key_validator(const host::Root& root, KeyValidator validate) {
  return [&root, validate = std::move(validate)](const std::string& key) -> Result<void> {
    return check_key(root, validate, key, true);
  };
}

KeyValidator file_key_validator(const host::Root& root, KeyValidator validate) {
  return [&root, validate = std::move(validate)](const std::string& key) -> Result<void> {
    return check_key(root, validate, key, false);
  };
}

Result<ProfileEntry> parse_set(std::string_view key_value, const KeyValidator& validate) {
  const auto eq = key_value.find('=');
  if (eq == key_value.npos)
    return fail(fmt::format(
        "--set {}: expected KEY=VALUE (dltune profiles settings lists the keys)", key_value));
  std::string key(text::trim(key_value.substr(0, eq)));
  const std::string value(text::trim(key_value.substr(eq + 1)));
  if (key.empty())
    return fail(fmt::format("--set {}: expected KEY=VALUE, the key is empty", key_value));
  // sysctl.d's slash form names the same setting, as in a profile.
  if (const auto sep = key.find_first_of("./"); sep != key.npos && key[sep] == '/') {
    if (auto dotted = sysctl_normalise(key)) key = std::move(*dotted);
  }
  const auto where = fmt::format("--set {}={}", key, value);
  if (validate) {
    if (auto ok = validate(key); !ok) {
      const auto& e = ok.error();
      std::string why = e.input == key && e.errno_ == 0 ? e.what : e.message();
      if (why.ends_with(':')) why.pop_back();
      return fail(fmt::format("{}: setting \"{}\": {} (dltune profiles settings lists the keys)",
                              where, key, why));
    }
  }
  auto expected = parse_expected(value);
  if (!expected)
    return fail(fmt::format("{}: setting \"{}\": {}", where, key, expected.error().message()));
  ProfileEntry e;
  e.key = key;
  e.expected = std::move(*expected);
  e.origin = std::string(kSetOrigin);
  e.origin_file = std::string(kSetOrigin);
  if (auto ok = check_value(e); !ok)
    return fail(fmt::format("{}: setting \"{}\": {}", where, key, ok.error().message()));
  return e;
}

Result<void> apply_sets(Profile& profile, const std::vector<std::string>& sets,
                        const KeyValidator& validate) {
  for (const auto& s : sets) {
    auto entry = parse_set(s, validate);
    if (!entry) return tl::unexpected(entry.error());
    auto it = std::find_if(profile.entries.begin(), profile.entries.end(),
                           [&](const ProfileEntry& m) { return m.key == entry->key; });
    if (it != profile.entries.end())
      *it = std::move(*entry);  // in place, and wholly: the parent's reason was for its value
    else
      profile.entries.push_back(std::move(*entry));
  }
  if (!sets.empty() &&
      std::find(profile.chain.begin(), profile.chain.end(), kSetOrigin) == profile.chain.end())
    profile.chain.emplace_back(kSetOrigin);
  return {};
}

Result<Profile> load_profile(std::string_view name_or_path, const std::vector<std::string>& sets,
                             const host::Root& root, const KeyValidator& validate) {
  Profile p;
  if (name_or_path.empty()) {
    p.name = std::string(kSetOrigin);
    p.description = "values given with --set";
  } else {
    auto loaded = load_profile(name_or_path, root, validate);
    if (!loaded) return loaded;
    p = std::move(*loaded);
  }
  if (auto ok = apply_sets(p, sets, set_key_validator(root, validate)); !ok)
    return tl::unexpected(ok.error());
  return p;
}

std::string to_toml(const Profile& profile) {
  std::string out = fmt::format(
      "# The profile \"{}\" as dltune resolves it ({}): ready to copy into\n"
      "# /etc/dltune/profiles/{}.toml and edit. Values alone are enough in your own file;\n"
      "# `[profile] include = [\"{}\"]` plus only the settings you change works too.\n\n",
      profile.name, fmt::join(profile.chain, " -> "), profile.name, profile.name);
  out += fmt::format("[profile]\nname = {}\n", toml_string(profile.name));
  if (!profile.description.empty())
    out += fmt::format("description = {}\n", toml_string(profile.description));
  for (const auto& e : profile.entries) {
    out += fmt::format("\n[settings.{}]\n", toml_string(e.key));
    if (!e.origin.empty()) out += fmt::format("# from {}\n", e.origin_text());
    out += fmt::format("value = {}\n", expected_toml(e.expected));
    if (e.severity != "warn") out += fmt::format("severity = {}\n", toml_string(e.severity));
    if (e.critical) out += fmt::format("critical = {}\n", expected_toml(*e.critical));
    if (e.field) out += fmt::format("field = {}\n", *e.field);
    if (!e.reason.empty()) out += fmt::format("reason = {}\n", toml_text(e.reason));
    if (!e.source.empty()) out += fmt::format("source = {}\n", toml_text(e.source));
  }
  return out;
}

}  // namespace dltune::settings
