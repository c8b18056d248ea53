#include "host/irqbalance.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.hpp"

namespace dltune::host {

namespace {

void add_cpus(std::set<int>& to, const std::optional<std::vector<int>>& cpus) {
  if (cpus) to.insert(cpus->begin(), cpus->end());
}

}  // namespace

std::vector<int> isolated_cpus(const Root& root) {
  std::set<int> out;
  // nohz_full reads "(null)" when there is none: not a list, so nothing.
  for (const char* file : {"/sys/devices/system/cpu/isolated", "/sys/devices/system/cpu/nohz_full"})
    if (const auto raw = root.read(file, 4096); raw && *raw)
      if (const auto cpus = text::parse_cpu_list(text::trim(**raw)))
        out.insert(cpus->begin(), cpus->end());
  return {out.begin(), out.end()};
}

std::optional<Irqbalance> find_irqbalance(const Root& root) {
  std::vector<int> pids;
  if (auto r = root.list_pids("/proc", pids); !r) return std::nullopt;
  for (const int pid : pids) {
    const auto comm = root.read(fmt::format("/proc/{}/comm", pid), 64);
    if (!comm || !*comm || text::trim(**comm) != "irqbalance") continue;
    Irqbalance b;
    b.pid = pid;
    const auto cmdline = root.read(fmt::format("/proc/{}/cmdline", pid), 64 * 1024);
    if (cmdline && *cmdline) {
      std::vector<std::string> args;
      for (const auto a : text::split(**cmdline, '\0')) args.emplace_back(a);
      for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view a = args[i], v;
        if (a.starts_with("--banirq="))
          v = a.substr(9);
        else if ((a == "--banirq" || a == "-i") && i + 1 < args.size())
          v = args[++i];
        else if (a.starts_with("-i") && a.size() > 2)
          v = a.substr(2);
        if (const auto n = text::to_int(v); n && *n >= 0)
          b.banned_irqs.insert(static_cast<int>(*n));
      }
    }
    const auto environ = root.read(fmt::format("/proc/{}/environ", pid), 256 * 1024);
    if (environ && *environ) {
      b.environment_read = true;
      for (const auto var : text::split(**environ, '\0')) {
        if (var.starts_with("IRQBALANCE_BANNED_CPULIST="))
          add_cpus(b.banned_cpus, text::parse_cpu_list(text::trim(var.substr(26))));
        else if (var.starts_with("IRQBALANCE_BANNED_CPUS="))
          add_cpus(b.banned_cpus, text::parse_cpu_mask(text::trim(var.substr(23))));
      }
    }
    for (const int cpu : isolated_cpus(root)) b.banned_cpus.insert(cpu);
    return b;
  }
  return std::nullopt;
}

}  // namespace dltune::host
