#pragma once
// How tune reads and writes one change of each kind (docs/architecture.md "Setting"): the
// transaction code journals, verifies and rolls back; a driver only reads the value now and writes
// a new one.
//
//   kind     target                                   value
//   sysctl   /proc/sys/vm/swappiness                  the file's text ("60")
//   sysfs    /sys/kernel/mm/transparent_hugepage/...  the [selected] word or the text
//   cgroup   /sys/fs/cgroup/memory/G/memory.swappiness  the text
//   file     /etc/sysctl.d/90-dltune.conf             the whole file (absent: no file)
//   mount    /home (a mount point)                    its atime mode: noatime|relatime|...
//   nvml     nvml:GPU-UUID/persistence_mode           on|off
#include <optional>
#include <string>

#include "core/error.hpp"
#include "host/root.hpp"

namespace dltune::tune {

class Drivers {
 public:
  explicit Drivers(const host::Root& root) : root_(root) {}

  // The value now; an empty optional when the target does not exist.
  [[nodiscard]] Result<std::optional<std::string>> read(const std::string& kind,
                                                        const std::string& target) const;
  // Writes `value` and returns what the target reports afterwards (read back), for
  // `same_value`. For "file" the whole content is written atomically.
  [[nodiscard]] Result<std::string> write(const std::string& kind, const std::string& target,
                                          const std::string& value) const;
  // Removes what did not exist before (only "file").
  [[nodiscard]] Result<void> remove(const std::string& kind, const std::string& target) const;

  // Whether a read-back value is the value written: files byte for byte, settings by their
  // effective value (the [selected] word of a choice file, whitespace-normalised text).
  [[nodiscard]] static bool same_value(const std::string& kind, const std::string& a,
                                       const std::string& b);

 private:
  const host::Root& root_;
};

// The effective value of a setting file's text: "always [madvise] never" -> "madvise";
// anything else whitespace-normalised.
[[nodiscard]] std::string effective_value(std::string_view raw);

}  // namespace dltune::tune
