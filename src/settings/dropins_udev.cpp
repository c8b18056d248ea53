// /etc/udev/rules.d/60-dltune.rules: attributes of the disks under the data (the I/O scheduler,
// read-ahead) that udev sets whenever the disk appears, matched by its serial number, so that a
// disk that comes up under another name at the next boot keeps its settings (udev(7): ACTION,
// SUBSYSTEM, ENV{} and KERNEL match; ATTR{} assigned with = writes the sysfs attribute).
#include <algorithm>
#include <cctype>

#include <fmt/core.h>

#include "settings/dropins.hpp"
#include "settings/dropins_text.hpp"

namespace dltune::settings {

namespace {

constexpr std::string_view kHead =
    R"(ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", )";
constexpr std::string_view kAttr = R"(, ATTR{)";

bool plain(std::string_view s, std::string_view also) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || also.find(c) != std::string::npos;
  });
}

// ENV{ID_SERIAL}=="..." (udev's serial: letters, digits and _ - . : after its own escaping)
// or KERNEL=="name".
bool valid_match(std::string_view m) {
  for (const std::string_view key : {"ENV{ID_SERIAL}==\"", "KERNEL==\""}) {
    if (!m.starts_with(key) || !m.ends_with('"')) continue;
    const auto inner = m.substr(key.size(), m.size() - key.size() - 1);
    return plain(inner, "_-.:+");
  }
  return false;
}

std::string rule_line(const std::string& match, const std::string& attr, const std::string& value) {
  return fmt::format("{}{}{}{}}}=\"{}\"", kHead, match, kAttr, attr, value);
}

}  // namespace

Result<std::string> merge_udev_dropin(
    std::string_view existing,
    const std::map<std::string, std::map<std::string, std::string>>& writes) {
  for (const auto& [match, attrs] : writes) {
    if (!valid_match(match))
      return fail("not a udev match dltune writes (ENV{ID_SERIAL}==\"...\" or KERNEL==\"...\"):",
                  match);
    for (const auto& [attr, value] : attrs) {
      if (!attr.starts_with("queue/") || !plain(attr.substr(6), "_"))
        return fail("not a disk's queue attribute:", attr);
      if (!plain(value, "_-+."))
        return fail(fmt::format("a value a udev rule cannot hold for {}:", attr), value);
    }
  }
  auto pending = writes;
  std::string out;
  bool header = false;
  for (const auto line : dropin_text::lines(existing)) {
    if (line == kUdevDropinHeader) header = true;
    bool replaced = false;
    for (const auto& r : udev_dropin_rules(line)) {
      const auto m = pending.find(r.match);
      if (m == pending.end()) continue;
      const auto a = m->second.find(r.attribute);
      if (a == m->second.end()) continue;
      out += rule_line(r.match, r.attribute, a->second) + "\n";
      m->second.erase(a);
      replaced = true;
    }
    if (replaced) continue;
    out += line;
    out += '\n';
  }
  if (!header) out = std::string(kUdevDropinHeader) + "\n" + out;
  for (const auto& [match, attrs] : pending)
    for (const auto& [attr, value] : attrs) out += rule_line(match, attr, value) + "\n";
  // The scheduler rules before the others: udev writes a device's attributes in the order of
  // its rules, and a switch of scheduler resets queue/nr_requests.
  return dropin_text::move_first(
      out, [](std::string_view line) { return !udev_dropin_rules(line).empty(); },
      [](std::string_view line) {
        return udev_dropin_rules(line).front().attribute == "queue/scheduler";
      });
}

std::vector<UdevRule> udev_dropin_rules(std::string_view text) {
  std::vector<UdevRule> out;
  int n = 0;
  for (const auto line : dropin_text::lines(text)) {
    ++n;
    if (!line.starts_with(kHead)) continue;
    const auto rest = line.substr(kHead.size());
    const auto at = rest.rfind(kAttr);
    if (at == std::string_view::npos) continue;
    const auto match = rest.substr(0, at);
    const auto assign = rest.substr(at + kAttr.size());  // queue/scheduler}="none"
    const auto close = assign.find("}=\"");
    if (close == std::string_view::npos || !assign.ends_with('"')) continue;
    UdevRule r;
    r.match = std::string(match);
    r.attribute = std::string(assign.substr(0, close));
    r.value = std::string(assign.substr(close + 3, assign.size() - close - 4));
    r.line = n;
    if (valid_match(r.match)) out.push_back(std::move(r));
  }
  return out;
}

}  // namespace dltune::settings
