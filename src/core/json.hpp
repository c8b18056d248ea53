#pragma once
// The project's JSON type, whole (core/json_fwd.hpp says which header to include where).
#include <nlohmann/json.hpp>

#include "core/json_fwd.hpp"
