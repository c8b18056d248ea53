// The man pages and completion scripts, written at build time (`dltune __generate-docs DIR`):
// made by options/ from the program's CLI11 definition and commands/*.toml, with the files and
// variables every page shares listed here.
#include "cli/docs.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "options/man_page.hpp"
#include "settings/profile.hpp"

namespace dltune::cli {

namespace {

// The commands that take a profile (-p PROFILE, bench's -a/-b): they look in
// /etc/dltune/profiles.
std::vector<std::string> commands_with_profiles(const CLI::App& program) {
  std::vector<std::string> out;
  const auto takes_profile = [](const CLI::App& app, const auto& self) -> bool {
    for (const auto* o : app.get_options())
      if (o->get_type_name() == "PROFILE") return true;
    for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
      if (self(*s, self)) return true;
    return false;
  };
  for (const auto* c : program.get_subcommands([](const CLI::App*) { return true; }))
    if (takes_profile(*c, takes_profile)) out.push_back(c->get_name());
  return out;
}

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
  profiles.commands = commands_with_profiles(program);
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

// Writes `text` to `path` whole (a temporary file renamed into place).
bool write_file(const std::string& path, const std::string& text) {
  auto written = local_file::write(
      path, true, [&](std::ostream& out) { out << text; }, path);
  if (!written) {
    fmt::print(stderr, "dltune {}: {}\n", kGenerateDocs, written.error().message());
    return false;
  }
  return true;
}

bool make_directory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    fmt::print(stderr, "dltune {}: {}: {}\n", kGenerateDocs, path, ec.message());
    return false;
  }
  return true;
}

}  // namespace

int generate_docs(const CLI::App& program, const std::string& exit_status, const std::string& dir) {
  const std::string man1 = dir + "/man/man1";
  const std::string completions = dir + "/completions";
  if (!make_directory(man1) || !make_directory(completions)) return kExitFailure;
  for (const auto& page : options::man_pages(program, man_extras(program, exit_status)))
    if (!write_file(man1 + "/" + page.name + ".1", page.text)) return kExitFailure;
  const auto words = completion_words();
  const auto model = options::completion_model(program);
  if (!write_file(completions + "/dltune.bash", options::bash_completion(model, words)) ||
      !write_file(completions + "/_dltune", options::zsh_completion(model, words)) ||
      !write_file(completions + "/dltune.fish", options::fish_completion(model, words)))
    return kExitFailure;
  return kExitOk;
}

}  // namespace dltune::cli
