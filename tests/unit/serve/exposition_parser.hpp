#pragma once
// A strict reader of the Prometheus text format 0.0.4, written for the tests from the format's
// description (prometheus.io, "Exposition formats"), narrower than Prometheus's own: it accepts
// what `serve` should write and reports everything else.
//   - every line ends in \n; "# HELP name text" then "# TYPE name counter|gauge", once per
//     family, before the family's samples; the family's samples together;
//   - a sample's name is its family's (serve writes no _bucket/_sum families); counters end in
//     _total; metric and label names are well formed; label values use only \\ \" \n escapes;
//   - values are finite numbers (no NaN, no Inf), written as a whole number or a decimal;
//   - no series twice; no family without samples.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::serve::testing {

struct Series {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string value_text;
  double value = 0;
};

struct Exposition {
  std::vector<std::string> families;  // in order
  std::map<std::string, std::string> help, type;
  std::vector<Series> series;
  std::vector<std::string> errors;  // empty when well formed

  [[nodiscard]] const Series* find(const std::string& name,
                                   const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& s : series)
      if (s.name == name && s.labels == labels) return &s;
    return nullptr;
  }
  // The series of a family whose labels include `subset`.
  [[nodiscard]] std::vector<const Series*> all(
      const std::string& name, const std::map<std::string, std::string>& subset = {}) const {
    std::vector<const Series*> out;
    for (const auto& s : series) {
      if (s.name != name) continue;
      bool match = true;
      for (const auto& [k, v] : subset) {
        const auto it = s.labels.find(k);
        match = match && it != s.labels.end() && it->second == v;
      }
      if (match) out.push_back(&s);
    }
    return out;
  }
};

inline bool metric_name_ok(std::string_view n) {
  if (n.empty()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

inline bool label_name_ok(std::string_view n) {
  return metric_name_ok(n) && n.find(':') == std::string_view::npos;
}

inline Exposition parse_exposition(std::string_view text) {
  Exposition e;
  auto error = [&](std::size_t line, const std::string& what) {
    e.errors.push_back("line " + std::to_string(line) + ": " + what);
  };
  if (!text.empty() && text.back() != '\n') error(0, "the text does not end in a newline");
  std::set<std::string> seen_series, closed;
  std::string current;  // the family whose samples may follow
  std::map<std::string, int> samples_of;
  std::size_t n = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    ++n;
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) {
      error(n, "empty line");
      continue;
    }
    if (line.starts_with("# HELP ")) {
      const auto rest = line.substr(7);
      const auto sp = rest.find(' ');
      const std::string name(rest.substr(0, sp));
      if (!metric_name_ok(name)) error(n, "bad metric name in HELP: " + name);
      if (e.help.count(name) || closed.count(name)) error(n, "second HELP for " + name);
      if (!current.empty()) closed.insert(current);
      current.clear();
      e.help[name] = sp == std::string_view::npos ? "" : std::string(rest.substr(sp + 1));
      e.families.push_back(name);
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      const auto rest = line.substr(7);
      const auto sp = rest.find(' ');
      const std::string name(rest.substr(0, sp));
      const std::string type = sp == std::string_view::npos ? "" : std::string(rest.substr(sp + 1));
      if (!e.help.count(name) || e.families.empty() || e.families.back() != name)
        error(n, "TYPE without its HELP just before: " + name);
      if (e.type.count(name)) error(n, "second TYPE for " + name);
      if (type != "counter" && type != "gauge") error(n, "unexpected type " + type);
      if (type == "counter" && !name.ends_with("_total"))
        error(n, "a counter's name does not end in _total: " + name);
      e.type[name] = type;
      current = name;
      continue;
    }
    if (line.starts_with("#")) {
      error(n, "unexpected comment");
      continue;
    }
    Series s;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = std::string(line.substr(0, i));
    if (s.name != current) {
      error(n, "sample of " + s.name + " outside its family (HELP and TYPE first, together)");
      continue;
    }
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const auto eq = line.find('=', i);
        if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          error(n, "bad label");
          break;
        }
        const std::string lname(line.substr(i, eq - i));
        if (!label_name_ok(lname)) error(n, "bad label name " + lname);
        std::string value;
        std::size_t j = eq + 2;
        bool closed_quote = false;
        for (; j < line.size(); ++j) {
          const char c = line[j];
          if (c == '"') {
            closed_quote = true;
            break;
          }
          if (c == '\\') {
            if (j + 1 >= line.size()) break;
            const char x = line[++j];
            if (x == '\\' || x == '"')
              value += x;
            else if (x == 'n')
              value += '\n';
            else
              error(n, std::string("bad escape \\") + x);
            continue;
          }
          value += c;
        }
        if (!closed_quote) {
          error(n, "unterminated label value");
          break;
        }
        if (s.labels.count(lname)) error(n, "label twice: " + lname);
        s.labels[lname] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size() || line[i] != '}') {
        error(n, "labels not closed");
        continue;
      }
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') {
      error(n, "no space before the value");
      continue;
    }
    s.value_text = std::string(line.substr(i + 1));
    char* stop = nullptr;
    s.value = std::strtod(s.value_text.c_str(), &stop);
    if (s.value_text.empty() || *stop != '\0' || !std::isfinite(s.value) ||
        s.value_text.find_first_not_of("0123456789.e+-") != std::string::npos)
      error(n, "bad value '" + s.value_text + "'");
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "\x1f" + k + "=" + v;
    if (!seen_series.insert(key).second) error(n, "series twice: " + std::string(line));
    ++samples_of[s.name];
    e.series.push_back(std::move(s));
  }
  for (const auto& f : e.families) {
    if (!e.type.count(f)) error(0, "no TYPE for " + f);
    if (!samples_of[f]) error(0, "a family without samples: " + f);
  }
  return e;
}

// The labels of GPU `index`'s series: dltune's (gpu, uuid) and dcgm-exporter's (UUID, modelName,
// Hostname).
inline std::map<std::string, std::string> gpu_labels(int index, const std::string& uuid,
                                                     const std::string& model,
                                                     const std::string& hostname) {
  return {{"gpu", std::to_string(index)},
          {"uuid", uuid},
          {"UUID", uuid},
          {"modelName", model},
          {"Hostname", hostname}};
}

// This host's name as serve reads it (/proc/sys/kernel/hostname, without the newline).
inline std::string this_hostname() {
  std::string name;
  if (FILE* f = std::fopen("/proc/sys/kernel/hostname", "r")) {
    char buf[256] = {};
    if (std::fgets(buf, sizeof buf, f)) name = buf;
    std::fclose(f);
  }
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  return name;
}

}  // namespace dltune::serve::testing
