#include "inventory/python.hpp"

namespace dltune::inventory {

PythonFacts collect_python(Context&) { return {}; }
Json to_json(const PythonFacts&) { return Json::object(); }
std::vector<render::Section> render_python(const PythonFacts&) { return {}; }

}  // namespace dltune::inventory
