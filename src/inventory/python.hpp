#pragma once
// Python interpreters (PATH, active venv/conda, pyenv) with their versions, and torch found in
// their package directories, read from torch's own files (never by importing it).
#include <optional>
#include <string>
#include <vector>

#include "core/json_fwd.hpp"
#include "core/sections.hpp"
#include "inventory/context.hpp"

namespace dltune::inventory {

// torch as its files describe it: torch/version.py and its dist-info (pip) or egg-info (Debian).
struct TorchFacts {
  std::string location;                    // the torch package directory
  std::optional<std::string> version;      // version.py __version__, else the metadata's Version
  std::optional<std::string> cuda;         // version.py `cuda`: the CUDA it was built for
  std::optional<bool> cuda_build;          // false when version.py says cuda = None
  std::optional<std::string> hip;          // version.py `hip` (ROCm builds)
  std::optional<std::string> git_version;  // version.py `git_version`
  std::optional<bool> debug;               // version.py `debug`
  std::optional<std::string> cudnn;        // pinned by Requires-Dist: nvidia-cudnn-cu*
  std::optional<std::string> nccl;         // pinned by Requires-Dist: nvidia-nccl-cu*
  std::optional<std::string> metadata;     // the dist-info / egg-info directory
  std::optional<std::string> metadata_version;  // its Version
  std::vector<std::string> sources;             // "version.py", "dist-info", "egg-info"
};

// An installed distribution (a dist-info or egg-info directory in a package directory).
struct Distribution {
  std::string name;     // normalised: "nvidia-cudnn-cu12"
  std::string version;  // from the directory name ("" when it has none)
  std::string path;     // the dist-info / egg-info directory
};

struct PackageDir {
  std::string path;
  // Not in the JSON: kept for the CUDA stack (nvidia-* wheels, mkl) so that no package directory
  // is listed twice.
  std::vector<Distribution> distributions;
  std::vector<std::string> bundled_lib_dirs;  // "numpy.libs", "scipy.libs" (auditwheel)
};

struct Interpreter {
  std::string path;                    // the first path it was found at
  std::vector<std::string> aliases;    // other paths that run the same interpreter
  std::string resolved;                // with every link followed
  std::vector<std::string> commands;   // names that run it from PATH (it is first on PATH for them)
  std::string source;                  // "venv", "conda", "pyenv" or "PATH"
  std::vector<std::string> found_via;  // "PATH", "pyenv shim", "VIRTUAL_ENV", "CONDA_PREFIX"
  std::string prefix;                  // sys.prefix: the venv, conda env, or installation
  std::optional<std::string> version;  // "3.11.2", or "3.11" from the file name
  std::optional<std::string> version_source;  // "pyvenv.cfg", "conda-meta", "pyenv",
                                              // "patchlevel.h", "lib dir", "file name"
  std::vector<PackageDir> package_dirs;       // in sys.path order; those that exist
  std::optional<TorchFacts> torch;            // the torch that `import torch` would find
};

struct PyenvFacts {
  std::string root;                    // $PYENV_ROOT, else ~/.pyenv
  std::vector<std::string> selected;   // PYENV_VERSION or $PYENV_ROOT/version
  std::string selected_by;             // "PYENV_VERSION" or the version file's path
  std::vector<std::string> installed;  // $PYENV_ROOT/versions
};

struct PythonFacts {
  std::vector<Interpreter> interpreters;
  std::optional<PyenvFacts> pyenv;
};

[[nodiscard]] PythonFacts collect_python(Context& ctx);
[[nodiscard]] Json to_json(const PythonFacts& f);
[[nodiscard]] std::vector<text::Section> render_python(const PythonFacts& f);

// A host path from an environment variable or a PATH entry, in normal form; nullopt when it is
// relative or outside the locations a Root may read (such entries are skipped, not reported).
[[nodiscard]] std::optional<std::string> env_host_path(std::string_view value);
// "/a/b" + "c" -> "/a/b/c"; "/" + "c" -> "/c".
[[nodiscard]] std::string join_path(std::string_view dir, std::string_view name);
// "/a/b/c" -> "/a/b"; "/a" -> "/".
[[nodiscard]] std::string parent_path(std::string_view path);

}  // namespace dltune::inventory
