#include "host/parse/proc_modules.hpp"

#include <fmt/core.h>

#include "core/text.hpp"

namespace dltune::host::parse {

ProcModules proc_modules(std::string_view text) {
  ProcModules out;
  int n = 0;
  for (const auto raw : text::lines(text)) {
    ++n;
    const auto line = text::trim(raw);
    if (line.empty()) continue;
    const auto f = text::fields(line);
    const auto size = f.size() >= 3 ? text::to_uint(f[1]) : std::nullopt;
    const auto refs = f.size() >= 3 ? text::to_uint(f[2]) : std::nullopt;
    if (!size || !refs) {
      out.errors.push_back(
          fmt::format("line {}: expected 'name size refcount deps state ...', "
                      "got '{}'",
                      n, line.substr(0, 80)));
      continue;
    }
    Module m;
    m.name = std::string(f[0]);
    m.size_bytes = *size;
    m.instances = *refs;
    if (f.size() >= 4 && f[3] != "-")
      for (const auto dep : text::split(f[3], ','))
        if (!dep.empty()) m.used_by.emplace_back(dep);
    if (f.size() >= 5) m.state = std::string(f[4]);
    out.modules.push_back(std::move(m));
  }
  return out;
}

}  // namespace dltune::host::parse
