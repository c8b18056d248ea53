#include "launch/job_interrupts.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/json.hpp"
#include "core/text.hpp"

namespace dltune::launch {

namespace {

// The count of `line` on `cpus`, by the table's columns.
std::uint64_t on_cpus(const host::parse::InterruptTable& t, const host::parse::InterruptLine& line,
                      const std::vector<int>& cpus) {
  std::uint64_t n = 0;
  for (std::size_t c = 0; c < t.cpus.size() && c < line.counts.size(); ++c)
    if (std::binary_search(cpus.begin(), cpus.end(), t.cpus[c])) n += line.counts[c];
  return n;
}

}  // namespace

JobInterrupts interrupts_between(const host::parse::InterruptTable& before,
                                 const host::parse::InterruptTable& after,
                                 const std::vector<int>& cpus) {
  JobInterrupts out;
  out.cpus = cpus;
  std::sort(out.cpus.begin(), out.cpus.end());
  std::map<int, std::uint64_t> was;
  for (const auto& l : before.lines) was[l.irq] = on_cpus(before, l, out.cpus);
  std::vector<IrqSource> sources;
  for (const auto& l : after.lines) {
    const auto now = on_cpus(after, l, out.cpus);
    const auto it = was.find(l.irq);
    const std::uint64_t then = it == was.end() ? 0 : it->second;
    if (now <= then) continue;
    out.count += now - then;
    sources.push_back({l.irq, l.name, now - then});
  }
  std::stable_sort(sources.begin(), sources.end(),
                   [](const IrqSource& a, const IrqSource& b) { return a.count > b.count; });
  if (sources.size() > 3) sources.resize(3);
  out.top = std::move(sources);
  return out;
}

InterruptWatch::InterruptWatch(const host::Root& root, std::vector<int> cpus)
    : root_(root), cpus_(std::move(cpus)), start_(std::chrono::steady_clock::now()) {
  if (cpus_.empty()) return;
  if (const auto text = root_.read("/proc/interrupts", host::parse::kInterruptsMaxBytes);
      text && *text)
    before_ = host::parse::interrupts(**text);
}

std::optional<JobInterrupts> InterruptWatch::finish() const {
  if (!before_) return std::nullopt;
  const auto text = root_.read("/proc/interrupts", host::parse::kInterruptsMaxBytes);
  if (!text || !*text) return std::nullopt;
  auto out = interrupts_between(*before_, host::parse::interrupts(**text), cpus_);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (const auto balancer = host::find_irqbalance(root_)) {
    out.irqbalance_pid = balancer->pid;
    out.irqbalance_environment_read = balancer->environment_read;
    for (const int cpu : out.cpus)
      if (!balancer->banned_cpus.count(cpu)) out.unbanned.push_back(cpu);
  }
  return out;
}

std::string render_text(const JobInterrupts& i) {
  std::string out =
      fmt::format("{} device interrupts on CPUs {}", i.count, text::format_cpu_list(i.cpus));
  if (i.seconds > 0) out += fmt::format(" ({:.3g}/s)", static_cast<double>(i.count) / i.seconds);
  if (!i.top.empty()) {
    std::vector<std::string> from;
    for (const auto& s : i.top)
      from.push_back(fmt::format("IRQ {} {} ({})", s.irq, s.name, s.count));
    out += ", most from " + text::join(from, ", ");
  }
  return out;
}

std::optional<std::string> irqbalance_advice(const JobInterrupts& i) {
  if (!i.irqbalance_pid || i.unbanned.empty()) return std::nullopt;
  const auto cpus = text::format_cpu_list(i.unbanned);
  return fmt::format(
      "irqbalance (pid {}) may place device IRQs on the job's CPUs {}{}: for jobs bound there, "
      "set IRQBALANCE_BANNED_CPULIST={} in /etc/default/irqbalance (irqbalance 1.8 and later; "
      "IRQBALANCE_BANNED_CPUS, a hex mask, before) and restart it",
      *i.irqbalance_pid, cpus,
      i.irqbalance_environment_read ? "" : " (its environment could not be read: run as root)",
      cpus);
}

inventory::Json to_json(const JobInterrupts& i) {
  inventory::Json top = inventory::Json::array();
  for (const auto& s : i.top) top.push_back({{"irq", s.irq}, {"name", s.name}, {"count", s.count}});
  inventory::Json j{{"cpus", text::format_cpu_list(i.cpus)},
                    {"count", i.count},
                    {"seconds", i.seconds},
                    {"top", std::move(top)},
                    {"irqbalance_pid", i.irqbalance_pid ? inventory::Json(*i.irqbalance_pid)
                                                        : inventory::Json(nullptr)},
                    {"irqbalance_unbanned_cpus", text::format_cpu_list(i.unbanned)}};
  if (const auto advice = irqbalance_advice(i)) j["advice"] = *advice;
  return j;
}

}  // namespace dltune::launch
