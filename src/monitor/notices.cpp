// Notices: each source's message said once (CONTRIBUTING.md, convention 3; below#8265 logged 60
// GB).
#include "monitor/sampler.hpp"

namespace dltune::monitor {

void Notices::once(const std::string& key, std::string text) {
  if (seen_.insert(key).second) pending_.push_back(std::move(text));
}

std::vector<std::string> Notices::take() {
  std::vector<std::string> out;
  out.swap(pending_);
  return out;
}

}  // namespace dltune::monitor
