// The endpoints of `dltune serve` (http.hpp).
#include "serve/http.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <mutex>

#include <fmt/core.h>

#include "serve/basic_auth.hpp"
#include "serve/connection.hpp"
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

}  // namespace

namespace {

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

bool has_body(const httplib::Request& req) {
  const auto length = req.get_header_value("Content-Length");
  return (!length.empty() && length != "0") || req.has_header("Transfer-Encoding");
}

class HttplibServer final : public MetricsServer {
 public:
  ~HttplibServer() override { stop(); }
  [[nodiscard]] const ListenAddress& bound() const override { return bound_; }
  void run() override {
    (void)server->listen_after_bind();  // false after stop() too: nothing to tell apart
  }
  [[nodiscard]] bool running() const override { return server && server->is_running(); }
  void stop() override {
    if (server) server->stop();
  }

  HttpLimits limits;
  std::unique_ptr<httplib::Server> server;  // a detail::LimitedServer or LimitedTlsServer
  std::unique_ptr<BasicAuth> auth;
  std::unique_ptr<RequestRate> rate;
  ListenAddress bound_;
};

}  // namespace

Result<std::unique_ptr<MetricsServer>> bind_metrics_server(const ListenAddress& address,
                                                           const HttpLimits& limits,
                                                           MetricsSource& exporter,
                                                           const WebConfig* web) {
  auto m = std::make_unique<HttplibServer>();
  auto& impl = *m;
  impl.limits = limits;
  if (web != nullptr && web->tls) {
    // The context every connection gets: the files loaded now, and again when renewed. The
    // library's own context is never used for a connection (LimitedTlsServer takes the
    // reloader's), so it is left as OpenSSL makes it.
    auto reloader = TlsContextReloader::load(*web->tls, web->file);
    if (!reloader) return tl::unexpected(reloader.error());
    const std::function<bool(SSL_CTX&)> unused = [](SSL_CTX&) { return true; };
    auto server = std::make_unique<detail::LimitedTlsServer>(limits, unused);
    if (!server->is_valid()) return fail(web->file + ": cannot set up TLS (OpenSSL)");
    server->set_reloader(std::move(*reloader));
    impl.server = std::move(server);
  } else {
    impl.server = std::make_unique<detail::LimitedServer>(limits);
  }
  if (web != nullptr && !web->basic_auth_users.empty())
    impl.auth = std::make_unique<BasicAuth>(web->basic_auth_users);
  if (web != nullptr && web->rate_limit.interval_ns > 0)
    impl.rate = std::make_unique<RequestRate>(web->rate_limit);
  auto& s = *impl.server;
  if (web != nullptr && !web->headers.empty()) {
    httplib::Headers headers;
    for (const auto& [name, value] : web->headers) headers.emplace(name, value);
    s.set_default_headers(std::move(headers));
  }
  const HttpLimits l = limits;
  s.new_task_queue = [l] { return new detail::WorkerPool(l.workers, l.queued); };
  // A backstop: bodies are refused before they are read (below).
  s.set_payload_max_length(1024);
  // What the Keep-Alive header tells clients (LimitedServer enforces the limits themselves), and
  // the socket timeouts the accept loop sets.
  s.set_keep_alive_max_count(limits.requests_per_connection);
  s.set_keep_alive_timeout(std::max<time_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(limits.idle_timeout).count()));
  const auto io_s = std::chrono::duration_cast<std::chrono::seconds>(limits.io_timeout).count();
  s.set_read_timeout(io_s);
  s.set_write_timeout(io_s);

  s.set_pre_routing_handler([&impl](const httplib::Request& req, httplib::Response& res) {
    // As the toolkit: the rate first, then the credentials, on every path (/healthz too).
    if (impl.rate && !impl.rate->allow()) {
      res.status = 429;
      res.set_content("Too Many Requests\n", kTextType);
      if (has_body(req)) detail::close_after_this_request();
      return httplib::Server::HandlerResponse::Handled;
    }
    // The password is neither logged nor kept: a failure is only the 401.
    if (impl.auth && !impl.auth->allows(req.get_header_value("Authorization"))) {
      res.status = 401;
      res.set_header("WWW-Authenticate", "Basic");
      res.set_content("Unauthorized\n", kTextType);
      if (has_body(req)) detail::close_after_this_request();
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content(
          fmt::format("{} is not allowed: serve is read-only (GET, HEAD)\n", req.method),
          kTextType);
      detail::close_after_this_request();  // its body, if any, was not read
      return httplib::Server::HandlerResponse::Handled;
    }
    if (has_body(req)) {
      res.status = 413;
      res.set_content("no endpoint takes a request body\n", kTextType);
      detail::close_after_this_request();
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  s.Get("/metrics", [&exporter](const httplib::Request&, httplib::Response& res) {
    auto e = exporter.exposition();
    if (!e) {
      res.status = 503;
      res.set_content("no sample yet\n", kTextType);
      return;
    }
    // The scrape counter is the only family that changes per scrape: rendered here, after the
    // published text, which is written as it is (no copy).
    std::string tail = exporter.count_scrape_text();
    const std::size_t size = e->text.size() + tail.size();
    res.set_content_provider(
        size, kMetricsType,
        [e = std::move(e), tail = std::move(tail)](std::size_t offset, std::size_t length,
                                                   httplib::DataSink& out) {
          const std::string& head = e->text;
          if (offset < head.size())
            return out.write(head.data() + offset, std::min(length, head.size() - offset));
          offset -= head.size();
          return out.write(tail.data() + offset, std::min(length, tail.size() - offset));
        });
  });
  s.Get("/healthz", [&exporter](const httplib::Request&, httplib::Response& res) {
    const auto h = exporter.health();
    res.status = h.ok ? 200 : 503;
    res.set_content(h.why + "\n", kTextType);
  });
  s.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(kIndex, "text/html; charset=utf-8");
  });
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404)
      res.set_content(fmt::format("not found: {} (serve has /metrics, /healthz and /)\n", req.path),
                      kTextType);
  });

  m->bound_ = address;
  if (address.port == 0) {
    const int port = s.bind_to_any_port(address.host);
    if (port <= 0) return fail("cannot listen on", address.text(), errno);
    m->bound_.port = port;
  } else if (!s.bind_to_port(address.host, address.port)) {
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
  return std::unique_ptr<MetricsServer>(std::move(m));
}

}  // namespace dltune::serve
