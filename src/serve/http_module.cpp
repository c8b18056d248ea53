#include "serve/http_module.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include "core/shared_library.hpp"

namespace dltune::serve {

namespace {

// The directory of the running program, from /proc/self/exe (the link the kernel keeps to it,
// whatever argv[0] says).
std::string program_directory() {
  std::string path(4096, '\0');
  const auto n = ::readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return ".";
  path.resize(static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

Result<const HttpModule*> load() {
  const std::string dir = program_directory();
  const std::string places[] = {dir + "/" + kHttpModuleFile,
                                dir + "/../lib/dltune/" + kHttpModuleFile};
  std::string why;
  for (const auto& path : places) {
    if (::access(path.c_str(), F_OK) != 0) {
      why += fmt::format("\n  {}: not there", path);
      continue;
    }
    auto so = SharedLibrary::open(path, "`dltune serve` (and `slurm report`)", "dltune");
    if (!so) return tl::unexpected(so.error());
    using Entry = const HttpModule* (*)();
    Entry entry = nullptr;
    if (auto ok = so->resolve(entry, kHttpModuleSymbol); !ok) return tl::unexpected(ok.error());
    const HttpModule* m = entry();
    if (m == nullptr || m->layout != http_module_layout() || m->bind == nullptr ||
        m->load_web_config == nullptr || m->get == nullptr)
      return fail(
          fmt::format("{} was built from other sources than this dltune (rebuild both, "
                      "or reinstall the package)",
                      path));
    so->keep_loaded();  // the table points into it
    return m;
  }
  return fail("cannot find serve's HTTP module (" + std::string(kHttpModuleFile) +
              "), which is built and installed with dltune:" + why);
}

}  // namespace

Result<const HttpModule*> http_module() {
  static const Result<const HttpModule*> loaded = load();
  return loaded;
}

}  // namespace dltune::serve
