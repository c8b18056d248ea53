// What the commands share: opening the host to read, and how facts are collected.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"

namespace dltune::cli {

Command::Command(CLI::App& parent, const char* name)
    : sub_(options::add_command(parent, name)), name_(name) {}

bool Command::selected() const {
  return sub_->parsed();
}

void Command::say(const std::string& what) const {
  fmt::print(stderr, "dltune {}: {}\n", name_, what);
}

int Command::refuse(const std::string& why) const {
  say(why);
  return kExitBadInput;
}

int Command::failure(const std::string& why) const {
  say(why);
  return kExitFailure;
}

std::optional<host::Root> open_root(const char* command, const std::optional<std::string>& dir) {
  if (!dir) return host::Root();
  if (dir->empty()) {
    fmt::print(stderr, "dltune {}: --root '': expected the directory of a host tree\n", command);
    return std::nullopt;
  }
  auto r = host::Root::at(*dir);
  if (!r) {
    fmt::print(stderr, "dltune {}: --root: {}\n", command, r.error().message());
    return std::nullopt;
  }
  return *r;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

inventory::CollectOptions collect_options() {
  inventory::CollectOptions options;
  if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY")) options.nvml_library = lib;
  return options;
}

int top_exit_status(const tui::TopResult& result, const char* who) {
  if (result) return kExitOk;
  fmt::print(stderr, "{}: {}\n", who, result.error().error.message());
  return result.error().bad_input ? kExitBadInput : kExitFailure;
}

}  // namespace dltune::cli
