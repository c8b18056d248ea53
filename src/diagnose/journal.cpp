// The kernel's journal entries through sd-journal (diagnose/journal.hpp).
#include "diagnose/journal.hpp"

#include <systemd/sd-journal.h>

#include <cstring>

#include <fmt/core.h>

#include "core/shared_library.hpp"

namespace dltune::diagnose {

namespace {

// sd-journal's functions that doctor calls, resolved from libsystemd.so.0 when a journal is
// first read (core/shared_library.hpp): linked, libsystemd brings libgcrypt, liblz4, liblzma,
// libzstd and libcap into every start of every command.
struct JournalLib {
  decltype(&::sd_journal_add_match) sd_journal_add_match = nullptr;
  decltype(&::sd_journal_close) sd_journal_close = nullptr;
  decltype(&::sd_journal_get_data) sd_journal_get_data = nullptr;
  decltype(&::sd_journal_get_realtime_usec) sd_journal_get_realtime_usec = nullptr;
  decltype(&::sd_journal_next) sd_journal_next = nullptr;
  decltype(&::sd_journal_open_directory) sd_journal_open_directory = nullptr;
  decltype(&::sd_journal_seek_realtime_usec) sd_journal_seek_realtime_usec = nullptr;
};

Result<const JournalLib*> journal_lib() {
  static const Result<JournalLib> loaded = SharedLibrary::load_table<JournalLib>(
      "libsystemd.so.0", "reading the systemd journal", "libsystemd0",
      [](SharedLibrary::Resolver& r, JournalLib& api) {
#define DLTUNE_SYMBOL(f) r(api.f, #f)
        DLTUNE_SYMBOL(sd_journal_add_match);
        DLTUNE_SYMBOL(sd_journal_close);
        DLTUNE_SYMBOL(sd_journal_get_data);
        DLTUNE_SYMBOL(sd_journal_get_realtime_usec);
        DLTUNE_SYMBOL(sd_journal_next);
        DLTUNE_SYMBOL(sd_journal_open_directory);
        DLTUNE_SYMBOL(sd_journal_seek_realtime_usec);
#undef DLTUNE_SYMBOL
      });
  if (!loaded) return tl::unexpected(loaded.error());
  return &*loaded;
}

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
    // Loaded at the first directory that has journal files, never for a host without them.
    auto loaded = journal_lib();
    if (!loaded) {
      st.error = loaded.error().message();
      return st;
    }
    const JournalLib& lib = **loaded;
    const std::string dir = root.outside(d);
    sd_journal* j = nullptr;
    // sd_journal_open_directory(3): every journal file in the directory and its machine-id
    // subdirectories, interleaved by time.
    int r = lib.sd_journal_open_directory(&j, dir.c_str(), 0);
    if (r < 0) {
      st.error = fmt::format("cannot open the journal in {}: {}", d, std::strerror(-r));
      continue;
    }
    st.directories.push_back(d);
    r = lib.sd_journal_add_match(j, "_TRANSPORT=kernel", 0);
    if (r >= 0)
      r = lib.sd_journal_seek_realtime_usec(
          j, static_cast<std::uint64_t>(std::max<std::int64_t>(since_wall_ns, 0) / 1000));
    while (r >= 0 && (r = lib.sd_journal_next(j)) > 0) {
      std::uint64_t usec = 0;
      if (lib.sd_journal_get_realtime_usec(j, &usec) < 0) continue;
      const auto wall = static_cast<std::int64_t>(usec) * 1000;
      if (wall < since_wall_ns) continue;
      if (until_wall_ns > 0 && wall >= until_wall_ns) break;
      const void* data = nullptr;
      size_t len = 0;
      if (lib.sd_journal_get_data(j, "MESSAGE", &data, &len) < 0) continue;
      std::string_view msg(static_cast<const char*>(data), len);
      if (!msg.starts_with("MESSAGE=")) continue;
      msg.remove_prefix(8);
      ++st.entries;
      each(wall, msg);
    }
    if (r < 0) st.error = fmt::format("reading the journal in {}: {}", d, std::strerror(-r));
    lib.sd_journal_close(j);
  }
  return st;
}

}  // namespace dltune::diagnose
