#pragma once
// The files that describe a Python installation and its packages without running it:
// pyvenv.cfg, a module of literal assignments (torch/version.py), core metadata (METADATA,
// PKG-INFO) with its Requires-Dist lines, dist-info/egg-info directory names, conda-meta record
// names, patchlevel.h and pyenv's version file.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dltune::host::parse {

// pyvenv.cfg ("key = value" lines; Python's site.py ignores lines without '=').
// venv writes `version = 3.11.2`; virtualenv writes `version_info = 3.11.2.final.0`.
struct PyvenvCfg {
  std::optional<std::string> home;     // the base interpreter's bin directory
  std::optional<std::string> version;  // "3.11.2"
  std::optional<bool> include_system_site_packages;
};
[[nodiscard]] PyvenvCfg pyvenv_cfg(std::string_view text);

// A Python literal on the right of a top-level assignment.
struct PyLiteral {
  enum class Kind { kNone, kBool, kString, kOther } kind = Kind::kOther;
  std::string text;   // kString: the string's value; kOther: the source text
  bool flag = false;  // kBool
};
// `NAME = literal` and `NAME: annotation = literal` at column 0, trailing comments removed;
// strings in ' " ''' """ with r/u prefixes. The first assignment of each name is kept.
[[nodiscard]] std::map<std::string, PyLiteral, std::less<>> python_assignments(
    std::string_view text);

// A Requires-Dist value (PEP 508, and the older "name (==1.0)" form):
// "nvidia-cudnn-cu12 (==8.9.2.26) ; platform_system == \"Linux\"".
struct Requirement {
  std::string name;       // normalised (PEP 503): "nvidia-cudnn-cu12"
  std::string specifier;  // "==8.9.2.26", ">=2.0,<3", "" when none
  std::string marker;     // "platform_system == \"Linux\"", "" when none
  // The version when the specifier pins exactly one ("==8.9.2.26", "===1.0").
  [[nodiscard]] std::optional<std::string> pinned() const;
};
[[nodiscard]] std::optional<Requirement> requirement(std::string_view value);

// Core metadata (dist-info/METADATA, egg-info/PKG-INFO): the header part, before the first
// blank line (the description follows it).
struct CoreMetadata {
  std::optional<std::string> name;
  std::optional<std::string> version;
  std::vector<Requirement> requires_dist;
};
[[nodiscard]] CoreMetadata core_metadata(std::string_view text);

// "Foo_Bar.baz" -> "foo-bar-baz" (PEP 503).
[[nodiscard]] std::string normalize_name(std::string_view name);

// "nvidia_cudnn_cu12-9.1.0.70.dist-info" -> {"nvidia-cudnn-cu12", "9.1.0.70"};
// "torch-1.13.0a0+gitunknown.egg-info" -> {"torch", "1.13.0a0+gitunknown"};
// "six-1.16.0-py3.11.egg-info" -> {"six", "1.16.0"}; "foo.egg-info" -> {"foo", ""}.
struct DistributionDir {
  std::string name;  // normalised
  std::string version;
  bool egg_info = false;
};
[[nodiscard]] std::optional<DistributionDir> distribution_dir(std::string_view dir_name);

// conda-meta records are named NAME-VERSION-BUILD.json; the version of package `package`:
// ("python-3.11.9-h955ad1f_0.json", "python") -> "3.11.9", and nullopt for
// "python-dateutil-2.8.2-pyhd3eb1b0_0.json" or "python_abi-3.11-2_cp311.json".
[[nodiscard]] std::optional<std::string> conda_meta_version(std::string_view file_name,
                                                            std::string_view package);

// patchlevel.h: `#define PY_VERSION "3.11.2"`.
[[nodiscard]] std::optional<std::string> py_version_define(std::string_view text);

// pyenv's version file ($PYENV_ROOT/version, .python-version): names separated by white space
// or new lines, '#' comment lines. PYENV_VERSION separates them with ':'.
[[nodiscard]] std::vector<std::string> pyenv_versions(std::string_view text);

// "python3.11" -> "3.11", "python3" -> "3", "python" -> ""; nullopt for other programs
// ("python3-config", "python3.11-gdb.py", "pythonw").
[[nodiscard]] std::optional<std::string> python_program_version(std::string_view file_name);

}  // namespace dltune::host::parse
