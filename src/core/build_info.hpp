#pragma once
// What the program was built from: the version (CMakeLists.txt's project version, as
// DLTUNE_VERSION) and the git commit (cmake/build_commit.cmake writes the definition at every
// build: "1a2b3c4d5e6f", "1a2b3c4d5e6f+dirty" when the tree had changes, "unknown" outside git).
namespace dltune {

[[nodiscard]] const char* build_commit();

}  // namespace dltune
