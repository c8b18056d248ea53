// libFuzzer target: kernel log records as /dev/kmsg gives them (host/parse/kmsg.hpp), the OOM
// killer's line, doctor's classifier of a message (diagnose/kernel_events.hpp) and a syslog
// file's line in both rsyslog formats (diagnose/syslog_files.hpp). The kernel's text is not ours
// to trust: a driver may print anything.
#include <cstddef>
#include <cstdint>

#include "diagnose/kernel_events.hpp"
#include "diagnose/syslog_files.hpp"
#include "fuzz_input.hpp"
#include "host/parse/kmsg.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const dltune::diagnose::XidTable kNoXids{};
  const dltune::fuzz::Input in(data, size);
  switch (in.selector % 4) {
    case 0:
      (void)dltune::host::parse::kmsg_record(in.text);
      break;
    case 1:
      (void)dltune::host::parse::oom_kill(in.text);
      break;
    case 2:
      (void)dltune::diagnose::classify(in.text, kNoXids);
      break;
    case 3:
      (void)dltune::diagnose::parse_syslog_line(in.text, 1'700'000'000);
      break;
  }
  return 0;
}
