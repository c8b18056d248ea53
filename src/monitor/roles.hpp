#pragma once
// What each process is to a training job (monitor::Role), from the tree and the command lines.
// Pure: the collector calls it on what it read; tests call it on processes they describe.
#include <sys/types.h>

#include <string_view>
#include <vector>

#include "monitor/sample.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

// The role of a descendant of the main process: kWorker when its name is "pt_data_worker"
// (PyTorch 2.2+ names DataLoader workers so: torch/utils/data/_utils/worker.py), when it has the
// main process's command line (a fork that did not exec: DataLoader's default start method on
// Linux), or when its command line is that of a multiprocessing spawn or forkserver child;
// otherwise kChild.
[[nodiscard]] Role descendant_role(std::string_view comm, std::string_view cmdline,
                                   std::string_view main_cmdline);

// A launcher whose children are the ranks of one distributed job, each a training process with
// its own DataLoader workers: torchrun, `python -m torch.distributed.run` or `.launch`, `dltune
// run --nproc N`.
[[nodiscard]] bool is_rank_launcher(std::string_view cmdline);

// Sets `role` on each of `procs` (sorted by pid). kTree: `root` is kMain. kCgroup: the member
// whose parent is not in the group is kMain (the lowest pid if several). The others of a tree or
// group by descendant_role; kAll and kNone: kOther. A launcher's children are kRank (their
// descendants named against their own command line), as are, in a group, the main process's
// siblings of its command line that started outside the group.
void assign_roles(std::vector<Process>& procs, Scope::Kind kind, pid_t root);

}  // namespace dltune::monitor
