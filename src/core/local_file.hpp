#pragma once
// Every local output file dltune writes (a report, compare's and bench's pages and JSON, a
// capture, run's summary) appears whole or not at all: it is written to a temporary file beside
// the target, fsync'd, and renamed over it; on any failure the temporary file is removed. These
// are the user's own paths, not host settings, so they are opened directly, not through Root.
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace dltune::local_file {

// Where writing `path` lands, checked before anything is written. `path` itself when it does not
// exist (its directory must) or is a regular file, replaced only with `replace`; with `replace`, a
// symbolic link's target when that is a regular file this process may write (the link stays)
// and the link is this user's own (another user's link is refused: it could point root at any
// file).
// Refused, naming the path and what it is: a device, FIFO, socket or directory, whatever
// `replace` says (dltune never renames a file over them), and a link without `replace`.
// "-" is returned as it is: standard output, for the callers that take it.
[[nodiscard]] Result<std::string> output_target(const std::string& path, bool replace);

// A local input file's text (a baseline, a web config, a profile the user names): opened without
// blocking, so that a FIFO (`<(...)`, a named pipe) or a device is refused at once instead of
// hanging, and read only when it is a regular file of at most `max_bytes`. Errors name the path
// and what it is ("a FIFO", "a directory", "a character device").
[[nodiscard]] Result<std::string> read_regular(const std::string& path,
                                               std::size_t max_bytes = 16u << 20);
// "a FIFO", "a directory", ... for a file type (st_mode); "a regular file" for one.
[[nodiscard]] const char* kind_of(unsigned mode);

// Refuses an output that is one of the command's inputs (the same file: device and inode, after
// links), `--force` or not: `report r.db -o r.db` would replace the recording with its report.
// Inputs that do not exist, and "-", are no conflict.
[[nodiscard]] Result<void> not_an_input(const std::string& output,
                                        const std::vector<std::string>& inputs);

// A temporary file beside a target, with the mode a new file would get (0666 less the umask):
// written by its holder, then committed by rename; removed when dropped uncommitted.
class PendingFile {
 public:
  PendingFile() = default;
  ~PendingFile();
  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&& other) noexcept;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  // Creates ".NAME.XXXXXX" in the target's directory (so that the rename stays within one file
  // system), with `mode`, or by default the mode a new file would get (0666 less the umask).
  // `target` is output_target's answer.
  [[nodiscard]] static Result<PendingFile> beside(const std::string& target,
                                                  std::optional<unsigned> mode = std::nullopt);
  [[nodiscard]] const std::string& temp_path() const { return temp_; }
  // fsync's the temporary file and renames it to the target. Unless `replace`, an existing target
  // is refused, also one that appeared since `beside` (RENAME_NOREPLACE, or link(2) where the
  // file system lacks it); with `replace`, a target that is no longer a regular file is refused
  // too. The temporary file is gone afterwards, whatever the outcome.
  [[nodiscard]] Result<void> commit(bool replace);

 private:
  std::string target_, temp_;
};

// Writes `path` through `write`: "-" is standard output; otherwise a PendingFile at
// output_target(path, replace). An existing `path` is refused unless `replace` (checked again at
// the rename, so a file made meanwhile is not lost). `what` names the output in errors.
[[nodiscard]] Result<void> write(const std::string& path, bool replace,
                                 const std::function<void(std::ostream&)>& write,
                                 const std::string& what = "the report");

// A private directory under /tmp (mode 0700), removed with all it holds when dropped: for the
// files of work that keeps nothing (profile's recording of a job it launched).
class TempDirectory {
 public:
  // "/tmp/PREFIX-XXXXXX"; an error naming the reason when it cannot be made.
  [[nodiscard]] static Result<TempDirectory> make(const std::string& prefix);
  TempDirectory(TempDirectory&& other) noexcept;
  TempDirectory& operator=(TempDirectory&&) = delete;
  TempDirectory(const TempDirectory&) = delete;
  ~TempDirectory();
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  TempDirectory() = default;
  std::string path_;
};

}  // namespace dltune::local_file
