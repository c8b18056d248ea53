// The exporter's threads and its published exposition (exporter.hpp).
#include "serve/exporter.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/core.h>

#include "audit/check.hpp"
#include "core/clock.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::serve {

Exporter::Exporter(const host::Root& root, ExporterOptions options)
    : root_(root),
      options_(std::move(options)),
      jobs_(root_, options_.cgroups, /*discover=*/true) {}

Exporter::~Exporter() {
  stop();
}

Result<std::unique_ptr<Exporter>> Exporter::open(const host::Root& root, ExporterOptions options) {
  std::unique_ptr<Exporter> e(new Exporter(root, std::move(options)));
  // The node's name as dcgm-exporter labels its series (Hostname): with the DaemonSet on the
  // host's network (deploy/kubernetes) it is the node's, as in a tree given with --root.
  // On Kubernetes the node's name from the downward API (NODE_NAME) wins, as in dcgm-exporter:
  // a node's hostname need not be its name in the cluster.
  if (!e->options_.hostname.empty())
    e->hostname_ = e->options_.hostname;
  else if (auto name = root.read("/proc/sys/kernel/hostname"); name && *name)
    e->hostname_ = std::string(text::trim(**name));
  monitor::SamplerOptions so;
  so.scope.kind = monitor::Scope::Kind::kNone;  // the host and the GPUs; jobs are JobGroups'
  so.gpus = e->options_.gpus;
  so.nvml_library = e->options_.nvml_library;
  so.clock = e->options_.clock;
  // NVML at the sampling interval, and never faster than once a second (a per-process query
  // can take milliseconds on real GPUs).
  so.gpu_interval_ns = std::max<std::int64_t>(e->options_.interval_ns, 1'000'000'000);
  auto sampler = monitor::Sampler::open(e->root_, std::move(so));
  if (!sampler) return tl::unexpected(sampler.error());
  e->sampler_ = std::move(*sampler);
  return e;
}

void Exporter::say(const std::string& key, std::string text) {
  std::lock_guard lock(mu_);
  said_.once(key, std::move(text));
}

std::vector<std::string> Exporter::take_messages() {
  std::lock_guard lock(mu_);
  return said_.take();
}

Snapshot Exporter::snapshot() const {
  Snapshot s;
  s.version = DLTUNE_VERSION;
  s.hostname = hostname_;
  s.sample = has_sample_ ? &sample_ : nullptr;
  s.jobs = job_samples_;
  s.job_members = jobs_.members();
  s.slurm = &jobs_.slurm_jobs();
  s.pods = &jobs_.pods();
  s.gpus = options_.gpus;
  s.host = options_.host;
  s.check = options_.profile ? check_seen_.get() : nullptr;
  s.stats.samples = samples_;
  s.stats.sample_duration_s = sample_duration_s_;
  return s;
}

Result<void> Exporter::sample() {
  const Clock& clock = clock_or_system(options_.clock);
  const auto started = clock.monotonic_ns();
  auto ok = sampler_->sample(sample_);
  for (auto& n : sampler_->take_notices()) say(n, n);
  if (!ok) {
    const auto why = ok.error().message();
    say("sample:" + why, "sampling failed (said once; tried again every interval): " + why);
    std::lock_guard lock(mu_);
    last_error_ = why;
    return ok;
  }
  // The groups' members only when they can own a GPU's memory (dltune_job_gpu_memory_used_bytes).
  bool gpu_processes = false;
  for (const auto& g : sample_.gpus) gpu_processes = gpu_processes || !g.processes.empty();
  jobs_.collect(job_samples_, job_notices_, options_.gpus && gpu_processes);
  for (auto& n : job_notices_.take()) say(n, n);
  has_sample_ = true;
  ++samples_;
  const auto done = clock.monotonic_ns();
  sample_duration_s_ = static_cast<double>(done - started) / 1e9;
  {
    std::lock_guard lock(mu_);
    check_seen_ = check_;
  }
  text_.clear();
  TextSink sink(text_);
  render(snapshot(), sink);
  auto e = std::make_shared<Exposition>();
  e->text = text_;  // one allocation of the exact size; text_ keeps its capacity
  e->sampled_monotonic_ns = sample_.monotonic_ns;
  std::lock_guard lock(mu_);
  current_ = std::move(e);
  last_ok_monotonic_ns_ = done;
  last_error_.reset();
  return {};
}

void Exporter::check() {
  if (!options_.profile) return;
  const auto started = std::chrono::steady_clock::now();
  inventory::CollectOptions co;
  co.nvml_library = options_.nvml_library;
  co.gpus = options_.gpus;
  const auto facts = inventory::collect(root_, co);
  auto report = audit::run_check(facts, root_, *options_.profile, {});
  auto state = std::make_shared<CheckState>();
  state->ran = true;
  {
    std::lock_guard lock(mu_);
    if (check_) {  // a failed run keeps the time of the last one that completed
      state->finished_wall_ns = check_->finished_wall_ns;
      state->duration_s = check_->duration_s;
    }
  }
  if (!report) {
    say("check:" + report.error().message(),
        "the check could not run (said once; tried again every check interval): " +
            report.error().message());
  } else {
    state->ok = true;
    // One series per id, severity (or stakes) and area, its value how many share them.
    const auto tally = [](std::vector<CheckFinding>& into, const audit::Finding& f,
                          audit::Severity severity) {
      const std::string name = audit::severity_name(severity);
      auto same = std::find_if(into.begin(), into.end(), [&](const CheckFinding& x) {
        return x.id == f.id && x.severity == name && x.area == f.area;
      });
      if (same != into.end())
        ++same->count;
      else
        into.push_back({f.id, name, f.area, 1});
    };
    for (const auto& f : report->findings) {
      if (f.applicable && f.unknown) tally(state->unknown, f, f.stakes);
      if (f.applicable && f.severity != audit::Severity::kOk) tally(state->findings, f, f.severity);
    }
    state->counts = {
        static_cast<std::uint64_t>(report->ok), static_cast<std::uint64_t>(report->info),
        static_cast<std::uint64_t>(report->warn), static_cast<std::uint64_t>(report->critical)};
    state->unknown_count = static_cast<std::uint64_t>(report->unknown);
    state->finished_wall_ns = clock_or_system(options_.clock).wall_ns();
    state->duration_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
  std::lock_guard lock(mu_);
  check_ = std::move(state);
}

void Exporter::start() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = false;
  }
  sampling_thread_ = std::thread([this] { sampling_loop(); });
  if (options_.profile) check_thread_ = std::thread([this] { check_loop(); });
}

