#pragma once
// Samples with counters that grow by known amounts each second, so that a report's series can be
// checked against numbers worked out by hand (the comments in report_samples.cpp give them), and
// a recording of them in a temporary directory.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "monitor/sample.hpp"
#include "store/recording.hpp"

namespace dltune::testing {

inline constexpr std::int64_t kT0 = 1'764'500'000'000'000'000;  // wall time of sample 0, ns

struct KnownOptions {
  bool pressure = false;  // /proc/pressure absent unless asked for
  bool gpu = true;
  bool job = true;
  bool cgroup = true;
  int host_oom_at = 3;    // the vmstat oom_kill counter steps up at this second
  int cgroup_oom_at = 4;  // and the cgroup's memory.events oom_kill at this one
};

// The sample at second t (1 Hz).
//   host CPU (2 CPUs, 200 ticks a second): user 30 %, system 15 %, iowait 5 %, steal 0 %
//   memory: used 2 GiB, cache 1.1 GiB (cached 1 GiB + buffers 100 MiB), available 6 GiB
//   swap in 25 pages/s = 102400 B/s, swap out 0, major faults 7/s
//   disk vda reads 1 MiB/s (2048 sectors), writes 0; eth0 receives 1000 B/s, sends 500 B/s
//   main process 50 % of one CPU, 2 workers 20 % each (40 % together), RSS 1 GiB + 2 x 256 MiB
//   cgroup 50 % of one CPU, quota 2 CPUs (200 %), memory 1 GiB of a 2 GiB limit
//   GPU 0: util 70 %, power 250.5 W, 60 C, memory 10 of 80 GiB; no SM clock (null)
monitor::Sample known(int t, const KnownOptions& options = {});

// A finished recording of known(0..n-1) at `path`, with the given info and documents.
void write_recording(const std::string& path, int n, const KnownOptions& options = {},
                     store::RecordingInfo info = {},
                     const std::vector<std::pair<std::string, nlohmann::json>>& documents = {});

// A fresh directory under the test's temporary directory, removed at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace dltune::testing
