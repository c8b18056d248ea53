#include "serve/session.hpp"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include <fmt/core.h>

#include "serve/http_module.hpp"
#include "settings/catalog.hpp"

namespace dltune::serve {

Result<Unprivileged> unprivileged_user(const std::string& user, const std::string& sudo_user) {
  std::string name = user;
  if (name.empty()) name = !sudo_user.empty() && sudo_user != "root" ? sudo_user : "nobody";
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  const int rc = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (rc != 0 || found == nullptr)
    return fail("no such user (expected a user serve can run as)", "--user " + name, rc);
  if (pw.pw_uid == 0) return fail("is root: to keep root, say --as-root", "--user " + name);
  return Unprivileged{name, pw.pw_uid, pw.pw_gid};
}

Result<void> drop_to(const Unprivileged& u) {
  if (::setgroups(0, nullptr) != 0)
    return fail("cannot drop the supplementary groups", u.name, errno);
  if (::setgid(u.gid) != 0) return fail("cannot set the group of", u.name, errno);
  if (::setuid(u.uid) != 0) return fail("cannot become", u.name, errno);
  if (::setuid(0) == 0) return fail("could take root back after becoming", u.name);
  return {};
}

Result<std::unique_ptr<Exporter>> sample_once(const host::Root& root, ExporterOptions options,
                                              const Tell& tell) {
  const auto gap =
      std::chrono::nanoseconds(std::min<std::int64_t>(options.interval_ns, 1'000'000'000));
  auto exporter = Exporter::open(root, std::move(options));
  if (!exporter) return tl::unexpected(exporter.error());
  const auto first = std::chrono::steady_clock::now();
  if (auto ok = (*exporter)->sample(); !ok) {
    tell((*exporter)->take_messages());
    return tl::unexpected(ok.error());
  }
  (*exporter)->check();  // meanwhile
  std::this_thread::sleep_until(first + gap);
  const auto ok = (*exporter)->sample();
  tell((*exporter)->take_messages());
  if (!ok) return tl::unexpected(ok.error());
  return std::move(*exporter);
}

tl::expected<void, ServeFailure> serve_until_signal(const host::Root& root, ExporterOptions options,
                                                    const ServeRequest& request,
                                                    const sigset_t& stop_set) {
  auto exporter = Exporter::open(root, std::move(options));
  if (!exporter) return tl::unexpected(ServeFailure{exporter.error()});
  auto module = http_module();
  if (!module) return tl::unexpected(ServeFailure{module.error()});
  auto server = (*module)->bind(request.address, request.limits, **exporter,
                                request.web ? &*request.web : nullptr);
  if (!server) return tl::unexpected(ServeFailure{server.error(), true});
  // Root was needed at most to bind a port below 1024 (and to open NVML's devices): nothing
  // that serves a request or reads the host runs as root.
  if (request.become) {
    if (auto dropped = drop_to(*request.become); !dropped)
      return tl::unexpected(ServeFailure{dropped.error()});
    request.say(fmt::format("bound as root, now running as {} (uid {})", request.become->name,
                            request.become->uid));
  }
  (*exporter)->start();
  std::thread http([&] { (*server)->run(); });
  // The "listening on" line once the server runs (a stop() before would be kept, not lost).
  for (int i = 0; i < 5000 && !(*server)->running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // "listening on HOST:PORT": scripts and tests read the port from this line (--listen :0).
  request.say("listening on " + (*server)->bound().text());
  // Messages are told within this; a longer tick is a wakeup less while idle.
  const timespec tick{5, 0};
  for (;;) {
    request.tell((*exporter)->take_messages());
    if (::sigtimedwait(&stop_set, nullptr, &tick) > 0) break;
  }
  (*server)->stop();
  http.join();
  (*exporter)->stop();
  request.tell((*exporter)->take_messages());
  return {};
}

tl::expected<void, ServeFailure> serve_until_stopped(const host::Root& root,
                                                     ExporterOptions options,
                                                     const ServeRequest& request) {
  if (auto warning = exposure_warning(request.address, request.web ? &*request.web : nullptr))
    request.say(*warning);
  sigset_t stop_set, old;
  ::sigemptyset(&stop_set);
  ::sigaddset(&stop_set, SIGINT);
  ::sigaddset(&stop_set, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop_set, &old);
  ::signal(SIGPIPE, SIG_IGN);
  auto served = serve_until_signal(root, std::move(options), request, stop_set);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return served;
}

Result<Identity> choose_identity(uid_t euid, const std::string& user, bool as_root,
                                 const std::string& sudo_user) {
  Identity out;
  if (euid == 0 && !as_root) {
    auto who = unprivileged_user(user, sudo_user);
    if (!who) return tl::unexpected(who.error());
    out.become = *who;
  } else if (euid == 0) {
    out.warning =
        "running as root (--as-root), which serve does not need (it reads /proc, /sys, the "
        "cgroup files and NVML, as any user may)";
  } else if (!user.empty()) {
    return fail("--user " + user + ": only root can become another user");
  }
  return out;
}

Result<ExporterOptions> exporter_options(const host::Root& root, const ExporterChoice& choice) {
  ExporterOptions o;
  o.interval_ns = choice.interval_ns;
  o.check_interval_ns = choice.check_interval_ns;
  for (const auto& c : choice.cgroups)
    if (c.empty() || c[0] != '/' || c.find("..") != std::string::npos)
      return fail("expected an absolute cgroup path as /proc/PID/cgroup shows it (/dltune/run-1)",
                  "--cgroup " + c);
  o.cgroups = choice.cgroups;
  o.gpus = choice.gpus;
  o.nvml_library = choice.nvml_library;
  o.hostname = choice.node_name;
  if (choice.no_check && !choice.profile.empty())
    return fail("--profile and --no-check do not go together");
  if (!choice.no_check) {
    auto profile = settings::load_profile(choice.profile.empty() ? "training" : choice.profile,
                                          root, settings::validate_key);
    if (!profile) return fail("--profile: " + profile.error().message());
    o.profile = std::move(*profile);
  }
  return o;
}

}  // namespace dltune::serve
