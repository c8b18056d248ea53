// `dltune env`: the inventory of a host.
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "host/root.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class EnvCommand : public Command {
 public:
  explicit EnvCommand(CLI::App& app) {
    sub_ = options::add_command(app, "env");
    sub_->add_option("--root", root_,
                     "Read the host tree at DIR (a capture unpacked by `tar xzf`, or a mounted "
                     "disk) instead of this host")
        ->type_name("DIR");
    sub_->add_flag("--json", json_, "Print JSON (schema: docs/json.md, \"dltune.env/1\")");
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    const auto opened = open_root("env", root_);
    if (!opened) return kExitBadInput;
    const host::Root& root = *opened;
    const auto facts = inventory::collect(root, collect_options());
    if (json_) {
      fmt::print("{}\n", inventory::to_json(facts).dump(2));
    } else {
      fmt::print("{}", inventory::render_text(facts));
    }
    return kExitOk;
  }

 private:
  CLI::App* sub_ = nullptr;
  std::optional<std::string> root_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_env_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<EnvCommand>(app);
}

}  // namespace dltune::cli
