#include "serve/session.hpp"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include <fmt/format.h>

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
  auto server = MetricsServer::bind(request.address, request.limits, **exporter);
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
  // stop() does nothing to a server that has not started listening yet: wait for it.
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

}  // namespace dltune::serve
