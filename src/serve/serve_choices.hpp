#pragma once
// serve's options as the command line gave them, checked into what sample_once and
// serve_until_stopped take: every option is checked, --once or not, so that a command line tried
// with --once works without it.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "serve/session.hpp"

namespace dltune::serve {

struct ServeChoices {
  ExporterChoice exporter;  // its gpus, nvml_library and node_name are set from the environment
  std::string listen = "127.0.0.1:9464";  // --listen
  std::string web_config;                 // --web-config FILE
  bool no_host_metrics = false;           // --no-host-metrics: only what node_exporter lacks
  bool no_gpus = false;                   // --no-gpus
  int max_connections = 8;                // --max-connections
  int per_address = 0;                    // --max-connections-per-address; 0: half the above
  std::string user;                       // --user
  bool as_root = false;                   // --as-root
  bool once = false;                      // --once: one exposition, no server
  bool json = false;                      // --json (with --once)
};

struct ServeSetup {
  ExporterOptions options;
  // For the server (not --once): the address, the limits, the web configuration and whom to
  // become; its `say` and `tell` are the caller's to set.
  ServeRequest request;
  std::optional<std::string> warning;  // keeping root with --as-root
};

// The choices, checked: the exporter's options from `root`, --listen, --web-config (through the
// HTTP module), --json only with --once, and without --once who to run as, from `euid` and
// --user/--as-root/SUDO_USER. `environment` gives DLTUNE_NVML_LIBRARY, NODE_NAME and SUDO_USER.
// A refused option is bad input; an HTTP module that cannot load is not.
[[nodiscard]] tl::expected<ServeSetup, Failure> setup_serve(
    const host::Root& root, ServeChoices choices, uid_t euid,
    const std::map<std::string, std::string>& environment);

}  // namespace dltune::serve
