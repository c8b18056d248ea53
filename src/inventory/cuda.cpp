#include "inventory/cuda.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/parse/cuda_files.hpp"
#include "host/parse/python_files.hpp"

namespace dltune::inventory {

namespace parse = host::parse;

namespace {

// cuda.h is 1.1 MB (CUDA 13.0); CUDA_VERSION is defined near its top (line 263 there).
constexpr std::size_t kCudaHPrefix = 65536;
constexpr std::size_t kScriptPrefix = 4096;
constexpr const char* kMultiarchLib = "/usr/lib/x86_64-linux-gnu";

std::optional<std::string> non_empty(std::string v) {
  return v.empty() ? std::nullopt : std::optional<std::string>(std::move(v));
}

class Collector {
 public:
  Collector(Context& ctx, const PythonFacts& python)
      : ctx_(ctx), root_(ctx.root()), python_(python) {}

  CudaFacts run() {
    find_toolkits();
    for (auto& t : f_.toolkits) describe(t);
    find_headers();
    find_libraries();
    find_toolkit_wheels();
    find_python_packages();
    find_default_blas();
    return std::move(f_);
  }

 private:
  // Links followed; nullopt when absent; a Problem when unreadable.
  std::optional<std::string> resolve(const std::string& path, const char* fact) {
    auto r = root_.resolve(path);
    if (!r) {
      ctx_.problem(fact, r.error());
      return std::nullopt;
    }
    return *r;
  }

  // Each directory is listed once, whatever asks (big ones: /usr/lib/x86_64-linux-gnu).
  const std::vector<std::string>& list(const std::string& dir, const char* fact) {
    auto it = lists_.find(dir);
    if (it != lists_.end()) return it->second;
    std::vector<std::string> names;
    auto r = root_.list(dir);
    if (r && *r)
      names = std::move(**r);
    else if (!r && r.error().errno_ != ENOTDIR)
      ctx_.problem(fact, r.error());
    return lists_.emplace(dir, std::move(names)).first->second;
  }

  bool has(const std::vector<std::string>& names, std::string_view name) const {
    return std::binary_search(names.begin(), names.end(), name);
  }

  // A toolkit says its version in one of these; a directory with none of them is not one.
  bool is_toolkit(const std::string& dir) {
    const auto& names = list(dir, "cuda.toolkit");
    return has(names, "version.json") || has(names, "version.txt") ||
           (has(names, "include") && root_.exists(join_path(dir, "include/cuda.h")));
  }

  void add_toolkit(const std::string& candidate, FoundVia via) {
    const auto dir = resolve(candidate, "cuda.toolkit");
    if (!dir || !is_toolkit(*dir)) return;
    auto it = std::find_if(f_.toolkits.begin(), f_.toolkits.end(),
                           [&](const Toolkit& t) { return t.path == *dir; });
    if (it == f_.toolkits.end()) {
      f_.toolkits.push_back(Toolkit{*dir, {}, {}, {}, {}, {}});
      it = std::prev(f_.toolkits.end());
    }
    if (via.how == "link" && candidate == *dir) via.how = "directory";
    it->found_via.push_back(std::move(via));
  }

  // The toolkit an nvcc belongs to: <toolkit>/bin/nvcc, or the nvcc that a wrapper script
  // (`exec /usr/local/cuda-13.0/bin/nvcc "$@"`) runs.
  std::optional<std::string> nvcc_toolkit(const std::string& nvcc) {
    const auto real = resolve(nvcc, "cuda.toolkit");
    if (!real) return std::nullopt;
    const auto bin = parent_path(*real);
    if (text::base_name(bin) == "bin" && is_toolkit(parent_path(bin))) return parent_path(bin);
    auto script = root_.read(*real, kScriptPrefix);
    if (!script || !*script || !(*script)->starts_with("#!")) return std::nullopt;
    for (const auto line : text::lines(**script))
      for (auto word : text::fields(line)) {
        word = text::trim(word);
        while (!word.empty() && (word.front() == '"' || word.front() == '\''))
          word.remove_prefix(1);
        while (!word.empty() && (word.back() == '"' || word.back() == '\'')) word.remove_suffix(1);
        if (!word.ends_with("/bin/nvcc") || word == nvcc) continue;
        const auto target = env_host_path(word);
        if (!target) continue;
        const auto t = resolve(*target, "cuda.toolkit");
        if (t && text::base_name(parent_path(*t)) == "bin" &&
            is_toolkit(parent_path(parent_path(*t))))
          return parent_path(parent_path(*t));
      }
    return std::nullopt;
  }

