// The man pages and completion scripts, written at build time (`dltune __generate-docs DIR`):
// made and written by options/ from the program's CLI11 definition and commands/*.toml, with the
// files and variables every page shares listed here.
#include "cli/docs.hpp"

#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "core/text.hpp"
#include "options/docs_files.hpp"
#include "settings/profile.hpp"

namespace dltune::cli {

namespace {

options::ManExtras man_extras(const CLI::App& program, const std::string& exit_status) {
  options::ManExtras extras;
  extras.source = "dltune " DLTUNE_VERSION;
  extras.exit_status = exit_status;

  options::ManEntry journal;
  journal.name = "/var/lib/dltune/state.db";
  journal.text =
      "The tune journal (SQLite, WAL, mode 0600): every transaction and each value it changed, "
      "committed before the change; backups/ beside it holds the copies of the files tune "
      "--persist edits. Every command warns of a transaction it finds left unfinished. "
      "--state-dir DIR keeps them in DIR instead.";
  journal.commands = {"tune", "bench"};
  extras.files.push_back(journal);

  options::ManEntry profiles;
  profiles.name = "/etc/dltune/profiles/NAME.toml";
  profiles.text = "A profile of your own, found by name (-p NAME) after the built-in " +
                  text::join(settings::builtin_profiles(), ", ") +
                  "; it may include a built-in one and change some of its values. "
                  "A PROFILE with a / in it is read from that file instead.";
  profiles.commands = options::commands_taking(program, "PROFILE");  // -p, bench's -a/-b
  extras.files.push_back(profiles);

  options::ManEntry capture;
  capture.name = "/run/dltune/capture";
  capture.text =
      "In a capture, what is not a file on the host: the manifest, the environment variables, "
      "file system sizes and NVML's GPU facts that env used, read back by env --root.";
  capture.commands = {"capture", "env"};
  extras.files.push_back(capture);

  options::ManEntry no_color;
  no_color.name = "NO_COLOR";
  no_color.text =
      "When set (to anything), no colour on a terminal unless a command is told --color always "
      "(no-color.org).";
  extras.environment.push_back(no_color);

  options::ManEntry nvml;
  nvml.name = "DLTUNE_NVML_LIBRARY";
  nvml.text =
      "The libnvidia-ml.so to load for the GPUs' facts and readings (default: the driver's "
      "libnvidia-ml.so.1).";
  extras.environment.push_back(nvml);
  return extras;
}

}  // namespace

int generate_docs(const CLI::App& program, const std::string& exit_status, const std::string& dir) {
  const auto written =
      options::write_docs(program, man_extras(program, exit_status), completion_words(), dir);
  if (!written) {
    fmt::print(stderr, "dltune {}: {}\n", kGenerateDocs, written.error().message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace dltune::cli
