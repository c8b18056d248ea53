// `dltune top`: the live view of the host and a job.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "cli/sampling_options.hpp"
#include "options/options.hpp"
#include "tui/top.hpp"

namespace dltune::cli {

namespace {

class TopCommand : public Command {
 public:
  TopCommand(CLI::App& app, GlobalOptions&) : Command(app, "top") {
    flags_.add_to(*sub_);
    options::add_flag(*sub_, "--once", once_);
    options::add_choice(*sub_, "--sort", sort_, tui::sort_names());
  }

  int execute() override {
    auto scope = flags_.scope(monitor::Scope::Kind::kAll);
    if (!scope) return refuse(scope.error().message());
    return top_exit_status(
        tui::top_scope(host::Root(), *scope, flags_.sampler_options(*scope, flags_.interval_ns),
                       flags_.interval_ns, once_, sort_),
        "dltune top");
  }

 private:
  SamplingFlags flags_;
  bool once_ = false;
  std::string sort_;
};

}  // namespace

std::unique_ptr<Command> make_top_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<TopCommand>(app, global);
}

}  // namespace dltune::cli
