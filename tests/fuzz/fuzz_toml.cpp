// libFuzzer target: the TOML dltune reads: profiles (a user's file, /etc/dltune/profiles),
// values in them, hardware baselines (read back as TOML again), and the knowledge files (Xid
// meanings, CUDA driver minimums). toml++ parses; what is fuzzed here is dltune's reading of
// whatever toml++ accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "audit/baseline.hpp"
#include "audit/cuda_driver_table.hpp"
#include "core/json.hpp"
#include "diagnose/kernel_events.hpp"
#include "fuzz_input.hpp"
#include "settings/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const dltune::fuzz::Input in(data, size);
  const auto any_key = [](const std::string&) -> dltune::Result<void> { return {}; };
  switch (in.selector % 6) {
    case 0:
      (void)dltune::settings::parse_profile(in.text, "fuzz.toml", any_key);
      break;
    case 1:
      if (auto e = dltune::settings::parse_expected(in.text)) {
        (void)e->matches(in.text);
        (void)e->text();
      }
      break;
    case 2:
      (void)dltune::diagnose::parse_xid_table(in.text, "fuzz.toml");
      break;
    case 3:
      (void)dltune::audit::parse_cuda_driver_table(in.text);
      break;
    case 4: {
      const auto [a, b] = in.two();
      (void)dltune::audit::parse_cuda_version(a);
      (void)dltune::audit::compare_driver_versions(a, b);
      break;
    }
    case 5:
      // What parses writes out again as a file that parses to the same.
      if (const auto b = dltune::audit::parse_baseline(in.text, "fuzz.toml")) {
        const auto again =
            dltune::audit::parse_baseline(dltune::audit::to_toml(*b, "today"), "again.toml");
        if (!again || again->gpus.has_value() != b->gpus.has_value() ||
            again->memory_gib != b->memory_gib || again->host != b->host)
          __builtin_trap();
        (void)dltune::audit::to_json(*b);
      }
      break;
  }
  return 0;
}
