// slurm/task_prolog: what a task is given, from its environment and its CPUs (this host's
// libraries for the allocators). The real TaskProlog under slurmstepd is in
// tests/integration/slurm_live_test.cpp.
#include "slurm/task_prolog.hpp"
#include "core/text.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace task_prolog_test {

using dltune::slurm::render;
using dltune::slurm::task_prolog;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

namespace {
const dltune::host::Root kHost;
}

TEST(TaskProlog, ABoundTaskGetsThreadsForItsCpusLessItsWorkersAndTheTunedAllocator) {
  const auto r = task_prolog(kHost, {{"DLTUNE_WORKERS", "2"}, {"PATH", "/usr/bin"}}, 6, 64);
  EXPECT_FALSE(r.opted_out);
  EXPECT_THAT(r.exports, Contains(Pair("OMP_NUM_THREADS", "4")));
  EXPECT_THAT(r.exports, Contains(Pair("MKL_NUM_THREADS", "4")));
  EXPECT_THAT(r.exports, Contains(Pair("MALLOC_MMAP_THRESHOLD_", "33554432")));
  // Only new variables: never one the task has (PATH, DLTUNE_WORKERS).
  for (const auto& [k, v] : r.exports) EXPECT_NE(k, "PATH");
  const auto text = render(r);
  EXPECT_THAT(text, HasSubstr("export OMP_NUM_THREADS=4\n"));
  EXPECT_THAT(text, HasSubstr("# dltune: threads: OMP_NUM_THREADS=4 (6 CPU(s) - 2 workers)"));
  // Exports first, then the notes, each on a line of its own.
  EXPECT_LT(text.rfind("export "), text.find("# dltune: "));
}

TEST(TaskProlog, WhatTheUserSetIsKeptAndAnOptOutGivesNothing) {
  const auto kept = task_prolog(kHost, {{"OMP_NUM_THREADS", "8"}, {"MALLOC_ARENA_MAX", "2"}}, 2, 4);
  EXPECT_THAT(kept.exports, Contains(Pair("MKL_NUM_THREADS", "2")));
  for (const auto& [k, v] : kept.exports) {
    EXPECT_NE(k, "OMP_NUM_THREADS");
    EXPECT_EQ(k.rfind("MALLOC_", 0), std::string::npos) << k;  // the user tunes malloc already
  }
  EXPECT_THAT(render(kept), HasSubstr("kept your OMP_NUM_THREADS=8"));
  for (const char* off : {"off", "OFF", "0", "no", "false"}) {
    const auto r = task_prolog(kHost, {{"DLTUNE_TASK_PROLOG", off}}, 1, 4);
    EXPECT_TRUE(r.opted_out) << off;
    EXPECT_TRUE(r.exports.empty()) << off;
  }
}

TEST(TaskProlog, AWholeMachineTaskKeepsTorchsThreadsAndBadValuesAreIgnoredWithANote) {
  const auto whole = task_prolog(kHost, {}, 4, 4);
  for (const auto& [k, v] : whole.exports) EXPECT_NE(k, "OMP_NUM_THREADS");
  EXPECT_THAT(render(whole), HasSubstr("DLTUNE_WORKERS=N"));
  const auto bad =
      task_prolog(kHost, {{"DLTUNE_WORKERS", "many"}, {"DLTUNE_ALLOCATOR", "fast"}}, 1, 4);
  EXPECT_THAT(render(bad), HasSubstr("DLTUNE_WORKERS=many ignored"));
  EXPECT_THAT(render(bad), HasSubstr("DLTUNE_ALLOCATOR=fast ignored"));
  EXPECT_THAT(bad.exports, Contains(Pair("OMP_NUM_THREADS", "1")));
  // More workers than CPUs still leaves one thread.
  EXPECT_THAT(task_prolog(kHost, {{"DLTUNE_WORKERS", "9"}}, 2, 4).exports,
              Contains(Pair("OMP_NUM_THREADS", "1")));
  EXPECT_THAT(task_prolog(kHost, {{"DLTUNE_ALLOCATOR", "default"}}, 1, 4).exports,
              Not(Contains(Pair("MALLOC_MMAP_THRESHOLD_", "33554432"))));
}

// slurmstepd applies every "export" line the TaskProlog prints: a task's own value echoed in a
// note must not make a line of its own.
TEST(TaskProlog, ATasksValueCannotAddALineForSlurmstepd) {
  const auto hostile =
      task_prolog(kHost, {{"DLTUNE_WORKERS", "2\nexport LD_PRELOAD=/tmp/x.so\r\x1b[2J"}}, 1, 4);
  const auto out = render(hostile);
  for (const auto line : dltune::text::lines(out))
    EXPECT_TRUE(line.starts_with("export ") || line.starts_with("# dltune: ")) << line;
  EXPECT_THAT(out, Not(HasSubstr("\nexport LD_PRELOAD")));
  EXPECT_THAT(out, HasSubstr("DLTUNE_WORKERS=2?export LD_PRELOAD=/tmp/x.so??[2J ignored"));
  dltune::slurm::TaskPrologResult planted;
  planted.exports.emplace_back("A", "1\nexport B=2");
  EXPECT_EQ(render(planted), "# dltune: A not set: its value holds control characters\n");
}

}  // namespace task_prolog_test
