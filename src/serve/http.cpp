// The endpoints of `dltune serve` (http.hpp), on libmicrohttpd.
#include "serve/http.hpp"

#include <microhttpd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <vector>

#include <fmt/core.h>

#include "serve/basic_auth.hpp"
#include "serve/gate.hpp"
#include "serve/tls_context.hpp"

namespace dltune::serve {

namespace {

// The content type of the text exposition format 0.0.4 (Prometheus's expfmt).
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kTextType = "text/plain; charset=utf-8";

constexpr const char* kIndex =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dltune serve</title></head>\n"
    "<body><h1>dltune serve</h1>\n<ul>\n"
    "<li><a href=\"metrics\">/metrics</a>: the host, its GPUs, its jobs and its check findings "
    "in the Prometheus text format</li>\n"
    "<li><a href=\"healthz\">/healthz</a>: ok when the last sample is recent</li>\n"
    "</ul></body></html>\n";

// The web config's rate_limit: a token bucket (as the toolkit's golang.org/x/time/rate), refilled
// at one token per interval up to `burst`; a request without a token is answered 429.
class RequestRate {
 public:
  explicit RequestRate(const RateLimit& r)
      : interval_ns_(r.interval_ns), burst_(r.burst), tokens_(r.burst) {}
  bool allow() {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (last_) {
      const double ns = static_cast<double>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now - *last_).count());
      tokens_ = std::min<double>(burst_, tokens_ + ns / static_cast<double>(interval_ns_));
    }
    last_ = now;
    if (tokens_ < 1) return false;
    tokens_ -= 1;
    return true;
  }

 private:
  std::mutex mu_;
  std::int64_t interval_ns_;
  int burst_;
  double tokens_;
  std::optional<std::chrono::steady_clock::time_point> last_;
};

// The threads of libmicrohttpd's pool: a request costs microseconds (the exposition is rendered
// by the sampler), but a wrong password costs a bcrypt on the thread that checks it, and that
// thread's other connections wait meanwhile.
unsigned pool_threads(const HttpLimits& l) {
  return static_cast<unsigned>(std::clamp<std::size_t>(l.workers / 2, 1, 4));
}

