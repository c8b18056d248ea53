// The recording's size, write cost and memory over a long run (the goal: under 20 MB an hour at
// 1 Hz with a 20-process job tree; RSS flat over 24 hours), fast-forwarded: a day of 1 Hz
// samples of a 20-process job on 2 CPUs, 2 disks and 2 NICs written as fast as SQLite takes
// them. Results go in bench/README.md.
//
// Usage: dltune_record_soak [SAMPLES (86400)] [PATH (/tmp/dltune_record_soak.db)]
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "store/recording.hpp"
#include "unit/store/sample_fields.hpp"

namespace {

long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

double cpu_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dltune;
  const int n = argc > 1 ? std::atoi(argv[1]) : 86'400;
  const std::string path = argc > 2 ? argv[2] : "/tmp/dltune_record_soak.db";
  if (n < 8) return std::fprintf(stderr, "at least 8 samples\n"), 2;

  // What making the samples costs, to take out of the write cost.
  double t = cpu_us();
  std::size_t sink = 0;
  for (int i = 0; i < 1000; ++i) sink += dltune::testing::realistic(i).processes.size();
  const double make_us = (cpu_us() - t) / 1000;

  auto w = store::RecordingWriter::create(path, {}, {.force = true, .batch = 10});
  if (!w) return std::fprintf(stderr, "%s\n", w.error().message().c_str()), 1;
  t = cpu_us();
  for (int i = 0; i < n; ++i) {
    if (auto r = (*w)->append(dltune::testing::realistic(i)); !r)
      return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
    if (i % (n / 8) == 0) std::printf("sample %6d  RSS %6ld KiB\n", i, rss_kib());
  }
  const double append_us = (cpu_us() - t) / n - make_us;
  if (auto r = (*w)->finish(0); !r)
    return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
  std::printf("sample %6d  RSS %6ld KiB (finished)\n", n, rss_kib());

  const auto bytes = std::filesystem::file_size(path);
  const double per_sample = static_cast<double>(bytes) / n;
  std::printf("file: %ju bytes, %.0f bytes/sample, %.2f MB/hour at 1 Hz\n",
              static_cast<std::uintmax_t>(bytes), per_sample, per_sample * 3600 / 1e6);
  std::printf("append: %.1f us CPU/sample (making the sample, %.1f us, taken out)\n", append_us,
              make_us);

  auto rec = store::Recording::open(path);
  if (!rec) return std::fprintf(stderr, "%s\n", rec.error().message().c_str()), 1;
  t = cpu_us();
  for (std::size_t i = 0; i < 1000; ++i) {
    auto s = (*rec)->at(i * 7919 % (*rec)->size());
    if (!s) return std::fprintf(stderr, "%s\n", s.error().message().c_str()), 1;
    sink += s->processes.size();
  }
  std::printf("at(): %.1f us CPU/sample (random order)\n", (cpu_us() - t) / 1000);
  std::filesystem::remove(path);
  return sink == 0 ? 1 : 0;
}
