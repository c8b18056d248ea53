// The nvidia-* wheels a CUDA build of torch loads (audit/cuda_wheels.hpp). From PyPI's torch
// wheels (1.13 on) and download.pytorch.org's: their METADATA pins nvidia-<library>-cu<major>
// wheels (Requires-Dist), which install into site-packages/nvidia/<library>/lib, and torch's
// libraries load them from there (libtorch_cuda.so's RUNPATH; torch/__init__.py's
// _load_global_deps preloads them from sys.path). The cuDNN check is
// torch/backends/cudnn/__init__.py's (runtime major equal, runtime minor not older).
#include "audit/cuda_wheels.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/core.h>

#include "audit/cuda_driver_table.hpp"
#include "core/text.hpp"
#include "settings/gpu_judge.hpp"

namespace dltune::audit {

using namespace settings::gpu_judge;

namespace {

// The libraries torch loads itself, by the wheel name's library part (torch/__init__.py's
// cuda_libs across torch 1.13 to 2.9).
bool torch_loads(const std::string& lib) {
  static const std::set<std::string> kLibs = {
      "cublas",     "cuda-cupti", "cuda-nvrtc", "cuda-runtime", "cudnn",
      "cufft",      "cufile",     "curand",     "cusolver",     "cusparse",
      "cusparselt", "nvjitlink",  "nvshmem",    "nccl",         "nvtx"};
  return kLibs.count(lib) != 0;
}

struct Wheel {
  std::string lib;  // "cudnn" of nvidia-cudnn-cu12
  int major = 0;    // 12
  const inventory::Distribution* dist = nullptr;
};

// "nvidia-cudnn-cu12" -> ("cudnn", 12); nullopt for a name without a -cu<major> suffix (CUDA 13's
// nvidia-cublas, nvidia-cuda-runtime: their version says the CUDA, not their name).
std::optional<std::pair<std::string, int>> split_name(const std::string& name) {
  constexpr std::string_view kPrefix = "nvidia-";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  const auto dash = name.rfind("-cu");
  if (dash == std::string::npos || dash <= kPrefix.size()) return std::nullopt;
  const std::string digits = name.substr(dash + 3);
  if (digits.empty() || digits.size() > 2 || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      }))
    return std::nullopt;
  const int major = std::stoi(digits);
  if (major == 0) return std::nullopt;
  return std::make_pair(name.substr(kPrefix.size(), dash - kPrefix.size()), major);
}

// The nvidia-*-cu<major> wheels in torch's own package directory: torch loads from there
// (site-packages/nvidia/<library>/lib, by RUNPATH), and there a library's wheels for two CUDA
// majors share one directory. Wheels in other directories of sys.path are not torch's.
std::vector<Wheel> wheels_of(const inventory::Interpreter& py, const std::string& torch_dir) {
  std::vector<Wheel> out;
  for (const auto& pd : py.package_dirs) {
    if (pd.path != torch_dir) continue;
    for (const auto& d : pd.distributions)
      if (auto n = split_name(d.name)) {
        Wheel w;
        w.lib = n->first;
        w.major = n->second;
        w.dist = &d;
        out.push_back(w);
      }
  }
  return out;
}

// The wheel of `lib` for CUDA `major`.
const Wheel* find(const std::vector<Wheel>& wheels, const std::string& lib, int major) {
  for (const auto& w : wheels)
    if (w.lib == lib && w.major == major) return &w;
  return nullptr;
}

std::string wheel_label(const Wheel& w) {
  return w.dist->version.empty() ? w.dist->name : w.dist->name + " " + w.dist->version;
}

bool same_version(const std::string& a, const std::string& b) {
  if (const auto c = compare_driver_versions(a, b)) return *c == std::strong_ordering::equal;
  return a == b;
}

// The leading numbers of "8.9.2.26": {8, 9, 2}; fewer when the version has fewer.
std::vector<int> leading(const std::string& v, std::size_t count) {
  std::vector<int> out;
  for (const auto part : text::split(v, '.')) {
    if (out.size() == count) break;
    const auto n = text::to_uint(part);
    if (!n || *n > 100000) break;
    out.push_back(static_cast<int>(*n));
  }
  return out;
}

std::string version_tuple(const std::string& v) {
  auto n = leading(v, 3);
  while (n.size() < 3) n.push_back(0);
  return fmt::format("({}, {}, {})", n[0], n[1], n[2]);
}

// What one torch install's findings share.
struct Subject {
  const settings::ProfileEntry* entry = nullptr;
  const inventory::Interpreter* py = nullptr;
  const inventory::TorchFacts* torch = nullptr;
  CudaVersion cuda;
  std::string who;  // "torch 2.3.1+cu121 in /opt/conda/bin/python"
  std::string cv;   // "12.1"
  std::vector<Wheel> wheels;

