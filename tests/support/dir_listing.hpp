#pragma once
// What is in a directory and what kind a path is: for the tests that check a refused write
// changed nothing (no temporary file left beside the target, a device still a device).
#include <sys/stat.h>

#include <filesystem>
#include <set>
#include <string>

namespace dltune::testing {

// The names in `dir` (not recursive).
inline std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.insert(e.path().filename().string());
  return names;
}

// S_IFREG, S_IFIFO, S_IFCHR, ... of `path` itself (a link is S_IFLNK); 0 when it is not there.
inline mode_t kind_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & S_IFMT;
}

}  // namespace dltune::testing
