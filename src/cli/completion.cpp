// `dltune completion bash|zsh|fish`: the shell completion script, made from the program's own
// command definitions (options/completion.hpp).
#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/docs.hpp"
#include "options/options.hpp"
#include "settings/profile.hpp"

namespace dltune::cli {

namespace {

class CompletionCommand : public Command {
 public:
  explicit CompletionCommand(CLI::App& app) : Command(app, "completion"), program_(app) {
    options::add_choice(*sub_, "shell", shell_, options::completion_shells())->required();
  }

  int execute() override {
    auto script = options::completion_script(shell_, program_, completion_words());
    if (!script) return refuse(script.error().message());
    fmt::print("{}", *script);
    return kExitOk;
  }

 private:
  CLI::App& program_;
  std::string shell_;
};

}  // namespace

options::CompletionWords completion_words() {
  return {settings::builtin_profiles(), settings::known_setting_ids()};
}

std::unique_ptr<Command> make_completion_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CompletionCommand>(app);
}

}  // namespace dltune::cli
