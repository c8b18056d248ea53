// dltune-task-prolog: `dltune slurm task-prolog` as a program of its own, for Slurm's TaskProlog,
// which runs before every task of every job. The same library call; linked with only the
// libraries that call needs, so that it starts in a few milliseconds where the whole dltune
// (every command's libraries) takes tens (bench/README.md).
#include <cstdio>

#include "host/root.hpp"
#include "slurm/task_prolog.hpp"

int main() {
  const dltune::host::Root root;
  std::fputs(dltune::slurm::render(dltune::slurm::task_prolog_here(root)).c_str(), stdout);
  return 0;  // a TaskProlog that fails would stop the user's task
}
