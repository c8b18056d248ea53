// `dltune completion bash|zsh|fish`: the shell completion script, made from the program's own
// command definitions (options/completion.hpp).
#include <algorithm>
#include <cstdio>
#include <set>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/docs.hpp"
#include "options/options.hpp"
#include "settings/catalog.hpp"
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
  options::CompletionWords words;
  words.profiles = settings::builtin_profiles();
  std::set<std::string> ids;
  for (const auto& spec : settings::catalog())
    if (!spec.family()) ids.insert(spec.key);
  // Each built-in profile's own keys: with the catalog's, every id one of them can hold.
  const auto any_key = [](const std::string&) -> Result<void> { return {}; };
  for (const auto& name : words.profiles)
    if (const auto text = settings::builtin_profile_text(name))
      if (auto profile = settings::parse_profile(*text, "profiles/" + name + ".toml", any_key))
        for (const auto& entry : profile->entries) ids.insert(entry.key);
  words.setting_ids.assign(ids.begin(), ids.end());
  return words;
}

std::unique_ptr<Command> make_completion_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CompletionCommand>(app);
}

}  // namespace dltune::cli