void Exporter::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (sampling_thread_.joinable()) sampling_thread_.join();
  if (check_thread_.joinable()) check_thread_.join();
}

void Exporter::sampling_loop() {
  const auto interval = std::chrono::nanoseconds(options_.interval_ns);
  auto next = std::chrono::steady_clock::now();
  std::unique_lock lock(stop_mu_);
  while (!stopping_) {
    lock.unlock();
    (void)sample();  // a failure is said once and shows in /healthz
    lock.lock();
    // A fixed rate; a sample that took longer than the interval skips the ticks it missed.
    next += interval;
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval;
    stop_cv_.wait_until(lock, next, [&] { return stopping_; });
  }
}

void Exporter::check_loop() {
  std::unique_lock lock(stop_mu_);
  while (!stopping_) {
    lock.unlock();
    check();
    lock.lock();
    stop_cv_.wait_for(lock, std::chrono::nanoseconds(options_.check_interval_ns),
                      [&] { return stopping_; });
  }
}

std::shared_ptr<const Exposition> Exporter::exposition() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::uint64_t Exporter::count_scrape() {
  std::lock_guard lock(mu_);
  return ++scrapes_;
}

std::string Exporter::count_scrape_text() {
  std::string text;
  TextSink sink(text);
  render_scrapes(count_scrape(), sink);
  return text;
}

Health Exporter::health() const {
  std::lock_guard lock(mu_);
  const double interval_s = static_cast<double>(options_.interval_ns) / 1e9;
  if (!current_) return {false, last_error_ ? "no sample yet: " + *last_error_ : "no sample yet"};
  const double age_s =
      static_cast<double>(clock_or_system(options_.clock).monotonic_ns() - last_ok_monotonic_ns_) /
      1e9;
  if (age_s > 3 * interval_s)
    return {false, fmt::format("the last sample is {:.1f} s old (interval {:g} s){}", age_s,
                               interval_s, last_error_ ? ": " + *last_error_ : "")};
  return {true, "ok"};
}

inventory::Json Exporter::json() const {
  JsonSink sink;
  render(snapshot(), sink);
  std::uint64_t scrapes = 0;
  {
    std::lock_guard lock(mu_);
    scrapes = scrapes_;
  }
  render_scrapes(scrapes, sink);
  return sink.take();
}

}  // namespace dltune::serve
