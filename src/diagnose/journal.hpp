#pragma once
// The kernel's messages in the systemd journal, for `dltune doctor`: read through
// libsystemd's sd-journal (never by running journalctl), from the journal directories of a host
// tree (/var/log/journal, the persistent one, and /run/log/journal), entries with
// _TRANSPORT=kernel between two wall times.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/root.hpp"

namespace dltune::diagnose {

struct JournalStats {
  std::vector<std::string> directories;  // the journal directories that were opened
  std::size_t entries = 0;               // kernel entries in the window
  std::optional<std::string> error;      // why the journal could not be read
};

// Whether `root` has a journal directory with files in it.
[[nodiscard]] bool has_journal(const host::Root& root);

// Calls `each(wall_ns, message)` for every kernel entry at or after `since_wall_ns` and before
// `until_wall_ns` (0: no end), oldest first.
JournalStats read_journal(const host::Root& root, std::int64_t since_wall_ns,
                          std::int64_t until_wall_ns,
                          const std::function<void(std::int64_t, std::string_view)>& each);

}  // namespace dltune::diagnose
