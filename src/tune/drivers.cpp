#include "tune/drivers.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "host/parse/proc.hpp"
#include "tune/mount_setting.hpp"
#include "tune/nvml_setting.hpp"

namespace dltune::tune {

std::string effective_value(std::string_view raw) {
  if (raw.find('[') != std::string_view::npos) {
    const auto choice = host::parse::bracket_choice(raw);
    if (choice.selected) return *choice.selected;
  }
  return text::normalise_spaces(raw);
}

Result<std::optional<std::string>> Drivers::read(const std::string& kind,
                                                 const std::string& target) const {
  if (kind == "mount") return read_atime_mode(root_, target);
  if (kind == "nvml") return read_nvml_setting(target);
  return root_.read(target);
}

Result<std::string> Drivers::write(const std::string& kind, const std::string& target,
                                   const std::string& value) const {
  if (kind == "mount") return set_atime_mode(root_, target, value);
  if (kind == "nvml") return write_nvml_setting(target, value);
  if (kind == "file") {
    if (auto w = root_.write_atomic(target, value); !w) return tl::unexpected(w.error());
    auto back = root_.read(target);
    if (!back) return tl::unexpected(back.error());
    if (!*back) return fail("the file vanished after it was written:", target, ENOENT);
    return **back;
  }
  if (kind == "cgroup") {
    // A group that went away since the plan (its job ended) has no value to set or restore.
    if (!root_.exists(target)) return value;
    return root_.write_virtual(target, value);
  }
  if (kind == "sysctl" || kind == "sysfs") return root_.write_virtual(target, value);
  return fail("unknown kind of change in the journal:", kind);
}

Result<void> Drivers::remove(const std::string& kind, const std::string& target) const {
  if (kind != "file") return fail("only a file can be removed, not a", kind);
  return root_.remove_file(target);
}

bool Drivers::same_value(const std::string& kind, const std::string& a, const std::string& b) {
  if (kind == "file") return a == b;
  return effective_value(a) == effective_value(b);
}

}  // namespace dltune::tune
