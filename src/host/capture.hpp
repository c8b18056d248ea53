#pragma once
// Packing what a recording Root read into a .tar.gz that `--root` can read back.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "host/root.hpp"

namespace dltune::host {

struct CaptureStats {
  std::size_t files = 0;
  std::size_t directories = 0;
  std::size_t links = 0;
  std::uint64_t bytes = 0;  // file content packed (before compression)
};

// Writes `out_path` (gzip'd tar, paths relative to the host's "/"): every file, directory and
// link that `root` recorded, the files re-read through `root` up to the size that was read
// then, plus `extra` (host path -> content) for what is not a host file. The archive is written
// to a temporary file beside `out_path` and renamed into place, so a failure leaves nothing; an
// existing file is replaced only when `replace`, and never anything but a regular file
// (core/local_file). "-" writes the archive to standard output.
[[nodiscard]] Result<CaptureStats> write_capture(const Root& root, const std::string& out_path,
                                                 const std::map<std::string, std::string>& extra,
                                                 bool replace);

}  // namespace dltune::host
