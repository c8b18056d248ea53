#include "inventory/python.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/parse/python_files.hpp"

namespace dltune::inventory {

namespace parse = host::parse;

std::optional<std::string> env_host_path(std::string_view value) {
  value = text::trim(value);
  if (value.empty() || value[0] != '/') return std::nullopt;
  std::string p = std::filesystem::path(value).lexically_normal().string();
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (!host::Root::check_path(p)) return std::nullopt;
  return p;
}

std::string join_path(std::string_view dir, std::string_view name) {
  return dir == "/" ? fmt::format("/{}", name) : fmt::format("{}/{}", dir, name);
}

std::string parent_path(std::string_view path) {
  const auto pos = path.rfind('/');
  return pos == 0 || pos == std::string_view::npos ? std::string("/")
                                                   : std::string(path.substr(0, pos));
}

namespace {

template <class T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// "3.11.2" -> "3.11"; "3" -> "" (too imprecise to name a lib directory).
std::string major_minor(std::string_view version) {
  const auto parts = text::split(version, '.');
  if (parts.size() < 2) return {};
  return fmt::format("{}.{}", parts[0], parts[1]);
}

bool numeric_version(std::string_view v) {
  const auto parts = text::split(v, '.');
  return parts.size() >= 2 && text::to_uint(parts[0]) && text::to_uint(parts[1]);
}

// Compares dotted versions part by part, numerically where both parts are numbers.
bool version_less(std::string_view a, std::string_view b) {
  const auto pa = text::split(a, '.'), pb = text::split(b, '.');
  for (std::size_t i = 0; i < std::min(pa.size(), pb.size()); ++i) {
    const auto na = text::to_uint(pa[i]), nb = text::to_uint(pb[i]);
    if (na && nb && *na != *nb) return *na < *nb;
    if (!(na && nb) && pa[i] != pb[i]) return pa[i] < pb[i];
  }
  return pa.size() < pb.size();
}

class Finder {
 public:
  explicit Finder(Context& ctx) : ctx_(ctx), root_(ctx.root()) {}

  PythonFacts run() {
    find_pyenv();
    scan_path();
    scan_prefix("VIRTUAL_ENV");
    scan_prefix("CONDA_PREFIX");
    for (auto& i : interpreters_) describe(i);
    PythonFacts f;
    f.interpreters = std::move(interpreters_);
    f.pyenv = std::move(pyenv_);
    return f;
  }

 private:
  // A directory's names; absent -> nullopt; unreadable -> nullopt and a Problem; a file named
  // where a directory was expected (a PATH entry) -> nullopt, silently. Each listed once.
  const std::optional<std::vector<std::string>>& list(const std::string& dir) {
    auto it = lists_.find(dir);
    if (it != lists_.end()) return it->second;
    std::optional<std::vector<std::string>> names;
    auto r = root_.list(dir);
    if (r)
      names = std::move(*r);
    else if (r.error().errno_ != ENOTDIR)
      ctx_.problem("python.interpreters", r.error());
    return lists_.emplace(dir, std::move(names)).first->second;
  }

  void find_pyenv() {
    std::optional<std::string> root;
    if (auto v = ctx_.env("PYENV_ROOT")) root = env_host_path(*v);
    if (!root) {
      if (auto home = ctx_.env("HOME"); home && env_host_path(*home))
        root = join_path(*env_host_path(*home), ".pyenv");
    }
    if (!root || !root_.exists(*root)) return;
    PyenvFacts p;
    p.root = *root;
    if (auto v = ctx_.env("PYENV_VERSION"); v && !text::trim(*v).empty()) {
      p.selected = parse::pyenv_versions(*v);
      p.selected_by = "PYENV_VERSION";
    } else if (auto text =
                   ctx_.read("python.pyenv", join_path(*root, "version"), Context::kSmallFile)) {
      p.selected = parse::pyenv_versions(*text);
      p.selected_by = join_path(*root, "version");
    }
    if (const auto& names = list(join_path(*root, "versions"))) p.installed = *names;
    std::sort(p.installed.begin(), p.installed.end(), version_less);
    pyenv_ = std::move(p);
  }

