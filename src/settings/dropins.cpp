// /etc/sysctl.d/90-dltune.conf (sysctl.d(5)): merge and removal. The limits.d drop-in is in
// dropins_limits.cpp, the fstab entry in dropins_fstab.cpp.
#include "settings/dropins.hpp"

#include <set>

#include "core/text.hpp"
#include "host/parse/sysctl_conf.hpp"
#include "settings/dropins_text.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::settings {
namespace {

// The name a key is compared by: normalised, or as written when it does not normalise (systemd
// also accepts globs such as "net.ipv4.conf.*.rp_filter", which sysctl_normalise refuses).
std::string compare_name(std::string_view key) {
  auto n = sysctl_normalise(key);
  return n ? *n : std::string(key);
}

// One "key = value" line of a sysctl.d file, located so that its value can be replaced.
struct Assignment {
  std::string name;         // compare_name of the key
  std::string written;      // "[-]key" as written
  std::size_t value_begin;  // where the value starts (after '=' and the blanks after it)
  bool simple;              // not indented, only spaces around '='
};

std::optional<Assignment> assignment(std::string_view line) {
  // The shared parser decides what is an assignment, so that this file agrees with what the
  // inventory (and systemd-sysctl) read from it.
  const auto parsed = host::parse::sysctl_conf(line);
  if (parsed.empty()) return std::nullopt;
  const auto lead = line.find_first_not_of(" \t\r\n\v\f");
  const auto eq = line.find('=');
  if (lead == std::string_view::npos || eq == std::string_view::npos) return std::nullopt;
  const bool dash = line[lead] == '-';
  auto value_begin = eq + 1;
  while (value_begin < line.size() && (line[value_begin] == ' ' || line[value_begin] == '\t'))
    ++value_begin;
  const auto key_begin = lead + (dash ? 1 : 0);
  const auto key_end = key_begin + parsed.front().key.size();
  const auto only_spaces = [&](std::size_t b, std::size_t e) {
    return line.substr(b, e - b).find_first_not_of(' ') == std::string_view::npos;
  };
  Assignment a;
  a.name = compare_name(parsed.front().key);
  a.written = (dash ? "-" : "") + parsed.front().key;
  a.value_begin = value_begin;
  a.simple = lead == 0 && line.substr(key_begin, key_end - key_begin) == parsed.front().key &&
             only_spaces(key_end, eq) && only_spaces(eq + 1, value_begin);
  return a;
}

}  // namespace

std::string merge_sysctl_dropin(std::string_view existing,
                                const std::map<std::string, std::string>& settings) {
  std::map<std::string, std::string> wanted;  // compare_name -> value
  for (const auto& [key, value] : settings)
    wanted[compare_name(key)] = dropin_text::one_line(value);

  std::string out;
  if (!dropin_text::contains_line(existing, kSysctlDropinHeader))
    out.append(kSysctlDropinHeader).push_back('\n');
  std::set<std::string> present;
  for (const auto line : dropin_text::lines(existing)) {
    const auto a = assignment(line);
    const auto it = a ? wanted.find(a->name) : wanted.end();
    if (it == wanted.end()) {
      out.append(line);
    } else {
      present.insert(it->first);
      if (a->simple)
        out.append(line.substr(0, a->value_begin)).append(it->second);
      else
        out.append(a->written).append(" = ").append(it->second);
    }
    out.push_back('\n');
  }
  for (const auto& [name, value] : wanted)
    if (!present.contains(name)) out.append(name).append(" = ").append(value).push_back('\n');
  return out;
}

std::string remove_from_sysctl_dropin(std::string_view existing,
                                      const std::vector<std::string>& keys) {
  std::set<std::string> names;
  for (const auto& k : keys) names.insert(compare_name(k));
  std::string out;
  bool settings_left = false;
  for (const auto line : dropin_text::lines(existing)) {
    const auto a = assignment(line);
    if (a && names.contains(a->name)) continue;
    if (!dropin_text::comment_or_blank(line, "#;")) settings_left = true;
    out.append(line).push_back('\n');
  }
  return settings_left ? out : std::string();
}

}  // namespace dltune::settings
