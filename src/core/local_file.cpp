#include "core/local_file.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/core.h>

namespace dltune::local_file {

namespace {

// The temporary file's mode: what a new file would get (0666 less the umask), as a file made
// with `>` would have; mkstemp makes 0600.
mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

tl::unexpected<Error> not_regular(const std::string& path, mode_t mode) {
  return fail(
      fmt::format("{} is {}, not a regular file: dltune writes only regular files "
                  "(- writes to standard output)",
                  path, kind_of(mode)));
}

// An existing target that may be replaced, or a new one whose directory exists: the path to
// rename onto (a symbolic link's regular target), "-", or the refusal.
Result<std::string> classify_target(const std::string& path, bool replace) {
  if (path == "-") return path;
  if (path.empty()) return fail("no file name given");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return fail("cannot write", path, errno);
    const std::filesystem::path p(path);
    const auto dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    struct stat d {};
    if (::stat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode))
      return fail(fmt::format("cannot write {}: there is no directory {}", path, dir.string()));
    return path;
  }
  if (S_ISREG(st.st_mode)) {
    if (!replace) return fail(fmt::format("{} exists; use --force to replace it", path));
    return path;
  }
  if (!S_ISLNK(st.st_mode)) return not_regular(path, st.st_mode);
  if (!replace)
    return fail(
        fmt::format("{} is a symbolic link; use --force to replace the file it points to", path));
  // A link another user made (in /tmp, in a job's directory) would have this process, root
  // often, replace whatever file that user points it at: followed only when it is this user's,
  // as the kernel's fs.protected_symlinks has it for sticky directories.
  if (st.st_uid != ::geteuid())
    return fail(fmt::format(
        "{} is a symbolic link of uid {}, not of this user (uid {}): dltune writes through no "
        "other user's link, --force or not; remove it or name the file it points to",
        path, st.st_uid, ::geteuid()));
  struct stat t {};
  if (::stat(path.c_str(), &t) != 0)
    return fail(fmt::format("{} is a symbolic link to nothing that can be written", path), {},
                errno);
  if (!S_ISREG(t.st_mode)) return not_regular(path + " (a symbolic link)", t.st_mode);
  if (::access(path.c_str(), W_OK) != 0) return fail("cannot write", path, errno);
  std::error_code ec;
  const auto real = std::filesystem::canonical(path, ec);
  if (ec) return fail("cannot resolve the symbolic link", path, ec.value());
  return real.string();
}

// The temporary file is made in the target's directory: one this process cannot write in (a
// read-only file system, a directory of another user) is refused before anything is done.
Result<std::string> in_writable_directory(const std::string& path, std::string target) {
  const std::filesystem::path p(target);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return fail(fmt::format("cannot write {}: its directory {} is not writable", path, dir), {},
                errno);
  return target;
}

}  // namespace

