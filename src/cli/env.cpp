// `dltune env`: the inventory of a host.
#include <cstdio>
#include <cstdlib>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "host/root.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class EnvCommand : public Command {
 public:
  explicit EnvCommand(CLI::App& app) : Command(app, "env") {
    options::add_value(*sub_, "--root", root_);
    options::add_flag(*sub_, "--json", json_);
  }

  int execute() override {
    const auto opened = open_root("env", root_);
    if (!opened) return kExitBadInput;
    const host::Root& root = *opened;
    const auto facts = inventory::collect(root, collect_options());
    fmt::print("{}",
               json_ ? inventory::to_json(facts).dump(2) + "\n" : inventory::render_text(facts));
    return kExitOk;
  }

 private:
  std::optional<std::string> root_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_env_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<EnvCommand>(app);
}

}  // namespace dltune::cli
