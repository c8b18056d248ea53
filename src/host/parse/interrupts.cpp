#include "host/parse/interrupts.hpp"

#include <optional>

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::host::parse {

namespace {

// "CPU12" -> 12.
std::optional<int> cpu_column(std::string_view word) {
  if (!word.starts_with("CPU")) return std::nullopt;
  const auto n = text::to_int(word.substr(3));
  if (!n || *n < 0 || *n > text::kMaxListId) return std::nullopt;
  return static_cast<int>(*n);
}

}  // namespace

InterruptTable interrupts(std::string_view text) {
  InterruptTable out;
  int n = 0;
  bool header = false;
  for (const auto raw : text::lines(text)) {
    ++n;
    const auto f = text::fields(raw);
    if (f.empty()) continue;
    if (!header) {
      for (const auto w : f) {
        const auto cpu = cpu_column(w);
        if (!cpu) break;
        out.cpus.push_back(*cpu);
      }
      header = !out.cpus.empty() && out.cpus.size() == f.size();
      if (!header) {
        out.errors.push_back(fmt::format("line {}: expected the header 'CPU0 CPU1 ...'", n));
        out.cpus.clear();
        return out;
      }
      continue;
    }
    // "38:" -> 38; "NMI:", "LOC:" and the other per-CPU counters are not IRQs.
    if (!f[0].ends_with(':')) continue;
    const auto irq = text::to_int(f[0].substr(0, f[0].size() - 1));
    if (!irq) continue;
    if (*irq < 0 || *irq > text::kMaxListId || f.size() < out.cpus.size() + 1) {
      out.errors.push_back(
          fmt::format("line {}: expected 'IRQ: {} counts ...'", n, out.cpus.size()));
      continue;
    }
    InterruptLine l;
    l.irq = static_cast<int>(*irq);
    bool ok = true;
    for (std::size_t i = 0; i < out.cpus.size() && ok; ++i) {
      const auto c = text::to_uint(f[i + 1]);
      ok = c.has_value();
      if (ok) l.counts.push_back(*c);
    }
    if (!ok) {
      out.errors.push_back(
          fmt::format("line {}: IRQ {}: a count per CPU is not a number", n, l.irq));
      continue;
    }
    const std::size_t rest = out.cpus.size() + 1;
    if (f.size() > rest) l.chip = std::string(f[rest]);
    for (std::size_t i = rest + 1; i < f.size(); ++i)
      l.name += (l.name.empty() ? "" : " ") + std::string(f[i]);
    out.lines.push_back(std::move(l));
  }
  if (!header) out.errors.push_back("no header 'CPU0 CPU1 ...'");
  return out;
}

}  // namespace dltune::host::parse