  void find_toolkits() {
    for (const auto& name : list("/usr/local", "cuda.toolkit"))
      if (name == "cuda" || name.starts_with("cuda-"))
        add_toolkit(join_path("/usr/local", name), {"link", join_path("/usr/local", name)});
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
      if (auto v = ctx_.env(var))
        if (auto p = env_host_path(*v)) add_toolkit(*p, {var, *p});
    if (auto path = ctx_.env("PATH")) {
      std::set<std::string> seen;
      for (const auto entry : text::split(*path, ':')) {
        const auto dir = env_host_path(entry);
        if (!dir || !seen.insert(*dir).second) continue;
        const auto nvcc = join_path(*dir, "nvcc");
        if (!root_.exists(nvcc)) continue;
        if (auto t = nvcc_toolkit(nvcc)) add_toolkit(*t, {"PATH", nvcc});
      }
    }
  }

  template <class Parser>
  void version_from(Toolkit& t, const char* file, std::size_t max, Parser parser) {
    if (t.version) return;
    const auto path = join_path(t.path, file);
    auto text = ctx_.read("cuda.toolkit", path, max);
    if (!text) return;
    auto v = parser(*text);
    if (!v) return ctx_.problem("cuda.toolkit", path, v.error().what);
    if (!*v) return;
    t.version = **v;
    t.version_source = text::base_name(file);
  }

  void describe(Toolkit& t) {
    const auto& names = list(t.path, "cuda.toolkit");
    if (has(names, "version.json"))
      version_from(t, "version.json", Context::kSmallFile, parse::cuda_version_json);
    if (has(names, "version.txt"))
      version_from(t, "version.txt", Context::kSmallFile, parse::cuda_version_txt);
    if (has(names, "include"))
      version_from(t, "include/cuda.h", kCudaHPrefix, parse::cuda_h_version);
    if (has(names, "bin") && root_.exists(join_path(t.path, "bin/nvcc")))
      t.nvcc = join_path(t.path, "bin/nvcc");
    if (has(names, "dist-info")) {
      const auto dir = join_path(t.path, "dist-info");
      for (const auto& n : list(dir, "cuda.toolkit"))
        if (auto d = parse::distribution_dir(n))
          t.packages.push_back(Distribution{d->name, d->version, join_path(dir, n)});
    }
  }

  // Toolkits assembled from NVIDIA's wheels keep their dist-info (cuDNN, NCCL among them).
  void find_toolkit_wheels() {
    for (const auto& t : f_.toolkits)
      for (const auto& p : t.packages) {
        if (p.name.starts_with("nvidia-cudnn"))
          add_finding(f_.cudnn, non_empty(p.version), p.path, "dist-info");
        if (p.name.starts_with("nvidia-nccl"))
          add_finding(f_.nccl, non_empty(p.version), p.path, "dist-info");
      }
  }

  void add_finding(std::vector<VersionFinding>& v, std::optional<std::string> version,
                   const std::string& path, const char* source) {
    for (const auto& x : v)
      if (x.path == path) return;
    v.push_back(VersionFinding{std::move(version), path, source});
  }

  std::vector<std::string> conda_prefixes() const {
    std::vector<std::string> out;
    for (const auto& i : python_.interpreters)
      if (i.source == "conda" && std::find(out.begin(), out.end(), i.prefix) == out.end())
        out.push_back(i.prefix);
    return out;
  }

  template <class Parser>
  void header(std::vector<VersionFinding>& out, const std::string& path, const char* fact,
              Parser parser) {
    const auto real = resolve(path, fact);
    if (!real) return;
    auto text = ctx_.read(fact, *real, Context::kSmallFile);
    if (!text) return;
    auto v = parser(*text);
    if (!v) return ctx_.problem(fact, *real, v.error().what);
    if (*v) add_finding(out, **v, *real, "header");
  }

  void find_headers() {
    std::vector<std::string> dirs;
    for (const auto& t : f_.toolkits) dirs.push_back(join_path(t.path, "include"));
    dirs.push_back("/usr/include");
    dirs.push_back("/usr/include/x86_64-linux-gnu");
    for (const auto& p : conda_prefixes()) dirs.push_back(join_path(p, "include"));
    for (const auto& d : dirs) {
      // cuDNN >= 8 keeps its version in cudnn_version.h; before, in cudnn.h.
      const auto v8 = join_path(d, "cudnn_version.h");
      header(f_.cudnn, root_.exists(v8) ? v8 : join_path(d, "cudnn.h"), "cuda.cudnn",
             parse::cudnn_h_version);
      header(f_.nccl, join_path(d, "nccl.h"), "cuda.nccl", parse::nccl_h_version);
    }
  }

  // The most precise version of `stem` among a directory's names (libcudnn.so.9.1.0 over
  // libcudnn.so.9 and libcudnn.so).
  std::optional<std::pair<std::string, std::string>> best_library(
      const std::vector<std::string>& names, std::string_view stem) {
    std::optional<std::pair<std::string, std::string>> best;
    for (const auto& n : names)
      if (auto v = parse::library_version(n, stem))
        if (!best || parse::version_precision(*v) > parse::version_precision(best->second))
          best = std::make_pair(n, *v);
    return best;
  }

  void add_blas(BlasFinding b) {
    for (const auto& x : f_.blas)
      if (x.path == b.path) return;
    f_.blas.push_back(std::move(b));
  }

