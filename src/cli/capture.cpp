// `dltune capture`: pack every host file that env read, so that `env --root` on another machine
// reports the same facts.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <cstdlib>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "host/capture.hpp"
#include "inventory/capture_extras.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class CaptureCommand : public Command {
 public:
  explicit CaptureCommand(CLI::App& app) : Command(app, "capture") {
    options::add_value(*sub_, "-o,--output", output_)->required();
    options::add_flag(*sub_, "--force", force_);
    options::add_flag(*sub_, "--json", json_);
  }

  int execute() override {
    const auto target = local_file::output_target(output_, force_);
    if (!target) return refuse("-o: " + target.error().message());
    auto stats = inventory::capture_host(*target, force_, collect_options());
    if (!stats) return failure(stats.error().message());
    // With -o - standard output holds the archive alone.
    FILE* out = *target == "-" ? stderr : stdout;
    if (json_) {
      inventory::Json j{{"output", output_},
                        {"files", stats->files},
                        {"directories", stats->directories},
                        {"links", stats->links},
                        {"bytes", stats->bytes}};
      fmt::print(out, "{}\n", j.dump(2));
    } else {
      fmt::print(out, "wrote {}: {} files ({}), {} links, {} directories\n", output_, stats->files,
                 text::human_bytes(stats->bytes), stats->links, stats->directories);
    }
    return kExitOk;
  }

 private:
  std::string output_;
  bool json_ = false, force_ = false;
};

}  // namespace

std::unique_ptr<Command> make_capture_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CaptureCommand>(app);
}

}  // namespace dltune::cli
