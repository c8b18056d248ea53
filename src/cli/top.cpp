// `dltune top`: the live view of the host and a job.
#include <fmt/format.h>
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
  TopCommand(CLI::App& app, GlobalOptions&) {
    sub_ = options::add_command(
        app, "top", "Live view of the host and a training job",
        "A live terminal view: CPUs, memory and swap, pressure (PSI), disks, network, GPUs, the\n"
        "job's cgroup (limits, throttling, its own PSI), and processes: the job's tree with its\n"
        "main process and DataLoader workers marked (--pid, --cgroup), or every process.\n"
        "Per process: state of its main thread, CPU%, system CPU%, run-queue wait (RUNQ%: time\n"
        "waiting for a CPU, from /proc/PID/schedstat), RSS, major faults, I/O.\n\n"
        "Keys: q quit, space pause, sort by c CPU, m memory, p pid, r run-queue wait, i I/O,\n"
        "t the job's tree. The terminal is restored on exit, ^C and SIGTERM.\n"
        "--once prints one view as plain text (two samples one interval apart) and exits: for\n"
        "scripts; so does top when its output is not a terminal (a pipe or a file).\n\n"
        "Exit status: 0, 1 sampling failed, 2 bad input (a PID that is not running, a cgroup\n"
        "that is not there).");
    flags_.add_to(*sub_, "Refresh interval (default 1s)");
    sub_->add_flag("--once", once_, "Print one view as text and exit");
    options::add_choice(*sub_, "--sort", sort_, tui::sort_names(),
                        "The process list's order (default: tree with --pid/--cgroup, cpu "
                        "otherwise)");
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    auto scope = flags_.scope(monitor::Scope::Kind::kAll);
    if (!scope) return refuse(scope.error().message());
    tui::TopSettings s;
    s.interval_ns = flags_.interval_ns;
    s.once = once_;
    s.title = describe_scope(*scope);
    s.sort = scope->kind == monitor::Scope::Kind::kAll ? monitor::TopSort::kCpu
                                                       : monitor::TopSort::kTree;
    if (!sort_.empty()) s.sort = *tui::parse_sort(sort_);
    raise_open_file_limit();
    host::Root root;
    auto sampler = monitor::Sampler::open(root, flags_.sampler_options(*scope, flags_.interval_ns));
    if (!sampler) return refuse(sampler.error().message());
    return top_exit_status(tui::top_live(**sampler, s), "dltune top");
  }

 private:
  static int refuse(const std::string& why) {
    fmt::print(stderr, "dltune top: {}\n", why);
    return kExitBadInput;
  }
  CLI::App* sub_ = nullptr;
  SamplingFlags flags_;
  bool once_ = false;
  std::string sort_;
};

}  // namespace

std::unique_ptr<Command> make_top_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<TopCommand>(app, global);
}

}  // namespace dltune::cli
