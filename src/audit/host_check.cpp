#include "audit/host_check.hpp"

#include "settings/catalog.hpp"
#include "settings/profile.hpp"

namespace dltune::audit {

Result<HostCheck> check_host(const host::Root& root, const HostCheckRequest& request) {
  auto profile = settings::load_profile(request.profile, root, settings::validate_key);
  if (!profile) return fail("profile: " + profile.error().message());
  if (auto set = settings::apply_sets(*profile, request.sets,
                                      settings::set_key_validator(root, settings::validate_key));
      !set)
    return tl::unexpected(set.error());
  HostCheck out;
  out.facts = inventory::collect(root, request.collect);
  auto report = run_check(out.facts, root, *profile, request.options);
  if (!report) return tl::unexpected(report.error());
  out.report = std::move(*report);
  return out;
}

}  // namespace dltune::audit
