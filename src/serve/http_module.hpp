#pragma once
// The HTTP module: serve's server (cpp-httplib, OpenSSL), its web config (yaml-cpp, bcrypt
// through libcrypt) and the client `slurm report` asks Prometheus with, built as a shared object of
// its own (dltune-serve-http.so) that the program loads with dlopen when serve starts. Linked into
// the program, these libraries and theirs (brotli, zlib, libcrypto's configuration read at load)
// were a third of every command's start-up (bench/README.md, "Start-up"); no other command uses
// them.
//
// The module is found beside the program (a build directory: build/PRESET/) or in
// ../lib/dltune/ from it (an install: /usr/bin/dltune, /usr/lib/dltune/dltune-serve-http.so).
// It is built from the same sources in the same build as the program; the table says which
// layout it was built with, and one that differs is refused rather than called.
#include <cstddef>
#include <memory>
#include <string>

#include "core/error.hpp"
#include "serve/http.hpp"
#include "serve/http_client.hpp"
#include "serve/web_config.hpp"

namespace dltune::serve {

// What the module exports, under the C name in kHttpModuleSymbol.
struct HttpModule {
  // Must equal http_module_layout() of the program that loads it.
  std::size_t layout = 0;
  Result<std::unique_ptr<MetricsServer>> (*bind)(const ListenAddress& address,
                                                 const HttpLimits& limits, MetricsSource& source,
                                                 const WebConfig* web) = nullptr;
  Result<WebConfig> (*load_web_config)(const std::string& path) = nullptr;
  Result<HttpReply> (*get)(const HttpGet& request) = nullptr;
};

inline constexpr const char* kHttpModuleFile = "dltune-serve-http.so";
inline constexpr const char* kHttpModuleSymbol = "dltune_serve_http_module";

// The sizes of what crosses between program and module, folded into one number: a module built
// from other sources than the program (left behind by an older build) has another.
[[nodiscard]] constexpr std::size_t http_module_layout() {
  return (sizeof(HttpModule) * 31 + sizeof(WebConfig)) * 31 * 31 + sizeof(HttpLimits) * 31 +
         sizeof(ListenAddress) + sizeof(Exposition) * 7 + sizeof(Health) * 13 +
         sizeof(Result<WebConfig>) * 17 + sizeof(HttpGet) * 19 + sizeof(HttpReply) * 23 +
         sizeof(HttpUrl) * 29;
}

// The module, loaded on the first call (the later ones return the same table or the same
// error). The error names each place looked in and why it failed there.
[[nodiscard]] Result<const HttpModule*> http_module();

}  // namespace dltune::serve
