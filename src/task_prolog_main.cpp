// dltune-task-prolog: `dltune slurm task-prolog` as a program of its own, for Slurm's TaskProlog,
// which runs before every task of every job. The same library call; linked with only the
// libraries that call needs, so that it starts in a few milliseconds where the whole dltune
// (every command's libraries) takes tens (bench/README.md).
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>

#include "host/root.hpp"
#include "slurm/task_prolog.hpp"

extern char** environ;

int main() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  const int task_cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const dltune::host::Root root;
  const auto r = dltune::slurm::task_prolog(root, env, task_cpus,
                                            online > 0 ? static_cast<int>(online) : task_cpus);
  std::fputs(dltune::slurm::render(r).c_str(), stdout);
  return 0;  // a TaskProlog that fails would stop the user's task
}
