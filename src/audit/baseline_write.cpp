// `dltune baseline`'s output: the baseline written whole, and what is said of it.
#include <ctime>
#include <ostream>

#include <fmt/core.h>

#include "audit/baseline.hpp"
#include "core/json.hpp"
#include "core/local_file.hpp"
#include "core/time_format.hpp"

namespace dltune::audit {

Result<Baseline> write_baseline(const inventory::HostFacts& facts, const std::string& output,
                                bool force, bool json) {
  auto b = baseline_of(facts);
  const std::string text =
      json ? to_json(b).dump(2) + "\n"
           : to_toml(b, text::format_time(std::time(nullptr), "%Y-%m-%d", text::TimeZone::kUtc));
  auto written = local_file::write(
      output, force, [&](std::ostream& out) { out << text; }, "the baseline");
  if (!written) return tl::unexpected(written.error());
  return b;
}

std::string written_text(const Baseline& b, const std::string& output) {
  return fmt::format(
      "wrote {}: {} GPUs, {} RDMA ports, {} fast NICs; review it, then check with "
      "`dltune check --baseline {}`",
      output, b.gpus ? b.gpus->size() : 0, b.rdma ? b.rdma->size() : 0, b.nics ? b.nics->size() : 0,
      output);
}

}  // namespace dltune::audit
