// `dltune run [OPTIONS] -- COMMAND [ARGS...]`: a training job in its own cgroup, on the CPUs
// and memory nearest its GPUs, as the invoking user, with a summary at exit.
#include <algorithm>
#include <cstdio>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "core/text.hpp"
#include "launch/run_job.hpp"
#include "options/options.hpp"
#include "record/run_invocation.hpp"

namespace dltune::cli {

namespace {

class RunCommand : public Command {
 public:
  RunCommand(CLI::App& app, GlobalOptions& global) : Command(app, "run"), global_(global) {
    auto& o = choices_.options;
    options::add_value(*sub_, "--cpu-quota", o.cpu_quota);
    options::add_value(*sub_, "--cpu-weight", o.cpu_weight);
    options::add_value(*sub_, "--memory", o.memory);
    options::add_value(*sub_, "--memory-swap", o.memory_swap);
    options::add_value(*sub_, "--cpus", o.cpus);
    options::add_value(*sub_, "--numa", o.numa);
    options::add_value(*sub_, "--gpus", o.gpus);
    options::add_value(*sub_, "--io-weight", o.io_weight);
    options::add_value(*sub_, "--name", o.name);
    options::add_value(*sub_, "--env", o.env);
    options::add_integer(*sub_, "--nproc", o.nproc, 1, 4096);
    options::add_integer(*sub_, "--workers", o.workers, 0, 1024);
    options::add_value(*sub_, "--allocator", o.allocator);
    options::add_value(*sub_, "-p,--profile", choices_.profile);
    options::add_flag(*sub_, "--as-root", choices_.as_root);
    options::add_value(*sub_, "--rate-regex", choices_.rate_regex);
    options::add_flag(*sub_, "--watch-stdout", choices_.watch_stdout);
    options::add_value(*sub_, "--json", choices_.json_path);
    options::add_flag(*sub_, "-q,--quiet", choices_.quiet);
    options::add_flag(*sub_, "--force", choices_.force);
    options::add_value(*sub_, "--record", choices_.record);
    options::add_duration(*sub_, "--record-interval", choices_.record_interval_ns, 10'000'000,
                          3'600'000'000'000);
    sub_->prefix_command();
    sub_->footer("COMMAND and its arguments come after -- (or after the last option).");
  }

  int execute() override {
    auto invocation = this->invocation();
    if (!invocation) return refuse(invocation.error().message());
    return run_and_report(std::move(*invocation), "dltune run");
  }

  // The options as a checked request; an error names the option.
  Result<record::RunInvocation> invocation() {
    auto command = options::job_command(sub_->remaining(), global_.after_dashdash, "run");
    if (!command) return tl::unexpected(command.error());
    return record::make_invocation(
        choices_, std::move(*command), host::Root(),
        {process_environment(), collect_options(),
         [](const std::string& n) { fmt::print(stderr, "dltune run: {}\n", n); }});
  }

 private:
  GlobalOptions& global_;
  record::RunChoices choices_;
};

}  // namespace

std::unique_ptr<Command> make_run_command(CLI::App& app, GlobalOptions& global) {
  return std::make_unique<RunCommand>(app, global);
}

Result<record::RunInvocation> parse_run_options(const std::vector<std::string>& options,
                                                const std::vector<std::string>& command) {
  CLI::App app{"dltune"};
  GlobalOptions global;
  global.after_dashdash = command;
  RunCommand run(app, global);
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), options.begin(), options.end());
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse order
  try {
    app.parse(args);
  } catch (const CLI::Success&) {  // --help or --version among them: no run to make
    return fail(fmt::format("run options {}: `dltune run --help` lists run's options",
                            text::join(options, " ")));
  } catch (const CLI::ParseError& e) {
    return fail(fmt::format("run options {}: {}", text::join(options, " "), e.what()));
  }
  return run.invocation();
}

int run_and_report(record::RunInvocation invocation, const std::string& who) {
  auto summary = record::run_with_facts(std::move(invocation.request), invocation.recording,
                                        collect_options());
  if (!summary) {
    const auto& f = summary.error();
    fmt::print(stderr, "{}: {}{}\n", who, f.error.message(),
               f.stage == launch::RunFailure::Stage::kSetUp ? "; nothing was started" : "");
    return f.stage == launch::RunFailure::Stage::kSetUp ? kExitFailure : kExitBadInput;
  }
  if (!invocation.quiet) fmt::print(stderr, "\n{}", launch::render_text(*summary));
  if (auto w = record::write_summary(invocation, *summary); !w)
    fmt::print(stderr, "{}: {}\n", who, w.error().message());
  return summary->result.exit_code;
}

}  // namespace dltune::cli
