// write_output (output.hpp): a report file appears whole or not at all.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "report/output.hpp"

namespace dltune::report {

namespace {

// The temporary file's mode: what a new file would get (0666 less the umask), as a report
// made with `>` would have; mkstemp makes 0600.
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

Result<void> write_output(const std::string& path, bool force,
                          const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) return fail("cannot write the report to", "standard output", EIO);
    return {};
  }
  struct stat st {};
  if (!force && ::lstat(path.c_str(), &st) == 0)
    return fail("will not overwrite an existing file (use --force):", path, EEXIST);
  const std::filesystem::path target(path);
  const auto dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  // Built by appending: g++ 12 -O2 warns (-Wrestrict) on "literal" + std::string&&.
  std::string name(1, '.');
  name += target.filename().string();
  name += ".XXXXXX";
  std::string tmp = (dir / name).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) return fail("cannot create a temporary file beside", path, errno);
  ::fchmod(fd, new_file_mode());
  ::close(fd);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    write(out);
    out.flush();
    if (!out) {
      const int err = errno != 0 ? errno : EIO;
      ::unlink(tmp.c_str());
      return fail("cannot write", tmp, err);
    }
  }
  // Without --force the rename must not replace a file that appeared meanwhile.
  int rc = force ? ::rename(tmp.c_str(), path.c_str())
                 : ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && !force && errno == EINVAL) {
    // A file system without RENAME_NOREPLACE: link(2) also refuses an existing name.
    rc = ::link(tmp.c_str(), path.c_str());
    if (rc == 0) ::unlink(tmp.c_str());
  }
  if (rc != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    if (err == EEXIST) return fail("will not overwrite an existing file (use --force):", path, err);
    return fail("cannot rename the report into place:", path, err);
  }
  return {};
}

}  // namespace dltune::report
