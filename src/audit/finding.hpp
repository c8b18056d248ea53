#pragma once
// Findings are the settings layer's (settings/finding.hpp): each kind of setting judges its own
// keys there, and audit's checks use the same types.
#include "settings/finding.hpp"

namespace dltune::audit {

using settings::Evidence;
using settings::Finding;
using settings::Fix;
using settings::Severity;
using settings::severity_from;
using settings::severity_name;
using settings::to_json;

}  // namespace dltune::audit
