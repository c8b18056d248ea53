// `dltune compare A.db B.db | -a A1.db -a A2.db ... -b B1.db ... | BENCH_DIR`: the comparison of
// `dltune bench` for runs recorded by hand, or a bench directory read again.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "bench/comparison.hpp"
#include "bench/files.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class CompareCommand : public Command {
 public:
  explicit CompareCommand(CLI::App& app) : Command(app, "compare") {
    options::add_value(*sub_, "paths", c_.paths);
    options::add_value(*sub_, "-a", c_.a);
    options::add_value(*sub_, "-b", c_.b);
    options::add_value(*sub_, "--label-a", c_.label_a);
    options::add_value(*sub_, "--label-b", c_.label_b);
    options::add_number(*sub_, "--confidence", c_.confidence, 50, 99.9, "P");
    options::add_value(*sub_, "--html", c_.html);
    options::add_flag(*sub_, "--force", c_.force);
    options::add_flag(*sub_, "--json", json_);
  }

  int execute() override {
    auto c = bench::compare_choices(c_);
    if (!c) return refuse(c.error().message());
    const auto doc = bench::to_json(*c);
    fmt::print("{}", json_ ? doc.dump(2) + "\n" : bench::render_text(*c));
    if (!c_.html.empty())
      if (auto w = bench::write_compare_html(c_.html, doc, c_.force); !w)
        return failure(w.error().message());
    return c->verdict ? kExitOk : kExitFailure;
  }

 private:
  bench::CompareChoices c_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_compare_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<CompareCommand>(app);
}

}  // namespace dltune::cli
