#pragma once
// The project's JSON type, declared only (nlohmann/json_fwd.hpp, a few hundred lines): a header
// that names Json in a declaration includes this one, and a file that builds, reads or copies
// JSON includes core/json.hpp (the whole nlohmann/json.hpp, some 24,000 lines). Key order is
// kept as written (docs/json.md documents the schemas).
#include <nlohmann/json_fwd.hpp>

namespace dltune {

using Json = nlohmann::ordered_json;

namespace inventory {
using Json = dltune::Json;
}

}  // namespace dltune
