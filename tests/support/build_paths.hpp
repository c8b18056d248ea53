// Where the build put what the tests run, and where the sources are. Defined in a file that
// CMake generates into the build tree (generated/test_build_paths.cpp), not as compile
// definitions: the test files' compile commands then name no absolute path, so that a compiler
// cache shares their objects between clones of the repository (cmake/unity.cmake).
#pragma once

namespace dltune::testing::build {
extern const char* const source_dir;        // the repository's top directory
extern const char* const fixtures;          // tests/fixtures
extern const char* const binary;            // the dltune program under test
extern const char* const cxx_compiler;      // the compiler of this build
extern const char* const hardening_flags;   // the hardened builds' compile and link flags
extern const char* const fake_nvml;         // the fake libnvidia-ml.so (tests/fakes/nvml)
extern const char* const fake_nvml_nosyms;  // ... lacking a symbol NVML requires
extern const char* const fake_nvml_old;     // ... with only the oldest symbols
}  // namespace dltune::testing::build

// The names the tests use (each a `const char*`).
#define DLTUNE_SOURCE_DIR (::dltune::testing::build::source_dir)
#define DLTUNE_FIXTURES (::dltune::testing::build::fixtures)
#define DLTUNE_BINARY (::dltune::testing::build::binary)
#define DLTUNE_CXX_COMPILER (::dltune::testing::build::cxx_compiler)
#define DLTUNE_HARDENING_FLAGS (::dltune::testing::build::hardening_flags)
#define DLTUNE_FAKE_NVML (::dltune::testing::build::fake_nvml)
#define DLTUNE_FAKE_NVML_NOSYMS (::dltune::testing::build::fake_nvml_nosyms)
#define DLTUNE_FAKE_NVML_OLD (::dltune::testing::build::fake_nvml_old)
