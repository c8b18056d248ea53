#include "host/parse/python_files.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/text.hpp"
#include "host/parse/c_header.hpp"
#include "host/parse/scan.hpp"

namespace dltune::host::parse {

namespace {

using scan::ident_char;

bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
}

// "3.11.2.final.0" -> "3.11.2": the leading numeric parts.
std::string numeric_prefix(std::string_view v) {
  std::string out;
  for (const auto part : text::split(v, '.')) {
    if (part.empty() || !std::all_of(part.begin(), part.end(), digit)) break;
    if (!out.empty()) out += '.';
    out += part;
  }
  return out;
}

// A Python string literal at the start of `s` (prefix r/u/R/U allowed, b/f not: a version is
// text); the value, and how many characters it took. nullopt when `s` is not one.
std::optional<std::pair<std::string, std::size_t>> string_literal(std::string_view s) {
  std::size_t i = 0;
  bool raw = false;
  while (i < s.size() && i < 2 && s[i] != '\0' && std::strchr("rRuU", s[i]) != nullptr) {
    raw = raw || s[i] == 'r' || s[i] == 'R';
    ++i;
  }
  if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) return std::nullopt;
  const char q = s[i];
  const bool triple = s.substr(i, 3) == std::string(3, q);
  const std::string close = triple ? std::string(3, q) : std::string(1, q);
  i += close.size();
  std::string value;
  while (i < s.size()) {
    if (s.substr(i, close.size()) == close) return std::make_pair(value, i + close.size());
    const char c = s[i];
    if (!triple && c == '\n') return std::nullopt;
    if (c == '\\' && i + 1 < s.size() && !raw) {
      const char n = s[i + 1];
      switch (n) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case '\\':
        case '\'':
        case '"':
          value += n;
          break;
        default:
          value += c;
          value += n;
          break;
      }
      i += 2;
      continue;
    }
    value += c;
    ++i;
  }
  return std::nullopt;  // not closed
}

}  // namespace

PyvenvCfg pyvenv_cfg(std::string_view text) {
  PyvenvCfg out;
  for (const auto line : text::lines(text)) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const auto key = text::to_lower(text::trim(line.substr(0, eq)));
    const auto value = std::string(text::trim(line.substr(eq + 1)));
    if (key == "home") {
      out.home = value;
    } else if (key == "version" || key == "version_info") {
      auto v = numeric_prefix(value);
      if (!v.empty() && (!out.version || key == "version")) out.version = v;
    } else if (key == "include-system-site-packages") {
      const auto v = text::to_lower(value);
      if (v == "true")
        out.include_system_site_packages = true;
      else if (v == "false")
        out.include_system_site_packages = false;
    }
  }
  return out;
}

std::map<std::string, PyLiteral, std::less<>> python_assignments(std::string_view text) {
  std::map<std::string, PyLiteral, std::less<>> out;
  for (const auto line : text::lines(text)) {
    if (line.empty() || !(ident_char(line[0]) && !digit(line[0]))) continue;
    std::size_t n = 0;
    while (n < line.size() && ident_char(line[n])) ++n;
    const std::string name(line.substr(0, n));
    auto rest = text::trim(line.substr(n));
    if (rest.starts_with(":")) {  // an annotation: `cuda: Optional[str] = '12.1'`
      const auto eq = rest.find('=');
      if (eq == std::string_view::npos) continue;
      rest = rest.substr(eq);
    }
    if (!rest.starts_with("=") || rest.starts_with("==")) continue;
    rest = text::trim(rest.substr(1));
    PyLiteral lit;
    if (auto s = string_literal(rest)) {
      lit.kind = PyLiteral::Kind::kString;
      lit.text = s->first;
      const auto after = text::trim(rest.substr(s->second));
      if (!after.empty() && after[0] != '#' && after[0] != ';') {  // 'a' + 'b', 'x'.strip()
        lit.kind = PyLiteral::Kind::kOther;
        lit.text = std::string(rest);
      }
    } else {
      auto v = rest.substr(0, rest.find('#'));
      v = text::trim(v.substr(0, v.find(';')));
      if (v == "None") {
        lit.kind = PyLiteral::Kind::kNone;
      } else if (v == "True" || v == "False") {
        lit.kind = PyLiteral::Kind::kBool;
        lit.flag = v == "True";
      } else {
        lit.text = std::string(v);
      }
    }
    out.emplace(name, std::move(lit));
  }
  return out;
}

std::optional<std::string> Requirement::pinned() const {
  auto s = text::trim(specifier);
  if (s.find(',') != std::string_view::npos) return std::nullopt;
  if (s.starts_with("==="))
    s.remove_prefix(3);
  else if (s.starts_with("=="))
    s.remove_prefix(2);
  else
    return std::nullopt;
  s = text::trim(s);
  if (s.empty() || s.find('*') != std::string_view::npos) return std::nullopt;
  return std::string(s);
}

