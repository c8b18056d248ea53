// Python stacks by activity (diagnose/py_activity.hpp).
#include "diagnose/py_activity.hpp"
#include "core/toml_parse.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include <fmt/core.h>
#include <toml++/toml.h>

#include "core/embedded.hpp"

namespace dltune::diagnose {

namespace {

tl::unexpected<Error> fail(std::string what, const std::string& name) {
  return tl::unexpected(Error{std::move(what), name, 0});
}

// The last part of a qualified name: "Samples.__getitem__" -> "__getitem__".
std::string_view last_part(std::string_view qualname) {
  const auto dot = qualname.rfind('.');
  return dot == std::string_view::npos ? qualname : qualname.substr(dot + 1);
}

bool contains_any(std::string_view text, const std::vector<std::string>& pieces) {
  return std::any_of(pieces.begin(), pieces.end(),
                     [text](const std::string& p) { return text.find(p) != text.npos; });
}

bool holds(const PyActivity& a, const std::vector<pystack::Frame>& frames) {
  if (frames.empty()) return false;
  if (!a.innermost_files.empty() && !contains_any(frames.front().file, a.innermost_files))
    return false;
  const auto any_file = [&] {
    return std::any_of(frames.begin(), frames.end(),
                       [&](const pystack::Frame& f) { return contains_any(f.file, a.files); });
  };
  const auto any_function = [&] {
    return std::any_of(frames.begin(), frames.end(), [&](const pystack::Frame& f) {
      const auto name = last_part(f.function);
      return std::find(a.functions.begin(), a.functions.end(), name) != a.functions.end();
    });
  };
  const bool want_files = !a.files.empty(), want_functions = !a.functions.empty();
  if (a.files_or_functions) return (want_files && any_file()) || (want_functions && any_function());
  return (!want_files || any_file()) && (!want_functions || any_function());
}

Result<std::vector<std::string>> strings(const toml::table& t, std::string_view key,
                                         const std::string& where) {
  std::vector<std::string> out;
  const auto* node = t.get(key);
  if (node == nullptr) return out;
  const auto* arr = node->as_array();
  if (arr == nullptr) return fail(fmt::format("{}: {} must be a list of strings", where, key), "");
  for (const auto& v : *arr) {
    const auto s = v.value<std::string>();
    if (!s || s->empty())
      return fail(fmt::format("{}: {} holds a value that is not a non-empty string", where, key),
                  "");
    out.push_back(*s);
  }
  return out;
}

}  // namespace

std::size_t PyActivities::index_of(std::string_view id) const {
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].id == id) return i;
  return list.size();
}

Result<PyActivities> parse_py_activities(std::string_view toml_text, std::string_view name) {
  const std::string file(name);
  auto parsed = parse_toml(toml_text, name);
  if (!parsed) return tl::unexpected(parsed.error());
  const toml::table& doc = *parsed;
  for (const auto& [k, v] : doc)
    if (k.str() != "activity")
      return fail(fmt::format("unknown key '{}' (activity)", k.str()), file);
  const auto* arr = doc.get("activity");
  if (arr == nullptr || !arr->is_array_of_tables() || arr->as_array()->empty())
    return fail("no [[activity]] tables", file);
  PyActivities out;
  std::set<std::string> ids;
  static const std::set<std::string_view> kKeys{"id",    "label",     "innermost_files",
                                                "files", "functions", "files_or_functions"};
  for (const auto& node : *arr->as_array()) {
    const auto& t = *node.as_table();
    PyActivity a;
    a.id = t["id"].value<std::string>().value_or("");
    const std::string where = fmt::format("[[activity]] {}", a.id.empty() ? "(no id)" : a.id);
    if (a.id.empty() || a.id == "other")
      return fail(where + ": id must be a non-empty string other than \"other\"", file);
    for (const auto& [k, v] : t)
      if (!kKeys.count(k.str()))
        return fail(fmt::format("{}: unknown key '{}'", where, k.str()), file);
    a.label = t["label"].value<std::string>().value_or("");
    if (a.label.empty()) return fail(where + ": label must be a non-empty string", file);
    for (auto [key, into] : {std::pair{"innermost_files", &a.innermost_files},
                             std::pair{"files", &a.files}, std::pair{"functions", &a.functions}}) {
      auto v = strings(t, key, where);
      if (!v) return fail(v.error().message(), file);
      *into = std::move(*v);
    }
    if (const auto* b = t.get("files_or_functions")) {
      if (!b->is_boolean()) return fail(where + ": files_or_functions must be true or false", file);
      a.files_or_functions = b->as_boolean()->get();
      if (a.files_or_functions && (a.files.empty() || a.functions.empty()))
        return fail(where + ": files_or_functions needs both files and functions", file);
    }
    if (a.innermost_files.empty() && a.files.empty() && a.functions.empty())
      return fail(where + ": no condition (innermost_files, files or functions)", file);
    if (!ids.insert(a.id).second) return fail(where + ": the id is used twice", file);
    out.list.push_back(std::move(a));
  }
  return out;
}

const Result<PyActivities>& builtin_py_activities() {
  static const Result<PyActivities> kTable = load_knowledge<PyActivities>(
      "python_activity", [](std::string_view text, const std::string& where) {
        return parse_py_activities(text, where);
      });
  return kTable;
}

std::size_t classify(const PyActivities& a, const std::vector<pystack::Frame>& frames) {
  for (std::size_t i = 0; i < a.list.size(); ++i)
    if (holds(a.list[i], frames)) return i;
  return a.list.size();
}

void PyTally::add(std::size_t activity, bool on_cpu) {
  auto& v = on_cpu ? running : waiting;
  if (activity >= v.size()) activity = v.size() - 1;
  ++v[activity];
}

std::size_t PyTally::samples() const {
  return std::accumulate(running.begin(), running.end(), std::size_t{0}) +
         std::accumulate(waiting.begin(), waiting.end(), std::size_t{0});
}

std::size_t PyTally::running_samples() const {
  return std::accumulate(running.begin(), running.end(), std::size_t{0});
}

void PyTally::clear() {
  std::fill(running.begin(), running.end(), 0);
  std::fill(waiting.begin(), waiting.end(), 0);
  failed = 0;
}

void set_py_signals(SignalValues& v, const PyTally& t, const PyActivities& a) {
  const std::size_t all = t.samples(), on_cpu = t.running_samples();
  if (all == 0) return;
  const auto put = [&v](Signal s, double x) { v[static_cast<std::size_t>(s)] = x; };
  put(Signal::kPySamples, static_cast<double>(all));
  const std::size_t other = a.list.size();
  const auto running_share = [&](std::size_t i) {
    return i < t.running.size() ? static_cast<double>(t.running[i]) / on_cpu : 0.0;
  };
  const auto share = [&](std::size_t i) {
    return i < t.running.size() ? static_cast<double>(t.running[i] + t.waiting[i]) / all : 0.0;
  };
  if (on_cpu > 0) {
    put(Signal::kPyLoading, running_share(a.index_of("loading")));
    put(Signal::kPyModel, running_share(a.index_of("model")));
    put(Signal::kPyPython, running_share(other));
  }
  put(Signal::kPyWaitData, share(a.index_of("waiting-for-data")));
  put(Signal::kPySync, share(a.index_of("sync")));
  put(Signal::kPyLogging, share(a.index_of("logging")));
}

}  // namespace dltune::diagnose