  void openblas_in(const std::string& dir, const std::vector<std::string>& names) {
    std::optional<std::pair<std::string, std::string>> best;
    for (const auto& n : names)
      if (auto v = parse::openblas_version(n))
        if (!best || parse::version_precision(*v) > parse::version_precision(best->second))
          best = std::make_pair(n, *v);
    if (best)
      add_blas({"OpenBLAS", join_path(dir, best->first), non_empty(best->second), "library", {}});
  }

  void scan_library_dir(const std::string& dir) {
    const auto& names = list(dir, "cuda.libraries");
    if (auto b = best_library(names, "libcudnn"))
      add_finding(f_.cudnn, non_empty(b->second), join_path(dir, b->first), "library");
    if (auto b = best_library(names, "libnccl"))
      add_finding(f_.nccl, non_empty(b->second), join_path(dir, b->first), "library");
    if (auto b = best_library(names, "libmkl_rt"))
      add_blas({"MKL", join_path(dir, b->first), non_empty(b->second), "library", {}});
    openblas_in(dir, names);
    // Debian installs each OpenBLAS flavour in its own directory (openblas-pthread/, ...).
    for (const auto& n : names)
      if (n.starts_with("openblas")) {
        const auto sub = join_path(dir, n);
        openblas_in(sub, list(sub, "cuda.libraries"));
      }
  }

  void find_libraries() {
    std::vector<std::string> candidates;
    for (const auto& t : f_.toolkits)
      for (const char* sub : {"lib64", "lib", "targets/x86_64-linux/lib"})
        candidates.push_back(join_path(t.path, sub));
    candidates.push_back(kMultiarchLib);
    candidates.push_back("/usr/lib64");
    for (const auto& p : conda_prefixes()) candidates.push_back(join_path(p, "lib"));
    if (auto ld = ctx_.env("LD_LIBRARY_PATH"))
      for (const auto entry : text::split(*ld, ':'))
        if (auto d = env_host_path(entry)) candidates.push_back(*d);
    std::set<std::string> seen;
    for (const auto& c : candidates) {
      const auto dir = resolve(c, "cuda.libraries");
      if (dir && seen.insert(*dir).second) scan_library_dir(*dir);
    }
  }

  void find_python_packages() {
    for (const auto& i : python_.interpreters)
      for (const auto& pd : i.package_dirs) {
        for (const auto& d : pd.distributions) {
          if (d.name.starts_with("nvidia-"))
            f_.python_packages.push_back(PythonPackage{i.path, d.name, d.version, d.path});
          if (d.name == "mkl") add_blas({"MKL", d.path, non_empty(d.version), "dist-info", {}});
        }
        // numpy and scipy wheels bundle their own OpenBLAS (auditwheel's <package>.libs).
        for (const auto& libs : pd.bundled_lib_dirs) {
          const auto dir = join_path(pd.path, libs);
          openblas_in(dir, list(dir, "cuda.blas"));
        }
      }
  }

  std::string blas_kind(const std::string& real) const {
    const auto p = text::to_lower(real);
    if (p.find("openblas") != std::string::npos) return "OpenBLAS";
    if (p.find("mkl") != std::string::npos) return "MKL";
    if (p.find("blis") != std::string::npos) return "BLIS";
    if (p.find("atlas") != std::string::npos) return "ATLAS";
    return "reference BLAS";  // netlib: Debian's libblas3 (/usr/lib/<triplet>/blas/)
  }

  // libblas.so.3 is the BLAS that -lblas programs get: on Debian an alternatives link to
  // blas/ (reference), openblas-pthread/, blis-openmp/, ... (update-alternatives libblas.so.3).
  void find_default_blas() {
    for (const char* dir : {kMultiarchLib, "/usr/lib64"}) {
      const auto& names = list(dir, "cuda.blas");
      if (!has(names, "libblas.so.3")) continue;
      const auto link = join_path(dir, "libblas.so.3");
      const auto real = resolve(link, "cuda.blas");
      if (!real) continue;
      const auto kind = blas_kind(*real);
      auto same_dir = std::find_if(f_.blas.begin(), f_.blas.end(), [&](const BlasFinding& b) {
        return b.name == kind && parent_path(b.path) == parent_path(*real);
      });
      if (same_dir != f_.blas.end()) {
        same_dir->selected_as = link;
        continue;
      }
      BlasFinding b{kind, *real, {}, "library", link};
      if (auto v = parse::library_version(text::base_name(*real), "libblas"))
        b.version = non_empty(*v);
      f_.blas.push_back(std::move(b));
    }
  }

  Context& ctx_;
  const host::Root& root_;
  const PythonFacts& python_;
  std::map<std::string, std::vector<std::string>> lists_;
  CudaFacts f_;
};

}  // namespace

CudaFacts collect_cuda(Context& ctx, const PythonFacts& python) {
  return Collector(ctx, python).run();
}

}  // namespace dltune::inventory
