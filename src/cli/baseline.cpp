// `dltune baseline`: write what this host's hardware should be (audit/baseline.hpp), for
// `check --baseline` and `slurm health --baseline` to judge it against later.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "audit/baseline.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/local_file.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class BaselineCommand : public Command {
 public:
  explicit BaselineCommand(CLI::App& app) : Command(app, "baseline") {
    options::add_value(*sub_, "-o,--output", output_);
    options::add_value(*sub_, "--root", root_);
    options::add_flag(*sub_, "--force", force_);
    options::add_flag(*sub_, "--json", json_);
  }

  int execute() override {
    // The output is checked before the host is read: a refusal changes nothing.
    if (output_ != "-")
      if (const auto target = local_file::output_target(output_, force_); !target)
        return refuse("-o: " + target.error().message());
    const auto opened = open_root("baseline", root_);
    if (!opened) return kExitBadInput;
    const auto facts = inventory::collect(*opened, collect_options());
    for (const auto& note : audit::baseline_notes(facts)) say(note);
    auto written = audit::write_baseline(facts, output_, force_, json_);
    if (!written) return failure(written.error().message());
    if (output_ != "-") fmt::print(stderr, "{}\n", audit::written_text(*written, output_));
    return kExitOk;
  }

 private:
  std::string output_ = "-";
  std::optional<std::string> root_;
  bool json_ = false, force_ = false;
};

}  // namespace

std::unique_ptr<Command> make_baseline_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<BaselineCommand>(app);
}

}  // namespace dltune::cli
