#pragma once
// What every fact collector gets: the host to read, the environment variables that decide
// where software is looked for, and the list of facts that could not be read.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"

namespace dltune::inventory {

// A fact that is unknown because its file could not be read or parsed (not because it is
// absent: absent facts are simply left out).
struct Problem {
  std::string fact;    // "memory.meminfo", "gpu.nvml"
  std::string path;    // the file, library or input
  std::string reason;  // "Permission denied", "line 3: expected 'Key: value kB'"
};

// Size and use of a mounted file system (statvfs on the live host; recorded in a capture).
struct FsUsage {
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;  // available to unprivileged users
};

class Context {
 public:
  // The cap for small version and metadata files (version.json, METADATA headers, pyvenv.cfg).
  static constexpr std::size_t kSmallFile = 65536;

  // The variables env consults (captured with a host so that --root gives the same answer).
  static const std::vector<std::string>& environment_names();

  Context(const host::Root& root, std::map<std::string, std::string> environ);

  [[nodiscard]] const host::Root& root() const { return root_; }
  [[nodiscard]] std::optional<std::string> env(std::string_view name) const;
  [[nodiscard]] const std::map<std::string, std::string>& environ() const { return environ_; }

  void problem(std::string fact, std::string path, std::string reason);
  void problem(std::string fact, const Error& e) { problem(std::move(fact), e.input, e.message()); }
  [[nodiscard]] const std::vector<Problem>& problems() const { return problems_; }

  // Reads a file; absent -> nullopt; unreadable -> nullopt and a Problem for `fact`.
  [[nodiscard]] std::optional<std::string> read(
      std::string_view fact, std::string_view path,
      std::size_t max_bytes = host::Root::kDefaultMaxBytes);
  // A file every Linux host has (/proc/meminfo, /proc/swaps, its mountinfo): absent is a
  // Problem too ("missing"), so that a host tree without it reads as unknown, never as a host
  // with no swap or no container.
  [[nodiscard]] std::optional<std::string> read_required(std::string_view fact,
                                                         std::string_view path);
  // The first line, trimmed (sysfs and procfs values).
  [[nodiscard]] std::optional<std::string> read_value(std::string_view fact, std::string_view path);
  // A directory's entries; absent or unreadable -> empty (unreadable also records a Problem).
  [[nodiscard]] std::vector<std::string> list(std::string_view fact, std::string_view path);

  // A value computed once per collection and shared by the modules that need it (the parsed
  // mountinfo, say), so that no file is read or parsed twice.
  template <class T, class Make>
  const T& shared(const std::string& key, Make make) {
    auto it = shared_.find(key);
    if (it == shared_.end()) it = shared_.emplace(key, std::make_shared<T>(make(*this))).first;
    return *static_cast<const T*>(it->second.get());
  }

  // statvfs of a mount point: live, or from the capture's record when reading a capture.
  std::function<std::optional<FsUsage>(const std::string& mount_point)> fs_usage;

 private:
  const host::Root& root_;
  std::map<std::string, std::string> environ_;
  std::vector<Problem> problems_;
  std::map<std::string, std::shared_ptr<void>> shared_;
};

}  // namespace dltune::inventory