// The listening socket, bound to `address` (a name or an address; the first of getaddrinfo's
// answers that binds), non-blocking. The port it got goes to `port`. -1 with errno set.
int listen_on(const ListenAddress& address, int& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(address.port);
  if (const int rc = ::getaddrinfo(address.host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    errno = rc == EAI_SYSTEM ? errno : EADDRNOTAVAIL;
    return -1;
  }
  int fd = -1, err = EADDRNOTAVAIL;
  for (const addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      err = errno;
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    errno = err;
    return -1;
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
  return fd;
}

class MhdServer final : public MetricsServer {
 public:
  MhdServer(const HttpLimits& limits, MetricsSource& source, bool tls)
      : limits_(limits),
        source_(source),
        gate_(limits, tls, [this](int fd, const sockaddr* a, socklen_t n) {
          return ::MHD_add_connection(daemon_, fd, a, n) == MHD_YES;
        }) {}
  ~MhdServer() override {
    stop();
    if (daemon_ != nullptr) ::MHD_stop_daemon(daemon_);
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  [[nodiscard]] const ListenAddress& bound() const override { return bound_; }
  void run() override {
    running_ = true;
    gate_.run(listen_fd_);
    running_ = false;
  }
  [[nodiscard]] bool running() const override { return running_; }
  void stop() override { gate_.stop(); }

  // Starts libmicrohttpd's threads (with `files`' certificate and key over TLS); the error says
  // what it reported.
  Result<void> start(const TlsFiles* files, const std::string& priorities);

  ListenAddress bound_;
  int listen_fd_ = -1;
  std::unique_ptr<TlsContextReloader> reloader_;
  std::unique_ptr<BasicAuth> auth_;
  std::unique_ptr<RequestRate> rate_;
  std::vector<std::pair<std::string, std::string>> headers_;

 private:
  static MHD_Result answer(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char* version, const char* upload,
                           std::size_t* upload_size, void** request);
  static void notify_connection(void* cls, MHD_Connection* connection, void** context,
                                MHD_ConnectionNotificationCode code);
  static void notify_completed(void* cls, MHD_Connection* connection, void** request,
                               MHD_RequestTerminationCode code);
  static void log(void* cls, const char* format, va_list ap);

  // Answers one request whose headers are in (and whose body, if any, is not read).
  MHD_Result respond(MHD_Connection* connection, detail::Gate::Connection* c, const char* url,
                     const char* method);
  MHD_Result queue(MHD_Connection* connection, detail::Gate::Connection* c, unsigned status,
                   MHD_Response* response, const char* type);
  MHD_Result queue_text(MHD_Connection* connection, detail::Gate::Connection* c, unsigned status,
                        const std::string& text, const char* type = kTextType);

  HttpLimits limits_;
  MetricsSource& source_;
  detail::Gate gate_;
  MHD_Daemon* daemon_ = nullptr;
  std::atomic<bool> running_{false};
  // What libmicrohttpd says while starting (afterwards it is quiet: a hostile client's
  // connection is not worth a line).
  std::mutex log_mu_;
  bool starting_ = false;
  std::string start_log_;
};

Result<void> MhdServer::start(const TlsFiles* files, const std::string& priorities) {
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                   MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG;
  const unsigned threads = pool_threads(limits_);
  // The Gate holds the limit; libmicrohttpd's own (split between its threads) only backs it,
  // with room for the connections it has not yet counted out after their close notice.
  const unsigned connections = static_cast<unsigned>((limits_.workers + 8) * threads);
  const unsigned idle_s =
      static_cast<unsigned>(std::max<long long>(1, (limits_.idle_timeout.count() + 999) / 1000));
  // The request line and headers are read into the connection's memory pool, which also holds
  // the answer's headers.
  const std::size_t pool = limits_.max_request_bytes;
  // One list (MHD_OPTION_ARRAY: numbers in `value`, pointers in `ptr_value`, a callback's
  // function in `value` and its argument in `ptr_value`), the TLS ones added when serving TLS.
  const auto callback = [](auto fn) { return reinterpret_cast<std::intptr_t>(fn); };
  std::vector<MHD_OptionItem> options = {
      {MHD_OPTION_THREAD_POOL_SIZE, threads, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, connections, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, idle_s, nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<std::intptr_t>(pool), nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION, callback(&MhdServer::notify_connection), this},
      {MHD_OPTION_NOTIFY_COMPLETED, callback(&MhdServer::notify_completed), this},
      {MHD_OPTION_EXTERNAL_LOGGER, callback(&MhdServer::log), this}};
  if (files != nullptr) {
    flags |= MHD_USE_TLS;
    for (const auto& [option, text] : {std::pair{MHD_OPTION_HTTPS_MEM_KEY, &files->key_pem},
                                       std::pair{MHD_OPTION_HTTPS_MEM_CERT, &files->cert_pem},
                                       std::pair{MHD_OPTION_HTTPS_PRIORITIES, &priorities}})
      options.push_back({option, 0, const_cast<char*>(text->c_str())});
  }
  options.push_back({MHD_OPTION_END, 0, nullptr});
  {
    std::lock_guard lock(log_mu_);
    starting_ = true;
  }
  daemon_ = ::MHD_start_daemon(flags, 0, nullptr, nullptr, &MhdServer::answer, this,
                               MHD_OPTION_ARRAY, options.data(), MHD_OPTION_END);
  std::lock_guard lock(log_mu_);
  starting_ = false;
  if (daemon_ == nullptr)
    return fail(fmt::format("cannot start the HTTP server (libmicrohttpd): {}",
                            start_log_.empty() ? "no reason given" : start_log_));
  return {};
}

void MhdServer::log(void* cls, const char* format, va_list ap) {
  auto& s = *static_cast<MhdServer*>(cls);
  std::lock_guard lock(s.log_mu_);
  if (!s.starting_) return;
  char line[512];
  std::vsnprintf(line, sizeof line, format, ap);
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (!s.start_log_.empty()) s.start_log_ += "; ";
  s.start_log_ += text;
}

void MhdServer::notify_connection(void* cls, MHD_Connection* connection, void** context,
                                  MHD_ConnectionNotificationCode code) {
  auto& s = *static_cast<MhdServer*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    s.gate_.closed(static_cast<detail::Gate::Connection*>(*context));
    *context = nullptr;
    return;
  }
  const auto* fd = ::MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  detail::Gate::Connection* c = fd != nullptr ? s.gate_.started(fd->connect_fd) : nullptr;
  *context = c;
  if (s.reloader_ == nullptr) return;
  // Before the handshake: the session takes the credentials loaded now (a renewed certificate
  // from the next connection on) and the client-certificate policy, in place of the ones
  // libmicrohttpd set from the certificate it started with.
  const auto* tls = ::MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (tls == nullptr || tls->tls_session == nullptr) return;
  auto credentials = s.reloader_->acquire();
  credentials->apply(static_cast<gnutls_session_t>(tls->tls_session));
  if (c != nullptr) c->keep = std::move(credentials);
}

void MhdServer::notify_completed(void* cls, MHD_Connection* connection, void**,
                                 MHD_RequestTerminationCode) {
  auto& s = *static_cast<MhdServer*>(cls);
  const auto* info = ::MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  if (info != nullptr && info->socket_context != nullptr)
    s.gate_.request_done(*static_cast<detail::Gate::Connection*>(info->socket_context));
}

bool has_body(MHD_Connection* connection) {
  const char* length =
      ::MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  return (length != nullptr && std::string_view(length) != "0") ||
         ::MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                       MHD_HTTP_HEADER_TRANSFER_ENCODING) != nullptr;
}

MHD_Result MhdServer::answer(void* cls, MHD_Connection* connection, const char* url,
                             const char* method, const char*, const char*, std::size_t* upload_size,
                             void** request) {
  auto& s = *static_cast<MhdServer*>(cls);
  static int seen = 0;
  const auto* info = ::MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  auto* c =
      info != nullptr ? static_cast<detail::Gate::Connection*>(info->socket_context) : nullptr;
  if (*request == nullptr) {
    // The request's line and headers are in.
    *request = &seen;
    if (c != nullptr) (void)s.gate_.request_started(*c);
    const std::string_view m = method;
    // A body, or a method that is not served: answered now, before the body is read, and
    // libmicrohttpd closes the connection after the answer (it cannot find the next request).
    if ((m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) || has_body(connection))
      return s.respond(connection, c, url, method);
    return MHD_YES;  // the answer on the next call, with the connection kept alive
  }
  if (*upload_size != 0) {  // not reached: a body is refused above
    *upload_size = 0;
    return MHD_YES;
  }
  return s.respond(connection, c, url, method);
}

MHD_Result MhdServer::queue(MHD_Connection* connection, detail::Gate::Connection* c,
                            unsigned status, MHD_Response* response, const char* type) {
  if (response == nullptr) return MHD_NO;  // out of memory: the connection is closed
  ::MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  for (const auto& [name, value] : headers_)
    ::MHD_add_response_header(response, name.c_str(), value.c_str());
  if (c != nullptr && c->requests >= limits_.requests_per_connection)
    ::MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  const MHD_Result r = ::MHD_queue_response(connection, status, response);
  ::MHD_destroy_response(response);
  return r;
}

MHD_Result MhdServer::queue_text(MHD_Connection* connection, detail::Gate::Connection* c,
                                 unsigned status, const std::string& text, const char* type) {
  return queue(connection, c, status,
               ::MHD_create_response_from_buffer(text.size(), const_cast<char*>(text.data()),
                                                 MHD_RESPMEM_MUST_COPY),
               type);
}

MHD_Result MhdServer::respond(MHD_Connection* connection, detail::Gate::Connection* c,
                              const char* url, const char* method) {
  // As the toolkit: the rate first, then the credentials, on every path (/healthz too).
  if (rate_ && !rate_->allow())
    return queue_text(connection, c, MHD_HTTP_TOO_MANY_REQUESTS, "Too Many Requests\n");
  // The password is neither logged nor kept: a failure is only the 401.
  if (auth_) {
    const char* authorization =
        ::MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!auth_->allows(authorization != nullptr ? authorization : "")) {
      MHD_Response* r = ::MHD_create_response_from_buffer(13, const_cast<char*>("Unauthorized\n"),
                                                          MHD_RESPMEM_PERSISTENT);
      if (r != nullptr) ::MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Basic");
      return queue(connection, c, MHD_HTTP_UNAUTHORIZED, r, kTextType);
    }
  }
  const std::string_view m = method;
  if (m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) {
    MHD_Response* r = nullptr;
    const std::string text =
        fmt::format("{} is not allowed: serve is read-only (GET, HEAD)\n", method);
    r = ::MHD_create_response_from_buffer(text.size(), const_cast<char*>(text.data()),
                                          MHD_RESPMEM_MUST_COPY);
    if (r != nullptr) ::MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    return queue(connection, c, MHD_HTTP_METHOD_NOT_ALLOWED, r, kTextType);
  }
  if (has_body(connection))
    return queue_text(connection, c, MHD_HTTP_CONTENT_TOO_LARGE,
                      "no endpoint takes a request body\n");
  const std::string_view path = url;
  if (path == "/metrics") {
    auto e = source_.exposition();
    if (!e) return queue_text(connection, c, MHD_HTTP_SERVICE_UNAVAILABLE, "no sample yet\n");
    // The scrape counter is the only family that changes per scrape: rendered here, after the
    // published text, which is sent as it is (no copy).
    struct Body {
      std::shared_ptr<const Exposition> head;
      std::string tail;
    };
    auto* body = new Body{std::move(e), source_.count_scrape_text()};
    const MHD_IoVec parts[] = {{body->head->text.data(), body->head->text.size()},
                               {body->tail.data(), body->tail.size()}};
    MHD_Response* r = ::MHD_create_response_from_iovec(
        parts, 2, [](void* p) { delete static_cast<Body*>(p); }, body);
    if (r == nullptr) delete body;
    return queue(connection, c, MHD_HTTP_OK, r, kMetricsType);
  }
  if (path == "/healthz") {
    const auto h = source_.health();
    return queue_text(connection, c, h.ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE,
                      h.why + "\n");
  }
  if (path == "/")
    return queue(
        connection, c, MHD_HTTP_OK,
        ::MHD_create_response_from_buffer(std::char_traits<char>::length(kIndex),
                                          const_cast<char*>(kIndex), MHD_RESPMEM_PERSISTENT),
        "text/html; charset=utf-8");
  return queue_text(connection, c, MHD_HTTP_NOT_FOUND,
                    fmt::format("not found: {} (serve has /metrics, /healthz and /)\n", path));
}

}  // namespace

