#pragma once
// A C library that only some commands use, loaded with dlopen when one of them first needs it
// rather than by the dynamic loader at every start of every command: a linked library costs each
// start its mappings, page faults and relocations, and those of the libraries it needs
// (libarchive needs libxml2, ICU and nettle; libsystemd needs libgcrypt).
//
// The module that owns the library keeps including the library's own header, for its types and
// its functions' signatures, and resolves each function it calls by name into a pointer of that
// signature (decltype(&fn)), so a call cannot disagree with the header. Nothing links the
// library: a call that bypassed the table would fail to link.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace dltune {

class SharedLibrary {
 public:
  // dlopen(soname, RTLD_NOW | RTLD_LOCAL). The error names the library, what needs it and the
  // Debian package that has it:
  //   "cannot load libarchive.so.13, which `dltune capture` needs (Debian package libarchive13):
  //    libarchive.so.13: cannot open shared object file: No such file or directory"
  [[nodiscard]] static Result<SharedLibrary> open(const std::string& soname,
                                                  std::string_view needed_by,
                                                  std::string_view package);

  // The address of `name`, or an error naming the symbol and the library.
  [[nodiscard]] Result<void*> address(const char* name) const;

  // `name` as a pointer of the type of `Fn` (write `decltype(&archive_write_new)`).
  template <class Fn>
  [[nodiscard]] Result<void> resolve(Fn& out, const char* name) const {
    auto a = address(name);
    if (!a) return tl::unexpected(a.error());
    out = reinterpret_cast<Fn>(*a);
    return {};
  }

  // Resolves one function after another and keeps the first error, so that a table of them
  // reads as one line each: r(api.archive_write_new, "archive_write_new"); ...; r.error().
  class Resolver {
   public:
    explicit Resolver(const SharedLibrary& lib) : lib_(lib) {}
    template <class Fn>
    void operator()(Fn& out, const char* name) {
      if (error_) return;
      if (auto ok = lib_.resolve(out, name); !ok) error_ = ok.error();
    }
    [[nodiscard]] const std::optional<Error>& error() const { return error_; }

   private:
    const SharedLibrary& lib_;
    std::optional<Error> error_;
  };

  [[nodiscard]] const std::string& soname() const { return soname_; }

  // Opens `soname` and fills a table of its functions with `fill(resolver, table)`; the library
  // stays loaded for the rest of the process (the table points into it). Meant for a
  // function-local static, so that a library is opened once, on its first use:
  //   static const Result<ArchiveLib> lib = SharedLibrary::load_table<ArchiveLib>(...);
  template <class Table, class Fill>
  [[nodiscard]] static Result<Table> load_table(const std::string& soname,
                                                std::string_view needed_by,
                                                std::string_view package, Fill fill) {
    auto so = open(soname, needed_by, package);
    if (!so) return tl::unexpected(so.error());
    Table table;
    Resolver r(*so);
    fill(r, table);
    if (r.error()) return tl::unexpected(*r.error());
    so->keep_loaded();
    return table;
  }

  // Never dlclose this library, whatever becomes of this object and its copies.
  void keep_loaded() const;

 private:
  struct Handle;
  SharedLibrary(std::shared_ptr<Handle> h, std::string soname)
      : handle_(std::move(h)), soname_(std::move(soname)) {}
  std::shared_ptr<Handle> handle_;
  std::string soname_;
};

}  // namespace dltune
