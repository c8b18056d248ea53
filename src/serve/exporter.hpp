#pragma once
// The exporter's state: a thread samples the host every interval, renders the whole
// exposition once per sample and publishes it as an immutable shared text; another thread runs
// the check at start and every check interval. A scrape copies a pointer under a mutex and writes
// the bytes: it never waits for NVML, for a sample or for the check.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/json_fwd.hpp"
#include "host/root.hpp"
#include "monitor/sampler.hpp"
#include "serve/exposition.hpp"
#include "serve/job_groups.hpp"
#include "serve/metrics_source.hpp"
#include "settings/profile.hpp"

namespace dltune::serve {

struct ExporterOptions {
  std::int64_t interval_ns = 5'000'000'000;
  bool gpus = true;
  // --no-host-metrics: only the host families node_exporter lacks (exposition.hpp).
  HostFamilies host = HostFamilies::kAll;
  std::string nvml_library;  // DLTUNE_NVML_LIBRARY, or empty for the default names
  std::string hostname;      // the Hostname label (NODE_NAME on Kubernetes); empty: the host's name
  std::vector<std::string> cgroups;          // --cgroup: exported besides those `run` made
  std::optional<settings::Profile> profile;  // the check's; none: no check
  std::int64_t check_interval_ns = 300'000'000'000;
  // The clock of the samples and of their age (health); null: the machine's clocks.
  const Clock* clock = nullptr;
};

// What a scrape serves (Exposition, metrics_source.hpp) is the text of every family but
// dltune_scrapes_total, which count_scrape_text renders per scrape.
class Exporter final : public MetricsSource {
 public:
  [[nodiscard]] static Result<std::unique_ptr<Exporter>> open(const host::Root& root,
                                                              ExporterOptions options);
  ~Exporter() override;  // stops the threads
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  // One sample, rendered and published. Called by the sampling thread, or directly (--once)
  // when the threads are not running.
  [[nodiscard]] Result<void> sample();
  // One run of the check (nothing without a profile).
  void check();
  // The sampling thread and the check thread (which runs at once, then every check interval).
  // Signals: the threads keep the caller's signal mask.
  void start();
  void stop();

  // The latest exposition; null before the first sample.
  [[nodiscard]] std::shared_ptr<const Exposition> exposition() const override;
  // Counts a scrape; returns the count with it.
  std::uint64_t count_scrape();
  // Counts a scrape and renders dltune_scrapes_total with the count.
  [[nodiscard]] std::string count_scrape_text() override;
  // Healthy when the last sample is younger than three intervals.
  [[nodiscard]] Health health() const override;
  // The latest sample's families as JSON (docs/json.md "dltune.serve/1"). Only while the
  // threads are not running (--once).
  [[nodiscard]] inventory::Json json() const;
  // What happened that the user should hear about once (sources switched off, a check that
  // failed, a sample that failed); the command prints them.
  [[nodiscard]] std::vector<std::string> take_messages();

 private:
  Exporter(const host::Root& root, ExporterOptions options);
  void say(const std::string& key, std::string text);
  [[nodiscard]] Snapshot snapshot() const;
  void sampling_loop();
  void check_loop();

  const host::Root root_;
  const ExporterOptions options_;
  std::unique_ptr<monitor::Sampler> sampler_;
  JobGroups jobs_;
  std::string hostname_;  // the host's (/proc/sys/kernel/hostname): dcgm-exporter's Hostname

  // The sampling side's own (one thread, or the caller of sample()).
  monitor::Sample sample_;
  bool has_sample_ = false;
  std::vector<monitor::Cgroup> job_samples_;
  monitor::Notices job_notices_;
  std::string text_;  // rendered here, then copied into the published Exposition
  std::uint64_t samples_ = 0;
  double sample_duration_s_ = 0;
  std::shared_ptr<const CheckState> check_seen_;  // the check state the text was rendered with

  mutable std::mutex mu_;  // guards what follows
  std::shared_ptr<const Exposition> current_;
  std::shared_ptr<const CheckState> check_;
  std::int64_t last_ok_monotonic_ns_ = 0;
  std::optional<std::string> last_error_;
  std::uint64_t scrapes_ = 0;
  monitor::Notices said_;  // each message once

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread sampling_thread_, check_thread_;
};

}  // namespace dltune::serve
