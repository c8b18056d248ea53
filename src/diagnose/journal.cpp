// The kernel's journal entries through sd-journal (diagnose/journal.hpp).
#include "diagnose/journal.hpp"

#include <systemd/sd-journal.h>

#include <cstring>

#include <fmt/format.h>

namespace dltune::diagnose {

namespace {

constexpr const char* kDirectories[] = {"/var/log/journal", "/run/log/journal"};

bool has_files(const host::Root& root, const std::string& dir, int depth = 0) {
  const auto names = root.list(dir);
  if (!names || !*names) return false;
  for (const auto& n : **names) {
    if (n.ends_with(".journal") || n.ends_with(".journal~")) return true;
    if (depth == 0 && has_files(root, dir + "/" + n, 1)) return true;  // MACHINE_ID/
  }
  return false;
}

}  // namespace

bool has_journal(const host::Root& root) {
  for (const char* d : kDirectories)
    if (has_files(root, d)) return true;
  return false;
}

JournalStats read_journal(const host::Root& root, std::int64_t since_wall_ns,
                          std::int64_t until_wall_ns,
                          const std::function<void(std::int64_t, std::string_view)>& each) {
  JournalStats st;
  for (const char* d : kDirectories) {
    if (!has_files(root, d)) continue;
    const std::string dir = root.outside(d);
    sd_journal* j = nullptr;
    // sd_journal_open_directory(3): every journal file in the directory and its machine-id
    // subdirectories, interleaved by time.
    int r = sd_journal_open_directory(&j, dir.c_str(), 0);
    if (r < 0) {
      st.error = fmt::format("cannot open the journal in {}: {}", d, std::strerror(-r));
      continue;
    }
    st.directories.push_back(d);
    r = sd_journal_add_match(j, "_TRANSPORT=kernel", 0);
    if (r >= 0)
      r = sd_journal_seek_realtime_usec(
          j, static_cast<std::uint64_t>(std::max<std::int64_t>(since_wall_ns, 0) / 1000));
    while (r >= 0 && (r = sd_journal_next(j)) > 0) {
      std::uint64_t usec = 0;
      if (sd_journal_get_realtime_usec(j, &usec) < 0) continue;
      const auto wall = static_cast<std::int64_t>(usec) * 1000;
      if (wall < since_wall_ns) continue;
      if (until_wall_ns > 0 && wall >= until_wall_ns) break;
      const void* data = nullptr;
      size_t len = 0;
      if (sd_journal_get_data(j, "MESSAGE", &data, &len) < 0) continue;
      std::string_view msg(static_cast<const char*>(data), len);
      if (!msg.starts_with("MESSAGE=")) continue;
      msg.remove_prefix(8);
      ++st.entries;
      each(wall, msg);
    }
    if (r < 0) st.error = fmt::format("reading the journal in {}: {}", d, std::strerror(-r));
    sd_journal_close(j);
  }
  return st;
}

}  // namespace dltune::diagnose