  [[nodiscard]] std::string python() const { return text::shell_quote(py->path); }
  [[nodiscard]] Evidence torch_evidence() const {
    return {torch->location + "/version.py", fmt::format("cuda = '{}'", *torch->cuda)};
  }
  // pip's requirement for this torch from PyTorch's index: the version without its local label
  // ("2.3.1" of "2.3.1+cu121"; == matches any local label).
  [[nodiscard]] std::string torch_requirement() const {
    if (!torch->version) return "torch";
    return "torch==" + torch->version->substr(0, torch->version->find('+'));
  }
};

// Wheels built for another CUDA major than torch's: those of the libraries torch loads
// (`torch_libs`), or the others.
void other_majors(const Subject& s, bool torch_libs, std::vector<Finding>& out) {
  std::vector<const Wheel*> found;
  for (const auto& w : s.wheels)
    if (w.major != s.cuda.major && torch_loads(w.lib) == torch_libs) found.push_back(&w);
  if (found.empty()) return;
  const auto& e = *s.entry;
  Finding f =
      frame(e, fmt::format("nvidia-*-cu{} wheels only (torch's CUDA {})", s.cuda.major, s.cv));
  f.severity = torch_libs ? not_met(e) : std::min(Severity::kWarn, not_met(e));
  f.evidence.push_back(s.torch_evidence());
  std::set<int> majors;
  std::vector<std::string> listed, labels, names, reinstall;
  bool every_lib_has_its_own = true;
  for (const auto* w : found) {
    majors.insert(w->major);
    const auto* own = find(s.wheels, w->lib, s.cuda.major);
    listed.push_back(fmt::format("{} ({})", wheel_label(*w),
                                 own ? "beside " + wheel_label(*own)
                                     : fmt::format("no nvidia-{}-cu{}", w->lib, s.cuda.major)));
    labels.push_back(wheel_label(*w));
    if (std::find(names.begin(), names.end(), w->dist->name) == names.end())
      names.push_back(w->dist->name);
    f.evidence.push_back({w->dist->path, wheel_label(*w)});
    if (own == nullptr || own->dist->version.empty()) {
      every_lib_has_its_own = false;
      continue;
    }
    f.evidence.push_back({own->dist->path, wheel_label(*own)});
    const auto pin = text::shell_quote(own->dist->name + "==" + own->dist->version);
    if (std::find(reinstall.begin(), reinstall.end(), pin) == reinstall.end())
      reinstall.push_back(pin);
  }
  std::vector<std::string> major_names;
  for (const int m : majors) major_names.push_back(std::to_string(m));
  const std::string other = text::join(major_names, " and ");
  f.actual = text::join(labels, ", ");
  f.summary = fmt::format("{} (CUDA {}) has {} for CUDA {}: {}", s.who, s.cv,
                          found.size() == 1 ? "a wheel built" : "wheels built", other,
                          text::join(listed, ", "));
  if (torch_libs) {
    f.notes.push_back(fmt::format(
        "torch loads these libraries from site-packages/nvidia/<library>/lib (libtorch_cuda.so's "
        "RUNPATH, and torch/__init__.py's preloading), and a library's wheels for CUDA {} and "
        "CUDA {} install into that same directory. Where their file names agree (cuDNN 8's "
        "libcudnn.so.8 in both, NCCL's libnccl.so.2) the wheel pip installed last owns the file, "
        "and torch built for CUDA {} loads a library built for CUDA {}: undefined symbols at "
        "import or CUDA errors at the first call. Where torch's own wheel is missing, import "
        "torch fails (\"cannot open shared object file\").",
        other, s.cuda.major, s.cv, other));
  } else {
    f.notes.push_back(fmt::format(
        "torch does not load these libraries itself, but a package that does loads a CUDA {} "
        "library into a process whose torch uses CUDA {}; and where a library's wheels for both "
        "are installed, they share one directory (site-packages/nvidia/<library>) and overwrite "
        "each other's files.",
        other, s.cv));
  }
  f.notes.push_back(fmt::format(
      "pip keeps the wheels of a torch it replaced with a build for another CUDA, and another "
      "package (TensorFlow, JAX, CuPy) can bring its own: {} -m pip show {} names the packages "
      "that require it (Required-by); such a package needs an environment of its own.",
      s.python(), names.front()));
  const std::string uninstall =
      fmt::format("{} -m pip uninstall -y {}", s.python(), text::join(names, " "));
  std::string command;
  if (every_lib_has_its_own)
    command = fmt::format("{} && {} -m pip install --force-reinstall --no-deps {}", uninstall,
                          s.python(), text::join(reinstall, " "));
  else if (torch_libs)
    command = fmt::format(
        "{} && {} -m pip install --force-reinstall {} --index-url "
        "https://download.pytorch.org/whl/cu{}{}",
        uninstall, s.python(), text::shell_quote(s.torch_requirement()), s.cuda.major,
        s.cuda.minor);
  else
    command = uninstall;
  if (command != uninstall)
    f.notes.push_back(
        every_lib_has_its_own
            ? "Uninstall first, then reinstall torch's own wheels: uninstalling a wheel deletes "
              "the files it shares with the other one, which the reinstall puts back."
            : fmt::format("Uninstall first, then reinstall torch with its wheels from "
                          "PyTorch's index for CUDA {} (download.pytorch.org/whl/cu{}{}), which "
                          "puts back torch's own libraries.",
                          s.cv, s.cuda.major, s.cuda.minor));
  f.fix = Fix{command, false};
  out.push_back(std::move(f));
}

