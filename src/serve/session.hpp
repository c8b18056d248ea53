#pragma once
// `serve` as library calls: one exposition for --once, and the server that runs until it is
// told to stop, started as root only to bind and then running as an unprivileged user.
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "serve/exporter.hpp"
#include "serve/http.hpp"

namespace dltune::serve {

// Whom serve becomes when started as root.
struct Unprivileged {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
};
// `user`, else `sudo_user` (SUDO_USER; unless empty or root), else nobody. Root itself is refused
// (keeping root is what --as-root is for); errors name --user.
[[nodiscard]] Result<Unprivileged> unprivileged_user(const std::string& user,
                                                     const std::string& sudo_user);
// Who serve runs as, from the effective uid it starts with: as root, `become` (--user, else the
// sudo user, else nobody) unless `as_root`, which keeps root with a warning; not root, --user is
// refused (only root can become another user).
struct Identity {
  std::optional<Unprivileged> become;
  std::optional<std::string> warning;
};
[[nodiscard]] Result<Identity> choose_identity(uid_t euid, const std::string& user, bool as_root,
                                               const std::string& sudo_user);

// The exporter's options from serve's: --cgroup paths as /proc/PID/cgroup shows them, the
// check's profile (a name or file, read through `root`; "" is training) unless `no_check`.
struct ExporterChoice {
  std::int64_t interval_ns = 5'000'000'000;
  std::int64_t check_interval_ns = 300'000'000'000;
  std::vector<std::string> cgroups;
  std::string profile;
  bool no_check = false;
  bool gpus = true;
  std::string nvml_library;
  // NODE_NAME from Kubernetes' downward API (spec.nodeName): the Hostname label, as
  // dcgm-exporter takes it. Empty: the host's own name.
  std::string node_name;
};
[[nodiscard]] Result<ExporterOptions> exporter_options(const host::Root& root,
                                                       const ExporterChoice& choice);

// setgroups, setgid, setuid, in that order (setuid last: it takes away the right to do the
// others), then a check that root cannot be taken back.
[[nodiscard]] Result<void> drop_to(const Unprivileged& u);

// Messages of the exporter (a source switched off, a failed check), for a person.
using Tell = std::function<void(const std::vector<std::string>&)>;

// Two samples (rates need two) at most a second apart, the check run in between: the exporter,
// with its exposition and JSON, for --once. An error when a sample fails (its messages told).
[[nodiscard]] Result<std::unique_ptr<Exporter>> sample_once(const host::Root& root,
                                                            ExporterOptions options,
                                                            const Tell& tell);

struct ServeRequest {
  ListenAddress address;
  HttpLimits limits;
  // --web-config: TLS, basic auth, headers, a request rate; loaded before root is dropped.
  std::optional<WebConfig> web;
  std::optional<Unprivileged> become;  // dropped to once the address is bound
  // Told what happened: "bound as root, now running as NAME (uid N)", "listening on HOST:PORT".
  std::function<void(const std::string&)> say;
  Tell tell;
};

// Why serving ended early: `bind` when the address could not be bound (the user's to change:
// another port, an address of this host), else a failure of the host or the exporter.
struct ServeFailure {
  Error error;
  bool bind = false;
};

// Binds, drops root when asked, starts sampling and serving, and runs until a signal of
// `stop_set` comes (which the caller has blocked in every thread: it is taken here,
// synchronously); then stops the server and the exporter.
[[nodiscard]] tl::expected<void, ServeFailure> serve_until_signal(const host::Root& root,
                                                                  ExporterOptions options,
                                                                  const ServeRequest& request,
                                                                  const sigset_t& stop_set);
// The same until SIGINT or SIGTERM, which it blocks in every thread it starts (and takes
// synchronously); SIGPIPE is ignored (a client that goes away is no reason to die). The signal
// mask is restored on return. An address others can reach is said first when nothing asks them
// who they are (exposure_warning).
[[nodiscard]] tl::expected<void, ServeFailure> serve_until_stopped(const host::Root& root,
                                                                   ExporterOptions options,
                                                                   const ServeRequest& request);

}  // namespace dltune::serve
