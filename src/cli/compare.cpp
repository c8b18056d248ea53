// `dltune compare A.db B.db | -a A1.db -a A2.db ... -b B1.db ... | BENCH_DIR`: the comparison of
// `dltune bench` for runs recorded by hand, or a bench directory read again.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "bench/comparison.hpp"
#include "bench/files.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class CompareCommand : public Command {
 public:
  explicit CompareCommand(CLI::App& app) : Command(app, "compare") {
    options::add_value(*sub_, "paths", paths_);
    options::add_value(*sub_, "-a", a_);
    options::add_value(*sub_, "-b", b_);
    options::add_value(*sub_, "--label-a", label_a_);
    options::add_value(*sub_, "--label-b", label_b_);
    options::add_number(*sub_, "--confidence", confidence_, 50, 99.9, "P");
    options::add_value(*sub_, "--html", html_);
    options::add_flag(*sub_, "--force", force_);
    options::add_flag(*sub_, "--json", json_);
  }

  int execute() override {
    if (!html_.empty()) {
      std::vector<std::string> inputs = paths_;
      inputs.insert(inputs.end(), a_.begin(), a_.end());
      inputs.insert(inputs.end(), b_.begin(), b_.end());
      if (auto ok = local_file::not_an_input(html_, inputs); !ok)
        return refuse("--html: " + ok.error().message());
      if (auto t = local_file::output_target(html_, force_); !t)
        return refuse("--html: " + t.error().message());
    }
    auto input = bench::read_compare_input(paths_, a_, b_, label_a_, label_b_);
    if (!input) return refuse(input.error().message());
    input->options.confidence = confidence_ / 100;
    auto c = bench::compare_runs(std::move(input->runs), input->options);
    if (!c) return refuse(c.error().message());
    const auto doc = bench::to_json(*c);
    if (json_)
      fmt::print("{}\n", doc.dump(2));
    else
      fmt::print("{}", bench::render_text(*c));
    if (!html_.empty())
      if (auto w = bench::write_compare_html(html_, doc, force_); !w) {
        return failure(w.error().message());
      }
    return c->verdict ? kExitOk : kExitFailure;
  }

 private:
  std::vector<std::string> paths_, a_, b_;
  std::string label_a_, label_b_, html_;
  double confidence_ = 95;
  bool json_ = false, force_ = false;
};

}  // namespace

std::unique_ptr<Command> make_compare_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CompareCommand>(app);
}

}  // namespace dltune::cli