  bool is_shim_dir(const std::string& dir) const {
    if (text::base_name(dir) != "shims") return false;
    if (pyenv_ && dir == join_path(pyenv_->root, "shims")) return true;
    auto home = ctx_.env("HOME");
    auto h = home ? env_host_path(*home) : std::nullopt;
    return h && dir == join_path(join_path(*h, ".pyenv"), "shims");
  }

  // What a pyenv shim runs: `pyenv exec NAME` picks the first selected version that has NAME
  // (pyenv-exec, pyenv-which); "system" is the next NAME on PATH after the shims. A version may
  // be a prefix ("3.11") of installed ones (pyenv >= 2.3 takes the latest).
  std::optional<std::string> resolve_shim(const std::string& shim_dir, const std::string& name,
                                          const std::vector<std::string>& path_dirs) {
    const std::string root = parent_path(shim_dir);
    std::vector<std::string> selected;
    if (pyenv_ && pyenv_->root == root) {
      selected = pyenv_->selected;
    } else if (auto text =
                   ctx_.read("python.pyenv", join_path(root, "version"), Context::kSmallFile)) {
      selected = parse::pyenv_versions(*text);
    }
    if (selected.empty()) selected = {"system"};  // pyenv's default without a version file
    const auto& installed = list(join_path(root, "versions"));
    for (const auto& v : selected) {
      if (v == "system") {
        for (const auto& d : path_dirs)
          if (!is_shim_dir(d) && root_.exists(join_path(d, name))) return join_path(d, name);
        continue;
      }
      std::string version = v;
      if (installed && std::find(installed->begin(), installed->end(), v) == installed->end()) {
        std::string best;
        for (const auto& i : *installed)
          if (i.starts_with(v + ".") && (best.empty() || version_less(best, i))) best = i;
        if (!best.empty()) version = best;
      }
      const auto p =
          join_path(join_path(join_path(join_path(root, "versions"), version), "bin"), name);
      if (root_.exists(p)) return p;
    }
    return std::nullopt;
  }

  void scan_path() {
    const auto path = ctx_.env("PATH");
    if (!path) return;
    std::vector<std::string> dirs;
    for (const auto entry : text::split(*path, ':'))
      if (auto d = env_host_path(entry)) add_unique(dirs, *d);
    std::set<std::string> claimed;  // names found earlier on PATH
    for (const auto& dir : dirs) {
      const auto& names = list(dir);
      if (!names) continue;
      const bool shims = is_shim_dir(dir);
      for (const auto& name : *names) {
        if (!parse::python_program_version(name)) continue;
        const bool first = claimed.insert(name).second;
        std::optional<std::string> p = join_path(dir, name);
        if (shims) p = resolve_shim(dir, name, dirs);
        if (p) add(*p, shims ? "pyenv shim" : "PATH", first ? name : std::string());
      }
    }
  }

  void scan_prefix(const char* variable) {
    const auto value = ctx_.env(variable);
    if (!value) return;
    const auto prefix = env_host_path(*value);
    if (!prefix) return;
    const auto bin = join_path(*prefix, "bin");
    const auto& names = list(bin);
    if (!names) return;
    for (const auto& name : *names)
      if (parse::python_program_version(name)) add(join_path(bin, name), variable, {});
  }

  // Python finds its prefix from the path it was started as, not the resolved one: a venv is
  // the directory with pyvenv.cfg beside the executable or one above (site.py, PEP 405).
  std::optional<std::string> venv_of(const std::string& path) const {
    const auto bin = parent_path(path);
    for (const auto& d : {bin, parent_path(bin)})
      if (root_.exists(join_path(d, "pyvenv.cfg"))) return d;
    return std::nullopt;
  }

  void add(const std::string& path, const std::string& via, const std::string& command) {
    auto resolved = root_.resolve(path);
    if (!resolved) {
      ctx_.problem("python.interpreters", resolved.error());
      return;
    }
    if (!*resolved) return;  // a dangling link
    const auto venv = venv_of(path);
    const auto prefix = venv ? *venv : parent_path(parent_path(**resolved));
    const auto key = prefix + '\n' + **resolved;
    auto it = index_.find(key);
    if (it == index_.end()) {
      Interpreter i;
      i.path = path;
      i.resolved = **resolved;
      i.prefix = prefix;
      i.source = venv ? "venv" : "";
      interpreters_.push_back(std::move(i));
      it = index_.emplace(key, interpreters_.size() - 1).first;
    }
    auto& i = interpreters_[it->second];
    if (path != i.path) add_unique(i.aliases, path);
    add_unique(i.found_via, via);
    if (!command.empty()) add_unique(i.commands, command);
  }

