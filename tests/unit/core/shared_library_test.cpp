// Libraries loaded when a command first needs them (core/shared_library.hpp): a real one from
// the system (libz, which every Debian system has), the errors for a missing library and a
// missing function, and the program's own link, which must not name what is loaded this way.
#include "core/shared_library.hpp"
#include "support/build_paths.hpp"

#include <zlib.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/run.hpp"

namespace dltune::shared_library_test {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(SharedLibrary, ResolvesARealLibrarysFunctionsByTheirDeclaredTypes) {
  auto z = SharedLibrary::open("libz.so.1", "this test", "zlib1g");
  ASSERT_TRUE(z) << z.error().message();
  decltype(&::zlibVersion) version = nullptr;
  decltype(&::crc32) crc = nullptr;
  SharedLibrary::Resolver r(*z);
  r(version, "zlibVersion");
  r(crc, "crc32");
  ASSERT_FALSE(r.error()) << r.error()->message();
  EXPECT_STREQ(version(), ::zlibVersion());
  const char* text = "dltune";
  const auto bytes = reinterpret_cast<const Bytef*>(text);
  const auto n = static_cast<uInt>(std::strlen(text));
  EXPECT_EQ(crc(0, bytes, n), ::crc32(0, bytes, n));
}

TEST(SharedLibrary, AMissingLibraryNamesItWhatNeedsItAndItsPackage) {
  auto so = SharedLibrary::open("libdltune-none.so.9", "`dltune frobnicate`", "libdltune-none9");
  ASSERT_FALSE(so);
  const auto m = so.error().message();
  EXPECT_NE(m.find("cannot load libdltune-none.so.9"), std::string::npos) << m;
  EXPECT_NE(m.find("`dltune frobnicate` needs"), std::string::npos) << m;
  EXPECT_NE(m.find("Debian package libdltune-none9"), std::string::npos) << m;
  EXPECT_NE(m.find("No such file"), std::string::npos) << m;  // dlerror's own words
}

TEST(SharedLibrary, AMissingFunctionIsNamedAndTheFirstErrorKept) {
  auto z = SharedLibrary::open("libz.so.1", "this test", "zlib1g");
  ASSERT_TRUE(z) << z.error().message();
  decltype(&::zlibVersion) version = nullptr, absent = nullptr, later = nullptr;
  SharedLibrary::Resolver r(*z);
  r(absent, "zlibFrobnicate");
  r(later, "zlibAlsoAbsent");
  r(version, "zlibVersion");
  ASSERT_TRUE(r.error());
  EXPECT_EQ(absent, nullptr);
  EXPECT_NE(r.error()->message().find("libz.so.1 has no function zlibFrobnicate"),
            std::string::npos)
      << r.error()->message();
}

// What only some commands use is loaded by them, never at every start: the program's own
// dynamic section names none of these (bench/run-startup-bench measures what that saves).
TEST(SharedLibrary, TheProgramDoesNotLinkWhatOnlySomeCommandsLoad) {
  const auto r = testing::run({"readelf", "--dynamic", DLTUNE_BINARY});
  if (r.err == "spawn failed") GTEST_SKIP() << "readelf (binutils) is not installed";
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("(NEEDED)"), std::string::npos) << r.out;
  std::vector<std::string> loaded_later = {
      "libarchive", "libsystemd", "libcpp-httplib", "libssl",      "libcrypto", "libyaml-cpp",
      "libbrotli",  "libsqlite3", "libhwloc",       "libncursesw", "libtinfo",  "libudev"};
  // A sanitized program links libcrypt for the sanitizers' crypt_r interceptor (CMakeLists.txt).
  if (!kSanitized) loaded_later.push_back("libcrypt.so");
  for (const auto& lib : loaded_later)
    EXPECT_EQ(r.out.find("[" + lib), std::string::npos) << lib << " is linked:\n" << r.out;
}

}  // namespace
}  // namespace dltune::shared_library_test
