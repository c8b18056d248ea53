#include "host/parse/nvidia_version.hpp"

#include <cctype>

#include "core/text.hpp"

namespace dltune::host::parse {

bool is_driver_version(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  bool dot = false;
  char prev = '.';
  for (const char c : s) {
    if (c == '.') {
      if (prev == '.') return false;
      dot = true;
    } else if (!std::isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
    prev = c;
  }
  return dot && prev != '.';
}

Result<NvidiaVersion> nvidia_version(std::string_view text) {
  std::optional<NvidiaVersion> out;
  std::optional<std::string> gcc;
  int n = 0;
  for (const auto raw : text::lines(text)) {
    ++n;
    const auto line = text::trim(raw);
    if (line.starts_with("NVRM version:")) {
      const auto f = text::fields(line.substr(13));
      NvidiaVersion v;
      for (std::size_t i = 0; i < f.size(); ++i) {
        if (f[i] == "Open") v.open_kernel_module = true;
        if (f[i] == "UNIX" && i + 1 < f.size() && f[i + 1] != "Open")
          v.architecture = std::string(f[i + 1]);
        if (f[i] == "for" && i + 1 < f.size()) v.architecture = std::string(f[i + 1]);
        if (v.version.empty() && is_driver_version(f[i])) v.version = std::string(f[i]);
      }
      if (v.version.empty())
        return fail("no version in", "line " + std::to_string(n) + ": '" + std::string(line) + "'");
      if (!out) out = std::move(v);
    } else if (line.starts_with("GCC version:")) {
      const auto f = text::fields(line.substr(12));
      for (std::size_t i = 0; i + 1 < f.size(); ++i)
        if (f[i] == "version") {
          gcc = std::string(f[i + 1]);
          break;
        }
    }
  }
  if (!out) return fail("no 'NVRM version:' line", "");
  out->gcc_version = gcc;
  return *out;
}

}  // namespace dltune::host::parse
