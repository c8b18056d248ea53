// `dltune env`: the inventory of a host.
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.hpp"
#include "cli/commands.hpp"
#include "host/root.hpp"
#include "inventory/host_facts.hpp"
#include "options/options.hpp"

namespace dltune::cli {

namespace {

class EnvCommand : public Command {
 public:
  explicit EnvCommand(CLI::App& app) {
    sub_ = options::add_command(
        app, "env", "Inventory of the host: OS, CPUs, memory, storage, GPUs, CUDA, Python",
        "Inventory of a training host, from its own files, in milliseconds and without running\n"
        "any program: OS and kernel (command line, boot time, virtualisation, container, cgroup\n"
        "version); CPUs and NUMA nodes with distances; memory, swap, huge pages, THP, /dev/shm\n"
        "and the process limits jobs inherit; file systems and block devices; network\n"
        "interfaces, InfiniBand/RoCE and TCP buffers; GPUs from PCI sysfs and NVML (link, NUMA\n"
        "node, persistence, ECC, clocks, NVLink), NVIDIA kernel module and user library\n"
        "versions; CUDA toolkits, cuDNN, NCCL and BLAS; Python interpreters with their torch.\n\n"
        "A fact that is absent is left out; a fact whose file cannot be read or parsed is listed\n"
        "as unknown with the file and the reason, and every other fact is still reported.\n\n"
        "Environment: DLTUNE_NVML_LIBRARY names the libnvidia-ml.so to load (default: the\n"
        "driver's libnvidia-ml.so.1).\n\n"
        "Exit status: 0 the inventory was printed, 2 bad input (a bad --root).");
    sub_->add_option("--root", root_,
                     "Read the host tree at DIR (a capture unpacked by `tar xzf`, or a mounted "
                     "disk) instead of this host")
        ->type_name("DIR");
    sub_->add_flag("--json", json_, "Print JSON (schema: docs/json.md, \"dltune.env/1\")");
  }

  bool selected() const override { return sub_->parsed(); }

  int execute() override {
    const auto opened = open_root("env", root_);
    if (!opened) return kExitBadInput;
    const host::Root& root = *opened;
    const auto facts = inventory::collect(root, collect_options());
    if (json_) {
      fmt::print("{}\n", inventory::to_json(facts).dump(2));
    } else {
      fmt::print("{}", inventory::render_text(facts));
    }
    return kExitOk;
  }

 private:
  CLI::App* sub_ = nullptr;
  std::optional<std::string> root_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_env_command(CLI::App& app, GlobalOptions&) {
  return std::make_unique<EnvCommand>(app);
}

}  // namespace dltune::cli
