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

#include <fmt/format.h>

#include "core/local_file.hpp"

namespace dltune::host {

namespace {

struct Writer {
  archive* a = archive_write_new();
  ~Writer() {
    if (a) archive_write_free(a);
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
  Writer w;
  archive_write_add_filter_gzip(w.a);
  archive_write_set_format_pax_restricted(w.a);
  if (*target == "-") {
    if (archive_write_open_fd(w.a, STDOUT_FILENO) != ARCHIVE_OK)
      return fail("cannot write to", "standard output", archive_errno(w.a));
  } else {
    auto p = local_file::PendingFile::beside(*target);
    if (!p) return tl::unexpected(p.error());
    pending = std::move(*p);
    if (archive_write_open_filename(w.a, pending->temp_path().c_str()) != ARCHIVE_OK)
      return fail("cannot write", out_path, archive_errno(w.a));
  }

  CaptureStats stats;
  const auto now = std::time(nullptr);
  std::set<std::string> dirs_done;
  auto fail_write = [&](const std::string& what) -> tl::unexpected<Error> {
    const int err = archive_errno(w.a);
    std::string msg = archive_error_string(w.a) ? archive_error_string(w.a) : "";
    archive_write_free(w.a);
    w.a = nullptr;
    return fail(fmt::format("cannot write {} into", what),
                out_path + (msg.empty() ? "" : " (" + msg + ")"), err);
  };
  auto entry_header = [&](const std::string& path, mode_t type, mode_t perm,
                          la_int64_t size) -> bool {
    archive_entry* e = archive_entry_new();
    archive_entry_set_pathname(e, rel(path).c_str());
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, perm);
    archive_entry_set_size(e, size);
    archive_entry_set_mtime(e, now, 0);
    bool ok = archive_write_header(w.a, e) == ARCHIVE_OK;
    archive_entry_free(e);
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
    if (!content.empty() && archive_write_data(w.a, content.data(), content.size()) < 0)
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
        archive_entry* e = archive_entry_new();
        archive_entry_set_pathname(e, rel(a.path).c_str());
        archive_entry_set_filetype(e, AE_IFLNK);
        archive_entry_set_perm(e, 0777);
        archive_entry_set_symlink(e, a.target.c_str());
        archive_entry_set_mtime(e, now, 0);
        const bool ok = archive_write_header(w.a, e) == ARCHIVE_OK;
        archive_entry_free(e);
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
  if (archive_write_close(w.a) != ARCHIVE_OK) return fail_write("the end of the archive");
  if (pending)
    if (auto ok = pending->commit(replace); !ok) return tl::unexpected(ok.error());
  return stats;
}

}  // namespace dltune::host
