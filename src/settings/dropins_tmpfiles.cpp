// /etc/tmpfiles.d/90-dltune.conf: sysfs values that systemd-tmpfiles writes at boot.
#include <fmt/core.h>

#include "core/text.hpp"
#include "settings/dropins.hpp"
#include "settings/dropins_text.hpp"

namespace dltune::settings {

Result<std::string> merge_tmpfiles_dropin(std::string_view existing,
                                          const std::map<std::string, std::string>& writes) {
  for (const auto& [path, value] : writes) {
    if (!path.starts_with("/sys/") || path.find_first_of(" \t\r\n\\") != std::string::npos)
      return fail("not a sysfs path that a tmpfiles.d line can hold:", path);
    if (dropin_text::one_line(value).empty())
      return fail("an empty value for the tmpfiles.d line of", path);
  }
  std::map<std::string, std::string> pending = writes;
  std::string out;
  bool header = false;
  for (auto line : dropin_text::lines(existing)) {
    if (line == kTmpfilesDropinHeader) header = true;
    const auto f = text::fields(line);
    // "w PATH MODE USER GROUP AGE ARGUMENT": a line for a path we write gets the new argument.
    if (f.size() >= 2 && f[0] == "w") {
      if (const auto it = pending.find(std::string(f[1])); it != pending.end()) {
        out += fmt::format("w {} - - - - {}\n", it->first, dropin_text::one_line(it->second));
        pending.erase(it);
        continue;
      }
    }
    out += line;
    out += '\n';
  }
  if (!header) out = std::string(kTmpfilesDropinHeader) + "\n" + out;
  for (const auto& [path, value] : pending)
    out += fmt::format("w {} - - - - {}\n", path, dropin_text::one_line(value));
  // A disk's scheduler before its other attributes: systemd-tmpfiles writes in line order, and
  // a switch of scheduler resets queue/nr_requests.
  const auto path_of = [](std::string_view line) {
    const auto f = text::fields(line);
    return f.size() >= 2 && f[0] == "w" ? std::string(f[1]) : std::string();
  };
  return dropin_text::move_first(
      out, [&](std::string_view line) { return path_of(line).starts_with("/sys/block/"); },
      [&](std::string_view line) { return path_of(line).ends_with("/queue/scheduler"); });
}

}  // namespace dltune::settings
