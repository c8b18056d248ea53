#include "host/capture.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <set>

#include <fmt/core.h>

#include "core/local_file.hpp"
#include "core/shared_library.hpp"

namespace dltune::host {

namespace {

// libarchive's functions that capture calls, resolved from libarchive.so.13 on the first capture
// (core/shared_library.hpp): the only command that writes an archive, and the library brings
// libxml2, ICU, nettle and five compressors into every start when it is linked.
struct ArchiveLib {
  decltype(&::archive_entry_free) archive_entry_free = nullptr;
  decltype(&::archive_entry_new) archive_entry_new = nullptr;
  decltype(&::archive_entry_set_filetype) archive_entry_set_filetype = nullptr;
  decltype(&::archive_entry_set_mtime) archive_entry_set_mtime = nullptr;
  decltype(&::archive_entry_set_pathname) archive_entry_set_pathname = nullptr;
  decltype(&::archive_entry_set_perm) archive_entry_set_perm = nullptr;
  decltype(&::archive_entry_set_size) archive_entry_set_size = nullptr;
  decltype(&::archive_entry_set_symlink) archive_entry_set_symlink = nullptr;
  decltype(&::archive_errno) archive_errno = nullptr;
  decltype(&::archive_error_string) archive_error_string = nullptr;
  decltype(&::archive_write_add_filter_gzip) archive_write_add_filter_gzip = nullptr;
  decltype(&::archive_write_close) archive_write_close = nullptr;
  decltype(&::archive_write_data) archive_write_data = nullptr;
  decltype(&::archive_write_free) archive_write_free = nullptr;
  decltype(&::archive_write_header) archive_write_header = nullptr;
  decltype(&::archive_write_new) archive_write_new = nullptr;
  decltype(&::archive_write_open_fd) archive_write_open_fd = nullptr;
  decltype(&::archive_write_open_filename) archive_write_open_filename = nullptr;
  decltype(&::archive_write_set_format_pax_restricted) archive_write_set_format_pax_restricted =
      nullptr;
};

Result<const ArchiveLib*> archive_lib() {
  static const Result<ArchiveLib> loaded = SharedLibrary::load_table<ArchiveLib>(
      "libarchive.so.13", "`dltune capture`", "libarchive13",
      [](SharedLibrary::Resolver& r, ArchiveLib& api) {
#define DLTUNE_SYMBOL(f) r(api.f, #f)
        DLTUNE_SYMBOL(archive_entry_free);
        DLTUNE_SYMBOL(archive_entry_new);
        DLTUNE_SYMBOL(archive_entry_set_filetype);
        DLTUNE_SYMBOL(archive_entry_set_mtime);
        DLTUNE_SYMBOL(archive_entry_set_pathname);
        DLTUNE_SYMBOL(archive_entry_set_perm);
        DLTUNE_SYMBOL(archive_entry_set_size);
        DLTUNE_SYMBOL(archive_entry_set_symlink);
        DLTUNE_SYMBOL(archive_errno);
        DLTUNE_SYMBOL(archive_error_string);
        DLTUNE_SYMBOL(archive_write_add_filter_gzip);
        DLTUNE_SYMBOL(archive_write_close);
        DLTUNE_SYMBOL(archive_write_data);
        DLTUNE_SYMBOL(archive_write_free);
        DLTUNE_SYMBOL(archive_write_header);
        DLTUNE_SYMBOL(archive_write_new);
        DLTUNE_SYMBOL(archive_write_open_fd);
        DLTUNE_SYMBOL(archive_write_open_filename);
        DLTUNE_SYMBOL(archive_write_set_format_pax_restricted);
#undef DLTUNE_SYMBOL
      });
  if (!loaded) return tl::unexpected(loaded.error());
  return &*loaded;
}

struct Writer {
  const ArchiveLib& lib;
  archive* a = lib.archive_write_new();
  ~Writer() {
    if (a) lib.archive_write_free(a);
  }
};

// "/proc/meminfo" -> "proc/meminfo"
std::string rel(const std::string& host_path) {
  return host_path.substr(1);
}

}  // namespace

Result<CaptureStats> write_capture(const Root& root, const std::string& out_path,
                                   const std::map<std::string, std::string>& extra, bool replace) {
  const auto target = local_file::output_target(out_path, replace);
  if (!target) return tl::unexpected(target.error());
  std::optional<local_file::PendingFile> pending;
  auto loaded = archive_lib();
  if (!loaded) return tl::unexpected(loaded.error());
  const ArchiveLib& lib = **loaded;
  Writer w{lib};
  if (w.a == nullptr) return fail("cannot write", out_path, ENOMEM);
  lib.archive_write_add_filter_gzip(w.a);
  lib.archive_write_set_format_pax_restricted(w.a);
  if (*target == "-") {
    if (lib.archive_write_open_fd(w.a, STDOUT_FILENO) != ARCHIVE_OK)
      return fail("cannot write to", "standard output", lib.archive_errno(w.a));
  } else {
    auto p = local_file::PendingFile::beside(*target);
    if (!p) return tl::unexpected(p.error());
    pending = std::move(*p);
    if (lib.archive_write_open_filename(w.a, pending->temp_path().c_str()) != ARCHIVE_OK)
      return fail("cannot write", out_path, lib.archive_errno(w.a));
  }

  CaptureStats stats;
  const auto now = std::time(nullptr);
  std::set<std::string> dirs_done;
  auto fail_write = [&](const std::string& what) -> tl::unexpected<Error> {
    const int err = lib.archive_errno(w.a);
    std::string msg = lib.archive_error_string(w.a) ? lib.archive_error_string(w.a) : "";
    lib.archive_write_free(w.a);
    w.a = nullptr;
    return fail(fmt::format("cannot write {} into", what),
                out_path + (msg.empty() ? "" : " (" + msg + ")"), err);
  };
  auto entry_header = [&](const std::string& path, mode_t type, mode_t perm,
                          la_int64_t size) -> bool {
    archive_entry* e = lib.archive_entry_new();
    lib.archive_entry_set_pathname(e, rel(path).c_str());
    lib.archive_entry_set_filetype(e, type);
    lib.archive_entry_set_perm(e, perm);
    lib.archive_entry_set_size(e, size);
    lib.archive_entry_set_mtime(e, now, 0);
    bool ok = lib.archive_write_header(w.a, e) == ARCHIVE_OK;
    lib.archive_entry_free(e);
    return ok;
  };
  // Parent directories first, so that any tar unpacks the tree with its modes.
  std::function<bool(const std::string&)> ensure_dir = [&](const std::string& dir) -> bool {
    if (dir.empty() || dir == "/" || dirs_done.count(dir)) return true;
    if (!ensure_dir(dir.substr(0, dir.rfind('/')))) return false;
    dirs_done.insert(dir);
    ++stats.directories;
    return entry_header(dir, AE_IFDIR, 0755, 0);
  };
  auto parent = [](const std::string& p) { return p.substr(0, p.rfind('/')); };

  std::set<std::string> written;
  auto add_file = [&](const std::string& path, const std::string& content) -> bool {
    if (!ensure_dir(parent(path))) return false;
    if (!entry_header(path, AE_IFREG, 0644, static_cast<la_int64_t>(content.size()))) return false;
    if (!content.empty() && lib.archive_write_data(w.a, content.data(), content.size()) < 0)
      return false;
    written.insert(path);
    ++stats.files;
    stats.bytes += content.size();
    return true;
  };

  for (const auto& [path, content] : extra)
    if (!add_file(path, content)) return fail_write(path);

  for (const auto& a : root.recorded()) {
    if (written.count(a.path)) continue;
    switch (a.type) {
      case Access::Type::kDirectory:
        if (!ensure_dir(a.path)) return fail_write(a.path);
        break;
      case Access::Type::kSymlink: {
        if (!ensure_dir(parent(a.path))) return fail_write(a.path);
        archive_entry* e = lib.archive_entry_new();
        lib.archive_entry_set_pathname(e, rel(a.path).c_str());
        lib.archive_entry_set_filetype(e, AE_IFLNK);
        lib.archive_entry_set_perm(e, 0777);
        lib.archive_entry_set_symlink(e, a.target.c_str());
        lib.archive_entry_set_mtime(e, now, 0);
        const bool ok = lib.archive_write_header(w.a, e) == ARCHIVE_OK;
        lib.archive_entry_free(e);
        if (!ok) return fail_write(a.path);
        written.insert(a.path);
        ++stats.links;
        break;
      }
      case Access::Type::kFile: {
        std::string content;
        if (a.max_bytes > 0) {
          // Read again now: a file that vanished since is packed empty rather than failing.
          auto r = root.read(a.path, a.max_bytes);
          if (r && *r) content = std::move(**r);
        }
        if (!add_file(a.path, content)) return fail_write(a.path);
        break;
      }
    }
  }
  if (lib.archive_write_close(w.a) != ARCHIVE_OK) return fail_write("the end of the archive");
  if (pending)
    if (auto ok = pending->commit(replace); !ok) return tl::unexpected(ok.error());
  return stats;
}

}  // namespace dltune::host
