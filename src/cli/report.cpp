// `dltune report`: a recording as a self-contained HTML page of charts, or as JSON.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "options/options.hpp"
#include "report/make_report.hpp"

namespace dltune::cli {

namespace {

class ReportCommand : public Command {
 public:
  explicit ReportCommand(CLI::App& app) : Command(app, "report") {
    options::add_value(*sub_, "recording", request_.recording)->required();
    options::add_value(*sub_, "-o,--output", request_.output)->required();
    options::add_choice(*sub_, "--format", format_, {"html", "json"});
    options::add_value(*sub_, "--from", request_.from);
    options::add_value(*sub_, "--to", request_.to);
    options::add_integer(*sub_, "--max-points", request_.max_points, 2, 100'000'000);
    options::add_flag(*sub_, "--force", request_.force);
  }

  int execute() override {
    request_.html = format_ == "html";
    if (auto made = report::make_report(request_); !made) return failed(made.error());
    return kExitOk;
  }

 private:
  report::ReportRequest request_;
  std::string format_ = "html";
};

}  // namespace

std::unique_ptr<Command> make_report_command(CLI::App& app, GlobalOptions& /*global*/) {
  return std::make_unique<ReportCommand>(app);
}

}  // namespace dltune::cli
