// JSON and text for the Python facts (docs/json.md, "python").
#include <algorithm>

#include <fmt/core.h>

#include "core/text.hpp"

#include "core/json.hpp"
#include "inventory/json.hpp"
#include "inventory/python.hpp"

namespace dltune::inventory {

namespace {

Json torch_json(const TorchFacts& t) {
  Json j = Json::object();
  put(j, "version", t.version);
  put(j, "cuda", t.cuda);
  put(j, "cuda_build", t.cuda_build);
  put(j, "hip", t.hip);
  put(j, "git_version", t.git_version);
  put(j, "debug", t.debug);
  put(j, "cudnn", t.cudnn);
  put(j, "nccl", t.nccl);
  j["location"] = t.location;
  put(j, "metadata", t.metadata);
  put(j, "metadata_version", t.metadata_version);
  j["sources"] = t.sources;
  return j;
}

// "2.3.1+cu121 (CUDA 12.1, cuDNN 8.9.2.26, NCCL 2.20.5)", "1.13.0a0 (CPU-only)"
std::string torch_summary(const TorchFacts& t) {
  std::vector<std::string> what;
  if (t.cuda)
    what.push_back("CUDA " + *t.cuda);
  else if (t.hip)
    what.push_back("ROCm " + *t.hip);
  else if (t.cuda_build == false)
    what.push_back("CPU-only");
  if (t.cudnn) what.push_back("cuDNN " + *t.cudnn);
  if (t.nccl) what.push_back("NCCL " + *t.nccl);
  std::string s = "torch " + t.version.value_or("(version unknown)");
  if (!what.empty()) s += " (" + text::join(what, ", ") + ")";
  return s;
}

}  // namespace

Json to_json(const PythonFacts& f) {
  Json j = Json::object();
  Json list = Json::array();
  for (const auto& i : f.interpreters) {
    Json x = Json::object();
    x["path"] = i.path;
    x["resolved"] = i.resolved;
    if (!i.aliases.empty()) x["aliases"] = i.aliases;
    x["commands"] = i.commands;
    x["source"] = i.source;
    x["found_via"] = i.found_via;
    x["prefix"] = i.prefix;
    put(x, "version", i.version);
    put(x, "version_source", i.version_source);
    Json dirs = Json::array();
    for (const auto& d : i.package_dirs) dirs.push_back(d.path);
    x["package_dirs"] = std::move(dirs);
    if (i.torch) x["torch"] = torch_json(*i.torch);
    list.push_back(std::move(x));
  }
  j["interpreters"] = std::move(list);
  if (f.pyenv) {
    Json p = Json::object();
    p["root"] = f.pyenv->root;
    p["selected"] = f.pyenv->selected;
    if (!f.pyenv->selected_by.empty()) p["selected_by"] = f.pyenv->selected_by;
    p["installed"] = f.pyenv->installed;
    j["pyenv"] = std::move(p);
  }
  return j;
}

std::vector<text::Section> render_python(const PythonFacts& f) {
  text::Section s{"Python", {}};
  std::size_t vw = 0, pw = 0;
  auto shown = [](const Interpreter& i) { return i.source == "venv" ? i.path : i.resolved; };
  for (const auto& i : f.interpreters) {
    vw = std::max(vw, i.version.value_or("?").size());
    pw = std::max(pw, shown(i).size());
  }
  for (const auto& i : f.interpreters) {
    std::string version = i.version.value_or("?");
    const std::string torch = i.torch ? torch_summary(*i.torch) : "no torch";
    s.add(std::string(text::base_name(i.resolved)),
          fmt::format("{:<{}}  {:<{}}  {}", version, vw, shown(i), pw, torch));
    std::string from = i.source;
    if (!i.commands.empty())
      from += ", runs as " + text::join(i.commands, ", ");
    else if (std::find(i.found_via.begin(), i.found_via.end(), "PATH") != i.found_via.end() ||
             std::find(i.found_via.begin(), i.found_via.end(), "pyenv shim") != i.found_via.end())
      from += ", shadowed on PATH";
    if (i.version_source == "file name") from += "; version from the file name only";
    s.add("from", from, 1);
    std::vector<std::string> dirs;
    for (const auto& d : i.package_dirs) dirs.push_back(d.path);
    if (!dirs.empty()) s.add("packages", text::join(dirs, ", "), 1);
    if (i.torch) {
      std::string where = i.torch->location + " (" + text::join(i.torch->sources, ", ");
      if (i.torch->metadata_version && i.torch->metadata_version != i.torch->version)
        where += " says " + *i.torch->metadata_version;
      s.add("torch", where + ")", 1);
    }
  }
  if (f.pyenv) {
    std::string v = f.pyenv->root;
    if (!f.pyenv->selected.empty())
      v += fmt::format(": {} selected ({})", text::join(f.pyenv->selected, ", "),
                       f.pyenv->selected_by);
    if (!f.pyenv->installed.empty()) v += "; installed " + text::join(f.pyenv->installed, ", ");
    s.add("pyenv", v);
  }
  return {s};
}

}  // namespace dltune::inventory