std::optional<Requirement> requirement(std::string_view value) {
  Requirement r;
  auto v = text::trim(value);
  if (const auto semi = v.find(';'); semi != std::string_view::npos) {
    r.marker = std::string(text::trim(v.substr(semi + 1)));
    v = text::trim(v.substr(0, semi));
  }
  std::size_t n = 0;
  while (n < v.size() && name_char(v[n])) ++n;
  if (n == 0) return std::nullopt;
  r.name = normalize_name(v.substr(0, n));
  auto rest = text::trim(v.substr(n));
  if (rest.starts_with("[")) {  // extras
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    rest = text::trim(rest.substr(close + 1));
  }
  if (rest.starts_with("(")) {  // the older form: name (==1.0)
    const auto close = rest.find(')');
    if (close == std::string_view::npos) return std::nullopt;
    if (!text::trim(rest.substr(close + 1)).empty()) return std::nullopt;
    rest = text::trim(rest.substr(1, close - 1));
  }
  if (!rest.empty() && (rest[0] == '\0' || std::strchr("=<>!~", rest[0]) == nullptr))
    return std::nullopt;
  std::string spec;
  for (const char c : rest)
    if (c != ' ' && c != '\t') spec += c;
  r.specifier = spec;
  return r;
}

CoreMetadata core_metadata(std::string_view text) {
  CoreMetadata out;
  std::vector<std::pair<std::string, std::string>> headers;
  for (const auto line : text::lines(text)) {
    const auto l = line.ends_with('\r') ? line.substr(0, line.size() - 1) : line;
    if (text::trim(l).empty()) break;                         // the body (description) starts here
    if ((l[0] == ' ' || l[0] == '\t') && !headers.empty()) {  // a folded header
      headers.back().second += ' ';
      headers.back().second += text::trim(l);
      continue;
    }
    const auto colon = l.find(':');
    if (colon == std::string_view::npos) continue;
    headers.emplace_back(text::to_lower(text::trim(l.substr(0, colon))),
                         std::string(text::trim(l.substr(colon + 1))));
  }
  for (const auto& [key, value] : headers) {
    if (key == "name" && !out.name)
      out.name = value;
    else if (key == "version" && !out.version)
      out.version = value;
    else if (key == "requires-dist")
      if (auto r = requirement(value)) out.requires_dist.push_back(std::move(*r));
  }
  return out;
}

std::string normalize_name(std::string_view name) {
  std::string out;
  bool sep = false;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      sep = true;
      continue;
    }
    if (sep && !out.empty()) out += '-';
    sep = false;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::optional<DistributionDir> distribution_dir(std::string_view dir_name) {
  DistributionDir d;
  std::string_view stem;
  if (dir_name.ends_with(".dist-info")) {
    stem = dir_name.substr(0, dir_name.size() - 10);
  } else if (dir_name.ends_with(".egg-info")) {
    stem = dir_name.substr(0, dir_name.size() - 9);
    d.egg_info = true;
  } else {
    return std::nullopt;
  }
  // Names in these directory names have '-' escaped as '_', so the first '-' ends the name.
  const auto dash = stem.find('-');
  d.name = normalize_name(stem.substr(0, dash));
  if (d.name.empty()) return std::nullopt;
  if (dash != std::string_view::npos) {
    auto version = stem.substr(dash + 1);
    if (d.egg_info) version = version.substr(0, version.find("-py"));  // "-py3.11" python tag
    d.version = std::string(version);
  }
  if (!d.egg_info && d.version.empty()) return std::nullopt;
  return d;
}

std::optional<std::string> conda_meta_version(std::string_view file_name,
                                              std::string_view package) {
  if (!file_name.ends_with(".json")) return std::nullopt;
  auto stem = file_name.substr(0, file_name.size() - 5);
  const auto build_dash = stem.rfind('-');
  if (build_dash == std::string_view::npos) return std::nullopt;
  stem = stem.substr(0, build_dash);
  const auto version_dash = stem.rfind('-');
  if (version_dash == std::string_view::npos) return std::nullopt;
  if (stem.substr(0, version_dash) != package) return std::nullopt;
  const auto version = stem.substr(version_dash + 1);
  if (version.empty() || !digit(version[0])) return std::nullopt;
  return std::string(version);
}

std::optional<std::string> py_version_define(std::string_view text) {
  const auto d = c_defines(text);
  const auto it = d.find("PY_VERSION");
  if (it == d.end()) return std::nullopt;
  const auto& raw = it->second.value;
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return std::nullopt;
  auto v = text::unquote(raw);
  if (v.empty() || !digit(v[0])) return std::nullopt;
  return v;
}

std::vector<std::string> pyenv_versions(std::string_view text) {
  std::vector<std::string> out;
  for (const auto line : text::lines(text)) {
    const auto t = text::trim(line);
    if (t.empty() || t[0] == '#') continue;
    for (const auto f : text::fields(t))
      for (const auto part : text::split(f, ':'))
        if (!part.empty()) out.emplace_back(part);
  }
  return out;
}

std::optional<std::string> python_program_version(std::string_view file_name) {
  if (!file_name.starts_with("python")) return std::nullopt;
  const auto v = file_name.substr(6);
  if (v.empty()) return std::string();
  // "3" or "3.11": digits, at most one dot, no trailing dot.
  int dots = 0;
  for (const char c : v) {
    if (c == '.')
      ++dots;
    else if (!digit(c))
      return std::nullopt;
  }
  if (dots > 1 || v.front() == '.' || v.back() == '.') return std::nullopt;
  return std::string(v);
}

}  // namespace dltune::host::parse