Result<std::unique_ptr<MetricsServer>> bind_metrics_server(const ListenAddress& address,
                                                           const HttpLimits& limits,
                                                           MetricsSource& source,
                                                           const WebConfig* web) {
  const bool tls = web != nullptr && web->tls;
  auto m = std::make_unique<MhdServer>(limits, source, tls);
  TlsFiles files;
  std::string priorities;
  if (tls) {
    // The credentials every connection gets: the files loaded now, and again when renewed.
    auto reloader = TlsContextReloader::load(*web->tls, web->file, files);
    if (!reloader) return tl::unexpected(reloader.error());
    m->reloader_ = std::move(*reloader);
    priorities = tls_priorities(*web->tls);
  }
  if (web != nullptr && !web->basic_auth_users.empty())
    m->auth_ = std::make_unique<BasicAuth>(web->basic_auth_users);
  if (web != nullptr && web->rate_limit.interval_ns > 0)
    m->rate_ = std::make_unique<RequestRate>(web->rate_limit);
  if (web != nullptr) m->headers_ = web->headers;

  m->bound_ = address;
  m->listen_fd_ = listen_on(address, m->bound_.port);
  if (m->listen_fd_ < 0) {
    const int err = errno;
    // 9464 is also the default of OpenTelemetry's Prometheus exporter, which a training job on
    // this host may run (docs/metrics.md, "The exporter").
    if (err == EADDRINUSE)
      return fail(fmt::format("cannot listen on {} (another program listens there: give "
                              "--listen another port)",
                              address.text()),
                  "", err);
    return fail("cannot listen on", address.text(), err);
  }
  if (auto ok = m->start(tls ? &files : nullptr, priorities); !ok) {
    if (tls) return fail(web->file + ": " + ok.error().message());
    return tl::unexpected(ok.error());
  }
  return std::unique_ptr<MetricsServer>(std::move(m));
}

}  // namespace dltune::serve
