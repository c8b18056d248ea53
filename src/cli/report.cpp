// `dltune report`: a recording as a self-contained HTML page of charts, or as JSON.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "options/options.hpp"
#include "report/decimate.hpp"
#include "report/output.hpp"
#include "report/series.hpp"

namespace dltune::cli {

namespace {

class ReportCommand : public Command {
 public:
  explicit ReportCommand(CLI::App& app) : Command(app, "report") {
    options::add_value(*sub_, "recording", recording_)->required();
    options::add_value(*sub_, "-o,--output", output_)->required();
    options::add_choice(*sub_, "--format", format_, {"html", "json"});
    options::add_value(*sub_, "--from", from_);
    options::add_value(*sub_, "--to", to_);
    options::add_integer(*sub_, "--max-points", max_points_, 2, 100'000'000);
    options::add_flag(*sub_, "--force", force_);
  }

  int execute() override {
    if (auto ok = local_file::not_an_input(output_, {recording_}); !ok)
      return refuse("-o: " + ok.error().message());
    auto recording = store::Recording::open(recording_);
    if (!recording) return refuse(recording.error().message());
    const auto& rec = **recording;
    if (rec.size() == 0) return refuse("the recording has no samples: " + recording_);
    auto window = report::window_of(rec, from_, to_);
    if (!window) return refuse(window.error().message());
    const auto target = local_file::output_target(output_, force_);
    if (!target) return refuse("-o: " + target.error().message());

    auto data = report::extract(rec, *window);
    if (!data) return failure(data.error().message());
    const bool html = format_ == "html";
    if (html || max_points_) report::decimate(*data, max_points_.value_or(4000));
    auto written = local_file::write(*target, force_, [&](std::ostream& out) {
      if (html) {
        report::write_html(*data, out, {.recording_path = recording_});
      } else {
        report::write_json(*data, out);
      }
    });
    if (!written) {
      // A file that appeared between the check above and the rename is bad input too.
      if (written.error().errno_ == EEXIST) return refuse(written.error().message());
      return failure(written.error().message());
    }
    return kExitOk;
  }

 private:
  std::string recording_, output_, format_ = "html", from_, to_;
  std::optional<std::size_t> max_points_;
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Command> make_report_command(CLI::App& app, GlobalOptions& /*global*/) {
  return std::make_unique<ReportCommand>(app);
}

}  // namespace dltune::cli
