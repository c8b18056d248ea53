// `dltune capture`: pack every host file that env read.
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"

namespace dltune::cli {

namespace {

class CaptureCommand : public Command {
 public:
  explicit CaptureCommand(CLI::App& app) {
    sub_ = app.add_subcommand("capture", "Pack every host file that env reads into a tarball");
    sub_->add_option("-o,--output", output_, "The .tar.gz to write")->required();
  }
  bool selected() const override { return sub_->parsed(); }
  int execute() override { return kExitFailure; }

 private:
  CLI::App* sub_ = nullptr;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> make_capture_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CaptureCommand>(app);
}

}  // namespace dltune::cli
