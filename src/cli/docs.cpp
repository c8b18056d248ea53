// The man pages and completion scripts, written at build time (`dltune __generate-docs DIR`):
// made and written by options/ from the program's CLI11 definition, commands/*.toml and
// commands/program/dltune.toml (the files and variables every page shares).
#include "cli/docs.hpp"

#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "options/docs_files.hpp"
#include "options/program_text.hpp"

namespace dltune::cli {

int generate_docs(const CLI::App& program, const std::string& dir) {
  const auto extras = options::program_text().man_extras(program, "dltune " DLTUNE_VERSION);
  const auto written = options::write_docs(program, extras, completion_words(), dir);
  if (!written) {
    fmt::print(stderr, "dltune {}: {}\n", kGenerateDocs, written.error().message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace dltune::cli
