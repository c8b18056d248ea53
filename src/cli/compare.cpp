// `dltune compare A.db B.db | -a A1.db -a A2.db ... -b B1.db ... | BENCH_DIR`: the comparison of
// `dltune bench` for runs recorded by hand, or a bench directory read again.
#include <sys/stat.h>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "bench/comparison.hpp"
#include "bench/files.hpp"
#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/text.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

class CompareCommand : public Command {
 public:
  explicit CompareCommand(CLI::App& app) : Command("compare") {
    sub_ = options::add_command(app, "compare");
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

  bool selected() const override { return sub_->parsed(); }

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
    std::vector<bench::Run> runs;
    bench::CompareOptions options;
    options.confidence = confidence_ / 100;
    if (paths_.size() == 1 && a_.empty() && b_.empty() && is_directory(paths_[0])) {
      auto d = bench::read_bench_directory(paths_[0]);
      if (!d) return refuse(d.error().message());
      runs = std::move(d->runs);
      options.label_a = d->label_a;
      options.label_b = d->label_b;
      options.paired_by_round = true;
    } else if (paths_.size() == 2 && a_.empty() && b_.empty()) {
      a_.push_back(paths_[0]);
      b_.push_back(paths_[1]);
    } else if (!paths_.empty() || a_.empty() || b_.empty()) {
      return refuse(
          "expected A.db B.db, or -a FILE ... -b FILE ..., or a directory `dltune bench` "
          "wrote");
    }
    if (runs.empty()) {
      auto given = bench::read_given_runs(a_, b_);
      if (!given) return refuse(given.error().message());  // a file given by hand must be a run
      runs = std::move(given->runs);
      options.label_a = given->label_a;
      options.label_b = given->label_b;
    }
    if (!label_a_.empty()) options.label_a = label_a_;
    if (!label_b_.empty()) options.label_b = label_b_;
    auto c = bench::compare_runs(std::move(runs), options);
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
  CLI::App* sub_ = nullptr;
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