// The installed wheel of a library whose version torch's metadata pins (nvidia-cudnn-cu12==…),
// when it is another version.
void pinned(const Subject& s, const char* what, const std::string& lib,
            const std::optional<std::string>& pin, std::vector<Finding>& out) {
  if (!pin) return;
  const auto* w = find(s.wheels, lib, s.cuda.major);
  if (w == nullptr || w->dist->version.empty() || same_version(w->dist->version, *pin)) return;
  const auto& e = *s.entry;
  const std::string& name = w->dist->name;
  const std::string& have = w->dist->version;
  Finding f = frame(e, fmt::format("{} {} (torch's Requires-Dist)", name, *pin));
  f.actual = wheel_label(*w);
  f.summary = fmt::format("{} pins {} {}, and {} is installed", s.who, name, *pin, have);
  const auto& meta = s.torch->metadata;
  f.evidence.push_back({meta ? *meta + (meta->ends_with(".egg-info") ? "/PKG-INFO" : "/METADATA")
                             : s.torch->location,
                        fmt::format("Requires-Dist: {}=={}", name, *pin)});
  f.evidence.push_back({w->dist->path, wheel_label(*w)});
  f.severity = std::min(Severity::kWarn, not_met(e));
  const auto built = leading(*pin, 2);
  const auto runs = leading(have, 2);
  const std::string version = s.torch->version.value_or("");
  if (lib == "cudnn" && !built.empty() && !runs.empty() && built[0] != runs[0]) {
    f.severity = not_met(e);
    f.notes.push_back(fmt::format(
        "torch {} was built against cuDNN {} and loads libcudnn.so.{}, which {} {} does not "
        "have (it has libcudnn.so.{}): import torch fails (\"libcudnn.so.{}: cannot open shared "
        "object file\"), unless another libcudnn.so.{} is on the loader's path.",
        version, *pin, built[0], name, have, runs[0], built[0], built[0]));
  } else if (lib == "cudnn" && built.size() == 2 && runs.size() == 2 && runs[1] < built[1]) {
    f.severity = not_met(e);
    f.notes.push_back(fmt::format(
        "torch checks at its first cuDNN call that the cuDNN it loads is not older than the one "
        "it was built against: RuntimeError \"cuDNN version incompatibility: PyTorch was "
        "compiled against {} but found runtime version {}\", and convolutions fail.",
        version_tuple(*pin), version_tuple(have)));
  } else {
    f.notes.push_back(fmt::format(
        "torch {} was built and tested with {} {}; pip check reports the difference as a broken "
        "requirement. {}",
        version, what, *pin,
        lib == "nccl" ? "NCCL 2 keeps one file name (libnccl.so.2), so torch loads whichever is "
                        "installed: an older one can lack functions torch calls (undefined "
                        "symbol), a newer one changes algorithms, defaults and bugs."
                      : "Another release of the same major runs, with its own kernels, speed "
                        "and bugs."));
  }
  f.notes.push_back(
      "If another package needs the installed version, pip names it when you install the pinned "
      "one; give that package an environment of its own.");
  f.fix =
      Fix{fmt::format("{} -m pip install {}", s.python(), text::shell_quote(name + "==" + *pin)),
          false};
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> judge_cuda_wheels(const settings::ProfileEntry& e,
                                       const inventory::Interpreter& py) {
  if (!py.torch) return {};
  const auto& torch = *py.torch;
  if (torch.hip || torch.cuda_build == false || !torch.cuda) return {};
  const auto cuda = parse_cuda_version(*torch.cuda);
  if (!cuda) return {};
  Subject s;
  s.entry = &e;
  s.py = &py;
  s.torch = &torch;
  s.cuda = *cuda;
  s.who = fmt::format("torch {} in {}", torch.version.value_or("?"), py.path);
  s.cv = fmt::format("{}.{}", cuda->major, cuda->minor);
  s.wheels = wheels_of(py, inventory::parent_path(torch.location));
  // torch loads NVIDIA's wheels when its metadata requires them, or when its package directory
  // has those of its CUDA; otherwise (torch before 1.13, Debian's, conda's) its cuDNN is in
  // torch/lib or the system's, and the wheels are not its concern.
  const bool own_wheels = std::any_of(s.wheels.begin(), s.wheels.end(),
                                      [&](const Wheel& w) { return w.major == cuda->major; });
  if (!torch.cudnn && !torch.nccl && !own_wheels) return {};
  std::vector<Finding> out;
  other_majors(s, /*torch_libs=*/true, out);
  other_majors(s, /*torch_libs=*/false, out);
  pinned(s, "cuDNN", "cudnn", torch.cudnn, out);
  pinned(s, "NCCL", "nccl", torch.nccl, out);
  return out;
}

}  // namespace dltune::audit
