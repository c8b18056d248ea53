// What building PyTorch's extensions needs (build.toolchain) and the BLAS that CPU math goes
// through (blas.library), each judged from the files alone.
#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "audit/system_rules.hpp"
#include "core/text.hpp"
#include "inventory/host_facts.hpp"

namespace dltune::audit {

namespace {

// The GCC majors whose C++ compiler proper is installed (/usr/lib/gcc/TRIPLET/N/cc1plus, the
// layout of Debian's and Red Hat's gcc packages), highest first.
std::vector<int> build_gcc_majors(const host::Root& root) {
  std::vector<int> out;
  for (const char* base : {"/usr/lib/gcc", "/usr/libexec/gcc"}) {
    auto triplets = root.list(base);
    if (!triplets || !*triplets) continue;
    for (const auto& t : **triplets) {
      auto versions = root.list(std::string(base) + "/" + t);
      if (!versions || !*versions) continue;
      for (const auto& v : **versions) {
        const auto major = text::to_uint(std::string_view(v).substr(0, v.find('.')));
        if (major && root.exists(std::string(base) + "/" + t + "/" + v + "/cc1plus"))
          out.push_back(static_cast<int>(*major));
      }
    }
  }
  std::sort(out.rbegin(), out.rend());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The major of the compiler `g++` runs: the version in the name its link leads to ("g++-12"),
// else the only one installed.
std::optional<int> build_default_gcc(const host::Root& root, const std::vector<int>& majors) {
  for (const char* gxx : {"/usr/bin/g++", "/usr/local/bin/g++"}) {
    if (!root.exists(gxx)) continue;
    auto real = root.resolve(gxx);
    if (real && *real) {
      const std::string& name = **real;
      if (const auto at = name.rfind("g++-"); at != std::string::npos)
        if (const auto major = text::to_uint(std::string_view(name).substr(at + 4)))
          return static_cast<int>(*major);
    }
    if (majors.size() == 1) return majors.front();
    return std::nullopt;
  }
  return std::nullopt;
}

// The newest GCC major nvcc accepts, from the toolkit's include/crt/host_config.h ("#if __GNUC__
// > 13" before its "unsupported GNU version" #error).
std::optional<int> build_nvcc_gcc_limit(const host::Root& root, const std::string& toolkit) {
  auto text = root.read(toolkit + "/include/crt/host_config.h", 1 << 20);
  if (!text || !*text) return std::nullopt;
  static const std::regex kLimit(R"(#if\s+__GNUC__\s*>\s*(\d+))");
  std::smatch m;
  const std::string& t = **text;
  const auto err = t.find("unsupported GNU version");
  if (err == std::string::npos) return std::nullopt;
  // The last such test before the #error is the one it guards.
  std::optional<int> limit;
  for (auto it = std::sregex_iterator(t.begin(), t.begin() + static_cast<long>(err), kLimit);
       it != std::sregex_iterator(); ++it)
    limit = std::stoi((*it)[1].str());
  return limit;
}

// "3.11.2" -> "3.11".
std::string build_major_minor(const std::string& version) {
  const auto dot = version.find('.');
  const auto second = dot == std::string::npos ? dot : version.find('.', dot + 1);
  return second == std::string::npos ? version : version.substr(0, second);
}

}  // namespace

std::vector<Finding> build_toolchain(const AuditInput& in, const settings::ProfileEntry& entry) {
  std::vector<const inventory::Interpreter*> with_torch;
  for (const auto& i : in.facts.python.interpreters)
    if (i.torch) with_torch.push_back(&i);
  if (with_torch.empty())
    return {not_applicable(entry, "environment",
                           "no Python here imports torch: nothing builds its extensions")};
  std::vector<std::string> missing, packages, other_actions, have;
  std::vector<Evidence> ev;
  const auto majors = build_gcc_majors(in.root);
  const auto gcc = build_default_gcc(in.root, majors);
  if (!in.root.exists("/usr/bin/g++") && !in.root.exists("/usr/local/bin/g++")) {
    missing.push_back("a C++ compiler (g++)");
    packages.push_back("g++");
  } else {
    have.push_back(gcc ? fmt::format("g++ {}", *gcc) : std::string("g++"));
    ev.push_back({"/usr/bin/g++", gcc ? fmt::format("GCC {}", *gcc) : "present"});
  }
  for (const auto* i : with_torch) {
    if (!i->version) continue;
    const std::string xy = build_major_minor(*i->version);
    bool found = false;
    for (const auto& dir : {i->prefix + "/include/python" + xy, "/usr/include/python" + xy,
                            "/usr/local/include/python" + xy}) {
      if (in.root.exists(dir + "/Python.h")) {
        found = true;
        ev.push_back({dir + "/Python.h", fmt::format("headers of Python {} ({})", xy, i->path)});
        break;
      }
    }
    if (!found) {
      missing.push_back(fmt::format("the headers of Python {} ({})", xy, i->path));
      // conda's and pyenv's Pythons carry their headers in their own package or build; a venv
      // and a system Python take them from the distribution's.
      if (i->source == "conda")
        other_actions.push_back(fmt::format("conda install python={} (in {})", xy, i->prefix));
      else if (i->source == "pyenv")
        other_actions.push_back(fmt::format("pyenv install --force {}", *i->version));
      else
        packages.push_back(fmt::format("python{}-dev", xy));
    } else {
      have.push_back("Python.h " + xy);
    }
  }
  bool ninja = false;
  for (const auto* i : with_torch) {
    const auto slash = i->path.rfind('/');
    if (slash != std::string::npos && in.root.exists(i->path.substr(0, slash) + "/ninja"))
      ninja = true;
  }
  for (const char* n : {"/usr/bin/ninja", "/usr/local/bin/ninja"})
    ninja = ninja || in.root.exists(n);
  if (ninja) {
    have.push_back("ninja");
  } else {
    missing.push_back("ninja (torch.utils.cpp_extension builds with it)");
    packages.push_back("ninja-build");
  }
  // nvcc builds the .cu files with the host's g++, which it accepts only up to a version.
  std::vector<std::string> notes;
  for (const auto& t : in.facts.cuda.toolkits) {
    if (!t.nvcc) continue;
    const auto limit = build_nvcc_gcc_limit(in.root, t.path);
    if (!limit || !gcc) continue;
    ev.push_back({t.path + "/include/crt/host_config.h", fmt::format("GCC up to {}", *limit)});
    if (*gcc <= *limit) continue;
    const bool older =
        std::any_of(majors.begin(), majors.end(), [&](int m) { return m <= *limit; });
    missing.push_back(fmt::format("a g++ that CUDA {}'s nvcc accepts (up to {}; g++ is {})",
                                  t.version.value_or("?"), *limit, *gcc));
    packages.push_back(fmt::format("g++-{}", *limit));
    notes.push_back(fmt::format(
        "{}then build with CC=gcc-{} CXX=g++-{} (nvcc takes it from there, or NVCC_CCBIN)",
        older ? "an older g++ is installed: " : "", *limit, *limit));
  }
  Finding f = judge(entry, "environment", missing.empty() ? "true" : "false", std::move(ev));
  f.actual = missing.empty() ? text::join(have, ", ") : "missing " + text::join(missing, ", ");
  f.notes = std::move(notes);
  if (missing.empty()) {
    f.summary = fmt::format("PyTorch's extensions can be built here ({})", text::join(have, ", "));
  } else {
    f.summary =
        fmt::format("building PyTorch's C++/CUDA extensions needs {}", text::join(missing, ", "));
    std::sort(packages.begin(), packages.end());
    packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
    if (!packages.empty())
      other_actions.insert(other_actions.begin(), "apt-get install " + text::join(packages, " "));
    f.fix = Fix{text::join(other_actions, "; "), false};
  }
  container_advice(in, f, "");
  return {f};
}

std::vector<Finding> blas_library(const AuditInput& in, const settings::ProfileEntry& entry) {
  const auto& blas = in.facts.cuda.blas;
  const auto selected = std::find_if(blas.begin(), blas.end(), [](const inventory::BlasFinding& b) {
    return b.selected_as.has_value();
  });
  if (selected == blas.end())
    return {not_applicable(entry, "environment",
                           "no system libblas.so.3 (a torch wheel brings its own BLAS)")};
  const bool reference = selected->name == "reference BLAS";
  Finding f =
      judge(entry, "environment", reference ? "false" : "true",
            {{*selected->selected_as, fmt::format("{} ({})", selected->name, selected->path)}});
  f.actual = fmt::format("{} as {}", selected->name, *selected->selected_as);
  if (!reference) {
    f.summary = fmt::format("{} is {}{}", *selected->selected_as, selected->name,
                            selected->version ? " " + *selected->version : "");
  } else {
    const bool openblas =
        std::any_of(blas.begin(), blas.end(),
                    [](const inventory::BlasFinding& b) { return b.name == "OpenBLAS"; });
    f.summary = fmt::format(
        "{} is the reference BLAS, unoptimised and single-threaded: CPU matrix products of every "
        "program linked to it (Debian's python3-torch and python3-numpy among them) run many "
        "times slower than with OpenBLAS",
        *selected->selected_as);
    f.fix = Fix{openblas ? "update-alternatives --config libblas.so.3-x86_64-linux-gnu "
                           "(choose OpenBLAS), and the same for liblapack.so.3"
                         : "apt-get install libopenblas0-pthread (its alternative then takes "
                           "precedence over the reference BLAS)",
                false};
  }
  container_advice(in, f, "");
  return {f};
}

}  // namespace dltune::audit
