// libFuzzer target: the /proc and /sys files dltune reads (host/parse/proc.hpp and
// interrupts.hpp, the sampler's monitor/parse_system.hpp and host/parse/process.hpp). A parser may
// refuse any input; it must never crash, hang, leak or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_input.hpp"
#include "host/parse/interrupts.hpp"
#include "host/parse/proc.hpp"
#include "host/parse/process.hpp"
#include "monitor/parse_system.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace parse = dltune::host::parse;
  namespace monitor = dltune::monitor;
  const dltune::fuzz::Input in(data, size);
  const auto t = in.text;
  switch (in.selector % 20) {
    case 0:
      (void)parse::meminfo(t);
      break;
    case 1:
      (void)parse::cmdline(t);
      break;
    case 2:
      (void)parse::boot_time(t);
      break;
    case 3:
      (void)parse::limits(t);
      break;
    case 4:
      (void)parse::mountinfo(t);
      break;
    case 5:
      (void)parse::swaps(t);
      break;
    case 6:
      (void)parse::bracket_choice(t);
      break;
    case 7:
      (void)parse::proc_cgroup(t);
      break;
    case 8:
      (void)parse::cpuinfo(t);
      break;
    case 9: {
      monitor::System s;
      (void)monitor::parse_proc_stat(t, s);
      break;
    }
    case 10: {
      monitor::Memory m;
      (void)monitor::parse_meminfo(t, m);
      break;
    }
    case 11: {
      monitor::VmStat v;
      (void)monitor::parse_vmstat(t, v);
      break;
    }
    case 12: {
      monitor::Pressure p;
      (void)monitor::parse_pressure(t, "cpu.pressure", p);
      break;
    }
    case 13: {
      std::vector<monitor::Disk> d;
      (void)monitor::parse_diskstats(
          t, [](std::string_view n) { return !n.empty() && n[0] != 'l'; }, d);
      break;
    }
    case 14: {
      std::vector<monitor::NetDevice> n;
      (void)monitor::parse_net_dev(t, n);
      break;
    }
    case 15:
      (void)parse::parse_proc_stat(t);
      break;
    case 16:
      (void)parse::parse_proc_schedstat(t);
      break;
    case 17: {
      (void)parse::parse_proc_status_switches(t);
      (void)parse::parse_proc_io(t);
      (void)monitor::parse_number(t, "memory.limit_in_bytes");
      std::uint64_t sum = 0;
      (void)monitor::parse_keyed(t, "memory.stat",
                                 [&](std::string_view, std::uint64_t v) { sum += v; });
      break;
    }
    case 18: {
      std::string out;
      parse::cmdline_text(t, out);
      break;
    }
    case 19:
      (void)parse::interrupts(t);
      break;
  }
  return 0;
}
