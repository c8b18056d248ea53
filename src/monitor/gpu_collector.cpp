// GpuCollector: NVML (and AMD's GPUs from amdgpu's sysfs) read on a thread of its own, at its own
// rate (a per-process NVML query can take milliseconds on real GPUs; it must never sit on the
// sampler's hot path).
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "gpu/amdgpu_sysfs.hpp"
#include "gpu/nvml_library.hpp"
#include "gpu/nvml_sampler.hpp"
#include "monitor/sampler.hpp"

namespace dltune::monitor {

struct GpuCollector::State {
  host::Root root;
  std::string library;
  std::int64_t interval_ns = 1'000'000'000;
  std::mutex mu;
  std::condition_variable wake, read;
  bool stop = false;
  bool ended = false;               // the thread has nothing more to read (no NVML), under mu
  std::uint64_t readings = 0;       // finished, under mu
  std::vector<Gpu> latest;          // under mu
  std::vector<std::string> said;    // notices for collect to pass on, under mu
  std::vector<gpu::GpuSlot> slots;  // each GPU on PCI at the latest reading, under mu
  std::thread thread;

  void run() {
    // AMD's GPUs are found once, as NVML's are when it initialises; so are the GPUs on PCI.
    const auto pci = gpu::find_pci_gpus(root);
    const auto amd = gpu::amdgpu::find_cards(root);
    auto reader = gpu::NvmlSampler::open(library, gpu::nvml_libraries_in(root));
    if (!reader && amd.empty()) {
      {
        std::lock_guard lock(mu);
        // Said only where an NVIDIA GPU is on PCI: on a host without one, no NVML is no news.
        if (std::any_of(pci.begin(), pci.end(),
                        [](const gpu::PciGpuSlot& p) { return p.vendor == "nvidia"; }))
          said.push_back("no GPU figures: " + reader.error().message());
        gpu::match_slots(pci, {}, slots);  // every one down, for good
        ended = true;
      }
      read.notify_all();
      return;  // nothing to read, ever: the thread ends
    }
    std::vector<Gpu> reading;
    std::vector<gpu::GpuSlot> reading_slots;
    std::set<std::string> failed, told;
    std::unique_lock lock(mu, std::defer_lock);
    for (;;) {
      // Outside the lock: collect never waits for NVML or sysfs.
      if (reader)
        reader->read(reading, failed);
      else
        reading.clear();
      // AMD's GPUs are numbered after NVIDIA's (a host with both is rare).
      if (!amd.empty())
        gpu::amdgpu::read(root, amd, static_cast<unsigned>(reading.size()), reading);
      gpu::match_slots(pci, reading, reading_slots);  // once a reading, not at every collect
      lock.lock();
      latest.swap(reading);
      slots.swap(reading_slots);
      for (const auto& f : failed)
        if (told.insert(f).second) said.push_back("NVML call failed (said once): " + f);
      failed.clear();
      ++readings;
      read.notify_all();
      if (wake.wait_for(lock, std::chrono::nanoseconds(interval_ns), [&] { return stop; })) break;
      lock.unlock();
    }
    // `reader` is destroyed here, on its own thread: nvmlShutdown and dlclose.
  }
};

GpuCollector::GpuCollector(const host::Root& root, std::string nvml_library,
                           std::int64_t interval_ns)
    : state_(std::make_unique<State>()) {
  state_->root = root;
  state_->library = std::move(nvml_library);
  state_->interval_ns = std::max<std::int64_t>(interval_ns, 10'000'000);
  // The first reading starts now, so a sample taken a little later usually has it.
  // The thread starts with every signal blocked: SIGINT and SIGTERM are for the command's
  // thread (top's handler wakes its getch, record's sigtimedwait), never for NVML's.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  state_->thread = std::thread([s = state_.get()] { s->run(); });
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

GpuCollector::~GpuCollector() {
  {
    std::lock_guard lock(state_->mu);
    state_->stop = true;
  }
  state_->wake.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

void GpuCollector::wait_for_readings(std::uint64_t n) {
  std::unique_lock lock(state_->mu);
  state_->read.wait(lock, [&] { return state_->ended || state_->readings >= n; });
}

void GpuCollector::collect(std::vector<Gpu>& out, std::vector<gpu::GpuSlot>& slots,
                           Notices& notices) {
  std::lock_guard lock(state_->mu);
  for (const auto& s : state_->said) notices.once(s, s);
  state_->said.clear();
  out = state_->latest;  // element-wise: the strings and vectors of `out` are reused
  slots = state_->slots;
}

}  // namespace dltune::monitor
