// JSON and text for the CUDA stack (docs/json.md, "cuda").
#include <algorithm>

#include <fmt/core.h>

#include "core/text.hpp"

#include "core/json.hpp"
#include "inventory/cuda.hpp"
#include "inventory/json.hpp"

namespace dltune::inventory {

namespace {

Json finding_json(const VersionFinding& v) {
  Json j = Json::object();
  put(j, "version", v.version);
  j["path"] = v.path;
  j["source"] = v.source;
  return j;
}

// cuDNN and NCCL: one row per finding, versions aligned.
void add_findings(text::Section& s, const char* label, const std::vector<VersionFinding>& v,
                  std::size_t w) {
  bool first = true;
  for (const auto& x : v) {
    s.add(first ? label : "",
          fmt::format("{:<{}}  {} ({})", x.version.value_or("?"), w, x.path, x.source));
    first = false;
  }
}

}  // namespace

Json to_json(const CudaFacts& f) {
  Json j = Json::object();
  Json toolkits = Json::array();
  for (const auto& t : f.toolkits) {
    Json x = Json::object();
    x["path"] = t.path;
    put(x, "version", t.version);
    put(x, "version_source", t.version_source);
    Json via = Json::array();
    for (const auto& v : t.found_via) via.push_back(Json{{"how", v.how}, {"path", v.path}});
    x["found_via"] = std::move(via);
    put(x, "nvcc", t.nvcc);
    Json packages = Json::array();
    for (const auto& p : t.packages)
      packages.push_back(Json{{"name", p.name}, {"version", p.version}, {"path", p.path}});
    x["packages"] = std::move(packages);
    toolkits.push_back(std::move(x));
  }
  j["toolkits"] = std::move(toolkits);
  for (const auto& [key, list] : {std::pair{"cudnn", &f.cudnn}, std::pair{"nccl", &f.nccl}}) {
    Json a = Json::array();
    for (const auto& v : *list) a.push_back(finding_json(v));
    j[key] = std::move(a);
  }
  Json packages = Json::array();
  for (const auto& p : f.python_packages)
    packages.push_back(Json{{"interpreter", p.interpreter},
                            {"name", p.name},
                            {"version", p.version},
                            {"path", p.path}});
  j["python_packages"] = std::move(packages);
  Json blas = Json::array();
  for (const auto& b : f.blas) {
    Json x = Json::object();
    x["name"] = b.name;
    x["path"] = b.path;
    put(x, "version", b.version);
    x["source"] = b.source;
    put(x, "selected_as", b.selected_as);
    blas.push_back(std::move(x));
  }
  j["blas"] = std::move(blas);
  return j;
}

std::vector<text::Section> render_cuda(const CudaFacts& f) {
  text::Section s{"CUDA stack", {}};
  // One version column for toolkits, cuDNN and NCCL.
  std::size_t w = 0;
  for (const auto& t : f.toolkits) w = std::max(w, t.version.value_or("?").size());
  for (const auto* list : {&f.cudnn, &f.nccl})
    for (const auto& x : *list) w = std::max(w, x.version.value_or("?").size());
  for (const auto& t : f.toolkits) {
    std::vector<std::string> via;
    bool on_path = false;
    for (const auto& v : t.found_via) {
      if (v.how == "link")
        via.push_back("via " + v.path);
      else if (v.how == "PATH")
        on_path = true;
      else if (v.how != "directory")
        via.push_back(v.how);
    }
    if (on_path) via.push_back("nvcc on PATH");
    std::string value = fmt::format("{:<{}}  {}", t.version.value_or("?"), w, t.path);
    std::vector<std::string> notes;
    if (t.version_source) notes.push_back("from " + *t.version_source);
    if (!via.empty()) notes.push_back(text::join(via, ", "));
    if (!notes.empty()) value += " (" + text::join(notes, "; ") + ")";
    s.add("toolkit", value);
    if (!t.packages.empty())
      s.add("packages",
            fmt::format("{} nvidia-* wheels in {}/dist-info (--json lists them)", t.packages.size(),
                        t.path),
            1);
  }
  add_findings(s, "cuDNN", f.cudnn, w);
  add_findings(s, "NCCL", f.nccl, w);
  std::size_t bw = 0;
  auto blas_name = [](const BlasFinding& b) {
    return b.name + (b.version ? " " + *b.version : "");
  };
  for (const auto& b : f.blas) bw = std::max(bw, blas_name(b).size());
  bool first = true;
  for (const auto& b : f.blas) {
    std::string value = fmt::format("{:<{}}  {}", blas_name(b), bw, b.path);
    if (b.selected_as)
      value += " (the system's " + b.selected_as->substr(b.selected_as->rfind('/') + 1) + ")";
    s.add(first ? "BLAS" : "", value);
    first = false;
  }
  // The nvidia-* wheels, one row per interpreter.
  std::vector<std::string> order;
  for (const auto& p : f.python_packages)
    if (std::find(order.begin(), order.end(), p.interpreter) == order.end())
      order.push_back(p.interpreter);
  for (const auto& interpreter : order) {
    std::vector<std::string> items;
    for (const auto& p : f.python_packages)
      if (p.interpreter == interpreter) items.push_back(p.name + " " + p.version);
    s.add("wheels", interpreter + ": " + text::join(items, ", "));
  }
  return {s};
}

}  // namespace dltune::inventory
