#include "core/shared_library.hpp"

#include <dlfcn.h>

#include <fmt/core.h>

namespace dltune {

struct SharedLibrary::Handle {
  void* h = nullptr;
  ~Handle() {
    if (h != nullptr) ::dlclose(h);
  }
};

Result<SharedLibrary> SharedLibrary::open(const std::string& soname, std::string_view needed_by,
                                          std::string_view package) {
  auto handle = std::make_shared<Handle>();
  handle->h = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle->h == nullptr) {
    const char* e = ::dlerror();
    return fail(fmt::format("cannot load {}, which {} needs (Debian package {}): {}", soname,
                            needed_by, package, e != nullptr ? e : "dlopen failed"));
  }
  return SharedLibrary(std::move(handle), soname);
}

void SharedLibrary::keep_loaded() const {
  // One reference that is never released: the handle outlives every copy of this object, and
  // the process's exit too. A static vector would be destroyed at exit and dlclose the library
  // while what it allocated is still referenced from its own globals (ncurses' screen): the
  // leak checker, which runs after the static destructors, then reports it all as leaked.
  static std::mutex mu;
  static auto* kept = new std::vector<std::shared_ptr<Handle>>;
  std::lock_guard lock(mu);
  kept->push_back(handle_);
}

Result<void*> SharedLibrary::address(const char* name) const {
  ::dlerror();
  void* p = ::dlsym(handle_->h, name);
  if (p == nullptr)
    return fail(fmt::format("{} has no function {} (a version too old or not the real one)",
                            soname_, name));
  return p;
}

}  // namespace dltune