  void describe(Interpreter& i);
  void find_version(Interpreter& i, const std::optional<parse::PyvenvCfg>& cfg);
  std::vector<std::string> site_dirs(const std::string& prefix, const std::string& xy);
  void read_package_dir(Interpreter& i, const std::string& dir);
  void read_torch(Interpreter& i, const std::string& dir, const std::vector<std::string>& names,
                  const std::vector<Distribution>& dists);

  Context& ctx_;
  const host::Root& root_;
  std::map<std::string, std::optional<std::vector<std::string>>> lists_;
  std::vector<Interpreter> interpreters_;
  std::map<std::string, std::size_t> index_;
  std::optional<PyenvFacts> pyenv_;
};

void Finder::describe(Interpreter& i) {
  std::optional<parse::PyvenvCfg> cfg;
  if (i.source == "venv") {
    if (auto text = ctx_.read("python.interpreters", join_path(i.prefix, "pyvenv.cfg"),
                              Context::kSmallFile))
      cfg = parse::pyvenv_cfg(*text);
  } else if (root_.exists(join_path(i.prefix, "conda-meta"))) {
    i.source = "conda";
  } else if (pyenv_ && i.resolved.starts_with(join_path(pyenv_->root, "versions") + "/")) {
    i.source = "pyenv";
  } else {
    i.source = i.found_via.front() == "VIRTUAL_ENV"    ? "venv"
               : i.found_via.front() == "CONDA_PREFIX" ? "conda"
                                                       : "PATH";
  }
  find_version(i, cfg);
  if (!i.version) return;
  const auto xy = major_minor(*i.version);
  if (xy.empty()) return;
  std::vector<std::string> dirs;
  if (cfg) {
    dirs.push_back(fmt::format("{}/lib/python{}/site-packages", i.prefix, xy));
    if (cfg->include_system_site_packages.value_or(false) && cfg->home)
      if (auto home = env_host_path(*cfg->home))
        for (auto& d : site_dirs(parent_path(*home), xy)) dirs.push_back(std::move(d));
  } else {
    dirs = site_dirs(i.prefix, xy);
  }
  for (const auto& d : dirs) read_package_dir(i, d);
}

void Finder::find_version(Interpreter& i, const std::optional<parse::PyvenvCfg>& cfg) {
  auto set = [&](std::string v, const char* source) {
    i.version = std::move(v);
    i.version_source = source;
  };
  if (cfg && cfg->version) return set(*cfg->version, "pyvenv.cfg");
  if (i.source == "conda")
    if (const auto& names = list(join_path(i.prefix, "conda-meta")))
      for (const auto& n : *names)
        if (auto v = parse::conda_meta_version(n, "python")) return set(*v, "conda-meta");
  if (i.source == "pyenv") {
    const auto rest = i.resolved.substr(pyenv_->root.size() + 10);  // after "/versions/"
    const auto name = rest.substr(0, rest.find('/'));
    if (numeric_version(name)) return set(name, "pyenv");
  }
  // The version in the program's name: the resolved file first (python3 -> python3.11).
  std::string from_name = parse::python_program_version(text::base_name(i.resolved)).value_or("");
  if (from_name.find('.') == std::string::npos)
    from_name = parse::python_program_version(text::base_name(i.path)).value_or(from_name);
  if (from_name.find('.') != std::string::npos) {
    // Debian's python3.X-dev and every source build install patchlevel.h beside the program.
    const auto header = fmt::format("{}/include/python{}/patchlevel.h", i.prefix, from_name);
    if (auto text = ctx_.read("python.interpreters", header, Context::kSmallFile))
      if (auto v = parse::py_version_define(*text); v && major_minor(*v) == from_name)
        return set(*v, "patchlevel.h");
    return set(from_name, "file name");
  }
  // "python3" with nothing better: the one pythonX.Y directory in the prefix's lib.
  std::vector<std::string> found;
  if (const auto& names = list(join_path(i.prefix, "lib")))
    for (const auto& n : *names)
      if (auto v = parse::python_program_version(n);
          v && v->find('.') != std::string::npos &&
          (from_name.empty() || v->starts_with(from_name + ".")))
        found.push_back(*v);
  if (found.size() == 1) return set(found.front(), "lib dir");
  if (!from_name.empty()) set(from_name, "file name");
}

// Where a non-venv Python looks for packages, in sys.path order (site.py; Debian adds
// dist-packages under /usr/local and /usr, python3-minimal's site.py patch). Only those present.
std::vector<std::string> Finder::site_dirs(const std::string& prefix, const std::string& xy) {
  std::vector<std::string> out;
  if (auto home = ctx_.env("HOME"))
    if (auto h = env_host_path(*home))
      out.push_back(fmt::format("{}/.local/lib/python{}/site-packages", *h, xy));
  const auto major = xy.substr(0, xy.find('.'));
  out.push_back(fmt::format("{}/local/lib/python{}/dist-packages", prefix, xy));
  out.push_back(fmt::format("{}/lib/python{}/dist-packages", prefix, major));
  out.push_back(fmt::format("{}/lib/python{}/dist-packages", prefix, xy));
  out.push_back(fmt::format("{}/lib/python{}/site-packages", prefix, xy));
  return out;
}

void Finder::read_package_dir(Interpreter& i, const std::string& dir) {
  if (!host::Root::check_path(dir)) return;
  const auto& names = list(dir);
  if (!names) return;
  PackageDir pd;
  pd.path = dir;
  for (const auto& n : *names) {
    if (auto d = parse::distribution_dir(n))
      pd.distributions.push_back(Distribution{d->name, d->version, join_path(dir, n)});
    else if (n.ends_with(".libs"))
      pd.bundled_lib_dirs.push_back(n);
  }
  if (!i.torch) read_torch(i, dir, *names, pd.distributions);
  i.package_dirs.push_back(std::move(pd));
}

void Finder::read_torch(Interpreter& i, const std::string& dir,
                        const std::vector<std::string>& names,
                        const std::vector<Distribution>& dists) {
  TorchFacts t;
  t.location = join_path(dir, "torch");
  if (std::binary_search(names.begin(), names.end(), std::string("torch"))) {
    const auto path = join_path(t.location, "version.py");
    if (auto text = ctx_.read("python.torch", path, Context::kSmallFile)) {
      t.sources.push_back("version.py");
      const auto a = parse::python_assignments(*text);
      using Kind = parse::PyLiteral::Kind;
      auto str = [&](const char* key) -> std::optional<std::string> {
        const auto it = a.find(key);
        if (it == a.end() || it->second.kind != Kind::kString) return std::nullopt;
        return it->second.text;
      };
      t.version = str("__version__");
      if (!t.version) ctx_.problem("python.torch", path, "no __version__ = '...' line");
      t.cuda = str("cuda");
      if (const auto it = a.find("cuda"); it != a.end() && it->second.kind == Kind::kNone)
        t.cuda_build = false;
      if (t.cuda) t.cuda_build = !t.cuda->empty();
      if (t.cuda && t.cuda->empty()) t.cuda.reset();
      t.hip = str("hip");
      t.git_version = str("git_version");
      if (const auto it = a.find("debug"); it != a.end() && it->second.kind == Kind::kBool)
        t.debug = it->second.flag;
    }
  }
  for (const auto& d : dists) {
    if (d.name != "torch") continue;
    const bool egg = d.path.ends_with(".egg-info");
    const auto file = join_path(d.path, egg ? "PKG-INFO" : "METADATA");
    auto text = ctx_.read("python.torch", file, Context::kSmallFile);
    if (!text) continue;
    const auto m = parse::core_metadata(*text);
    t.metadata = d.path;
    t.metadata_version = m.version ? m.version : std::optional<std::string>(d.version);
    t.sources.push_back(egg ? "egg-info" : "dist-info");
    for (const auto& r : m.requires_dist) {
      if (r.name.starts_with("nvidia-cudnn-")) t.cudnn = r.pinned();
      if (r.name.starts_with("nvidia-nccl-")) t.nccl = r.pinned();
    }
    if (!t.version) t.version = t.metadata_version;
    break;
  }
  if (!t.sources.empty()) i.torch = std::move(t);
}

}  // namespace

PythonFacts collect_python(Context& ctx) {
  return Finder(ctx).run();
}

}  // namespace dltune::inventory
