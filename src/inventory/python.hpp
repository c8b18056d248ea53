#pragma once
// Python interpreters (PATH, active venv/conda, pyenv) with their versions, and torch found in
// their site-packages, read from torch's own files (never by importing it).
// OWNER: cuda/python helper (stub interface; to be filled in).
#include <vector>

#include "inventory/context.hpp"
#include "inventory/json.hpp"
#include "render/text.hpp"

namespace dltune::inventory {

struct PythonFacts {};

[[nodiscard]] PythonFacts collect_python(Context& ctx);
[[nodiscard]] Json to_json(const PythonFacts& f);
[[nodiscard]] std::vector<render::Section> render_python(const PythonFacts& f);

}  // namespace dltune::inventory