const char* kind_of(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Result<std::string> read_regular(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return fail("cannot read", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return fail("cannot read", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(fmt::format("{} is {}, not a regular file", path, kind_of(st.st_mode)));
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return fail(fmt::format("{} is larger than {} bytes", path, max_bytes));
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const auto n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return fail("cannot read", path, err);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

Result<void> not_an_input(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (output == "-" || ::stat(output.c_str(), &out) != 0) return {};
  for (const auto& in : inputs) {
    struct stat st {};
    if (in == "-" || ::stat(in.c_str(), &st) != 0) continue;
    if (st.st_dev == out.st_dev && st.st_ino == out.st_ino)
      return fail(
          fmt::format("{} is also an input ({}): writing it would destroy what is read, "
                      "--force or not; write elsewhere",
                      output, in));
  }
  return {};
}

Result<std::string> output_target(const std::string& path, bool replace) {
  auto target = classify_target(path, replace);
  if (!target || *target == "-") return target;
  return in_writable_directory(path, *target);
}

PendingFile::~PendingFile() {
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

PendingFile::PendingFile(PendingFile&& other) noexcept
    : target_(std::move(other.target_)), temp_(std::move(other.temp_)) {
  other.temp_.clear();
}

PendingFile& PendingFile::operator=(PendingFile&& other) noexcept {
  if (this != &other) {
    if (!temp_.empty()) ::unlink(temp_.c_str());
    target_ = std::move(other.target_);
    temp_ = std::move(other.temp_);
    other.temp_.clear();
  }
  return *this;
}

Result<PendingFile> PendingFile::beside(const std::string& target, std::optional<unsigned> mode) {
  const std::filesystem::path t(target);
  const auto dir = t.has_parent_path() ? t.parent_path() : std::filesystem::path(".");
  // Built by appending: g++ 12 -O2 warns (-Wrestrict) on "literal" + std::string&&.
  std::string name(1, '.');
  name += t.filename().string();
  name += ".XXXXXX";
  std::string temp = (dir / name).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return fail("cannot create a temporary file beside", target, errno);
  const int err =
      ::fchmod(fd, mode ? static_cast<mode_t>(*mode) : new_file_mode()) == 0 ? 0 : errno;
  ::close(fd);
  if (err != 0) {
    ::unlink(temp.c_str());
    return fail("cannot set the mode of", temp, err);
  }
  PendingFile f;
  f.target_ = target;
  f.temp_ = std::move(temp);
  return f;
}

Result<void> PendingFile::commit(bool replace) {
  if (temp_.empty()) return fail("nothing to commit for", target_, EINVAL);
  const std::string temp = std::move(temp_);
  temp_.clear();
  const auto failed = [&](const char* what, int err) {
    ::unlink(temp.c_str());
    return fail(what, target_, err);
  };
  // Written data reaches the disk before the name does, so that a crash leaves the old file or
  // the new one, never an empty one.
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return failed("cannot open the temporary file for", errno);
  const int synced = ::fsync(fd);
  const int sync_err = errno;
  ::close(fd);
  if (synced != 0) return failed("cannot write", sync_err);
  // Never a rename over a device, FIFO, socket or directory that took the name meanwhile.
  struct stat st {};
  if (replace && ::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    ::unlink(temp.c_str());
    return not_regular(target_, st.st_mode);
  }
  // Without `replace` the rename must not replace a file that appeared meanwhile.
  int rc = replace
               ? ::rename(temp.c_str(), target_.c_str())
               : ::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target_.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && !replace && errno == EINVAL) {
    // A file system without RENAME_NOREPLACE: link(2) also refuses an existing name.
    rc = ::link(temp.c_str(), target_.c_str());
    if (rc == 0) ::unlink(temp.c_str());
  }
  if (rc != 0) {
    const int err = errno;
    if (err == EEXIST) return failed("will not overwrite an existing file (use --force):", err);
    return failed("cannot rename into place:", err);
  }
  return {};
}

Result<void> write(const std::string& path, bool replace,
                   const std::function<void(std::ostream&)>& write, const std::string& what) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    if (!std::cout) return fail("cannot write " + what + " to", "standard output", EIO);
    return {};
  }
  const auto target = output_target(path, replace);
  if (!target) return tl::unexpected(target.error());
  auto pending = PendingFile::beside(*target);
  if (!pending) return tl::unexpected(pending.error());
  {
    std::ofstream out(pending->temp_path(), std::ios::binary | std::ios::trunc);
    write(out);
    out.flush();
    if (!out) return fail("cannot write", pending->temp_path(), errno != 0 ? errno : EIO);
  }
  return pending->commit(replace);
}

Result<TempDirectory> TempDirectory::make(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)
    return fail("cannot make a temporary directory", tmpl, errno);
  TempDirectory d;
  d.path_ = tmpl;
  return d;
}

TempDirectory::TempDirectory(TempDirectory&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

TempDirectory::~TempDirectory() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace dltune::local_file
