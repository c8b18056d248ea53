// SamplingFlags (cli/sampling_options.hpp).
#include "cli/sampling_options.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "core/text.hpp"
#include "options/options.hpp"

namespace dltune::cli {

void SamplingFlags::add_to(CLI::App& app) {
  options::add_integer(app, "--pid", pid, 1, options::kMaxPid, "PID");
  options::add_value(app, "--cgroup", cgroup);
  options::add_duration(app, "--interval", interval_ns, 10'000'000, 3'600'000'000'000);
  options::add_flag(app, "--no-gpus", no_gpus);
}

Result<monitor::Scope> SamplingFlags::scope(monitor::Scope::Kind otherwise) const {
  monitor::Scope s;
  if (pid > 0 && !cgroup.empty())
    return fail("give one of --pid and --cgroup, not both", "--pid/--cgroup");
  if (pid > 0) {
    if (::kill(pid, 0) != 0 && errno == ESRCH)
      return fail("no such process", fmt::format("--pid {}", pid));
    s.kind = monitor::Scope::Kind::kTree;
    s.pid = pid;
    return s;
  }
  if (!cgroup.empty()) {
    if (cgroup[0] != '/' || cgroup.find("..") != std::string::npos)
      return fail("expected an absolute cgroup path as /proc/PID/cgroup shows it (/dltune/run-1)",
                  "--cgroup " + cgroup);
    // Found now, before anything is written or shown.
    if (auto c = monitor::CgroupCollector::open(host::Root(), cgroup); !c)
      return fail("no such cgroup in any mounted hierarchy", "--cgroup " + cgroup);
    s.kind = monitor::Scope::Kind::kCgroup;
    s.cgroup = cgroup;
    return s;
  }
  s.kind = otherwise;
  return s;
}

monitor::SamplerOptions SamplingFlags::sampler_options(const monitor::Scope& scope,
                                                       std::int64_t interval_ns) const {
  return cli::sampler_options(scope, interval_ns, !no_gpus);
}

monitor::SamplerOptions sampler_options(const monitor::Scope& scope, std::int64_t interval_ns,
                                        bool gpus) {
  monitor::SamplerOptions o;
  o.scope = scope;
  o.gpus = gpus;
  if (const char* lib = std::getenv("DLTUNE_NVML_LIBRARY"); lib != nullptr) o.nvml_library = lib;
  // NVML is the expensive source (a per-process query can take milliseconds): never faster
  // than once a second, or the interval when that is longer.
  o.gpu_interval_ns = std::max<std::int64_t>(interval_ns, 1'000'000'000);
  return o;
}

void raise_open_file_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
}

std::string describe_scope(const monitor::Scope& scope) {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  switch (scope.kind) {
    case monitor::Scope::Kind::kTree:
      return fmt::format("{}  pid {} and its tree", host, scope.pid);
    case monitor::Scope::Kind::kCgroup:
      return fmt::format("{}  cgroup {}", host, scope.cgroup);
    case monitor::Scope::Kind::kAll:
      return fmt::format("{}  all processes", host);
    case monitor::Scope::Kind::kNone:
      break;
  }
  return fmt::format("{}  host", host);
}

store::JobRecording job_recording(const std::string& path, bool force, std::int64_t interval_ns,
                                  bool gpus, bool quiet, const std::string& who) {
  store::JobRecording recording;
  recording.setup.path = path;
  recording.setup.force = force;
  recording.setup.interval_ns = interval_ns;
  recording.setup.collect = collect_options();
  recording.setup.notice = [who](const std::string& n) { fmt::print(stderr, "{}: {}\n", who, n); };
  recording.sampler = sampler_options({}, interval_ns, gpus);
  recording.quiet = quiet;
  return recording;
}

}  // namespace dltune::cli
