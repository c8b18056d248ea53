// The endpoints of `dltune serve` (http.hpp).
#include "serve/http.hpp"

#include <arpa/inet.h>

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "serve/connection.hpp"

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

std::string ListenAddress::text() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

Result<ListenAddress> parse_listen(std::string_view text) {
  const auto bad = [&] {
    return fail("expected HOST:PORT (127.0.0.1:9464, [::1]:9464, 0.0.0.0:9464 or :9464), not",
                "--listen '" + std::string(text) + "'");
  };
  ListenAddress a;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return bad();
    a.host = std::string(text.substr(1, close - 1));
    in6_addr v6{};
    if (::inet_pton(AF_INET6, a.host.c_str(), &v6) != 1) return bad();
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad();
    // ":9464" is every address, as node_exporter writes it (the caller warns off loopback).
    a.host = colon == 0 ? "0.0.0.0" : std::string(text.substr(0, colon));
    if (a.host.find(':') != std::string::npos) return bad();  // IPv6 goes in brackets
    for (const char c : a.host)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') return bad();
    port = text.substr(colon + 1);
  }
  int p = -1;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || p < 0 || p > 65535)
    return bad();
  a.port = p;
  return a;
}

bool is_loopback(const ListenAddress& a) {
  if (a.host == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, a.host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, a.host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

struct MetricsServer::Impl {
  explicit Impl(const HttpLimits& l) : limits(l), server(l) {}
  HttpLimits limits;
  detail::LimitedServer server;
};

MetricsServer::~MetricsServer() {
  stop();
}

Result<std::unique_ptr<MetricsServer>> MetricsServer::bind(const ListenAddress& address,
                                                           const HttpLimits& limits,
                                                           Exporter& exporter) {
  std::unique_ptr<MetricsServer> m(new MetricsServer());
  m->impl_ = std::make_unique<Impl>(limits);
  auto& s = m->impl_->server;
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

  s.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content(
          fmt::format("{} is not allowed: serve is read-only (GET, HEAD)\n", req.method),
          kTextType);
      detail::LimitedServer::close_after_this_request();  // its body, if any, was not read
      return httplib::Server::HandlerResponse::Handled;
    }
    const auto length = req.get_header_value("Content-Length");
    if ((!length.empty() && length != "0") || req.has_header("Transfer-Encoding")) {
      res.status = 413;
      res.set_content("no endpoint takes a request body\n", kTextType);
      detail::LimitedServer::close_after_this_request();
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
    std::string tail;
    TextSink sink(tail);
    render_scrapes(exporter.count_scrape(), sink);
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
    return fail("cannot listen on", address.text(), errno);
  }
  return m;
}

void MetricsServer::run() {
  (void)impl_->server.listen_after_bind();  // false after stop() too: nothing to tell apart
}

bool MetricsServer::running() const {
  return impl_ && impl_->server.is_running();
}

void MetricsServer::stop() {
  if (impl_) impl_->server.stop();
}

}  // namespace dltune::serve
