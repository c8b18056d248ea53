// Times whole commands from fork to exit, alternated round by round so that a slow moment of
// the machine falls on every command alike (bench/run-startup-bench).
//
//   exec_time ROUNDS -- CMD1 ARGS... -- CMD2 ARGS... [-- ...]
//
// Prints one line per command: its median, minimum and maximum wall time in milliseconds, and
// its command line. The commands' stdout and stderr go to /dev/null; a command that exits
// non-zero (other than 1 and 2, which dltune check uses for findings) stops the benchmark.
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  if (argc < 4 || strcmp(argv[2], "--") != 0) {
    fprintf(stderr, "usage: exec_time ROUNDS -- CMD ARGS... [-- CMD ARGS...]\n");
    return 2;
  }
  const int rounds = atoi(argv[1]);
  if (rounds < 1) {
    fprintf(stderr, "exec_time: ROUNDS '%s': expected a positive number\n", argv[1]);
    return 2;
  }
  char** cmds[64];
  int ncmd = 0;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--") == 0) {
      argv[i] = NULL;
      if (i + 1 < argc && ncmd < 64) cmds[ncmd++] = &argv[i + 1];
    }
  }
  double* t = calloc((size_t)(ncmd * rounds), sizeof(double));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  for (int r = 0; r < rounds; ++r) {
    for (int c = 0; c < ncmd; ++c) {
      struct timespec a, b;
      pid_t pid;
      clock_gettime(CLOCK_MONOTONIC, &a);
      if (posix_spawnp(&pid, cmds[c][0], &fa, NULL, cmds[c], environ) != 0) {
        perror(cmds[c][0]);
        return 1;
      }
      int st = 0;
      waitpid(pid, &st, 0);
      clock_gettime(CLOCK_MONOTONIC, &b);
      if (!WIFEXITED(st) || (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 1 && WEXITSTATUS(st) != 2)) {
        fprintf(stderr, "exec_time: %s failed (status %d)\n", cmds[c][0], st);
        return 1;
      }
      t[c * rounds + r] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    }
  }
  for (int c = 0; c < ncmd; ++c) {
    double* x = &t[c * rounds];
    qsort(x, (size_t)rounds, sizeof(double), cmp);
    const double med = rounds % 2 ? x[rounds / 2] : (x[rounds / 2 - 1] + x[rounds / 2]) / 2;
    printf("%8.2f ms median  %8.2f min  %8.2f max  ", med, x[0], x[rounds - 1]);
    for (char** a = cmds[c]; *a; ++a) printf("%s%s", a == cmds[c] ? "" : " ", *a);
    printf("\n");
  }
  return 0;
}
