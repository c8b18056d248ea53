#pragma once
// How a transaction reads and writes one journaled change: by its kind's entry in the settings
// catalog (settings::change_kind). The transaction journals, verifies and rolls back; the kind
// only reads the value now and writes a new one.
#include <optional>
#include <string>

#include "core/error.hpp"
#include "host/root.hpp"
#include "settings/setting.hpp"

namespace dltune::tune {

using settings::effective_value;

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
  // Removes what did not exist before (only a whole file).
  [[nodiscard]] Result<void> remove(const std::string& kind, const std::string& target) const;

  // Whether a read-back value is the value written: files byte for byte, settings by their
  // effective value (the [selected] word of a choice file, whitespace-normalised text).
  [[nodiscard]] static bool same_value(const std::string& kind, const std::string& a,
                                       const std::string& b);

 private:
  const host::Root& root_;
};

}  // namespace dltune::tune
