// The HTTP module's GET (http_client.hpp), on cpp-httplib's client through its public interface.
#include "serve/http_client.hpp"

#include <httplib.h>

#include <fmt/core.h>

namespace dltune::serve {

namespace {

// cpp-httplib's error in words (its to_string gives one word: "Connection").
std::string in_words(httplib::Error e) {
  switch (e) {
    case httplib::Error::Connection:
      return "cannot connect (refused, no route, or the name does not resolve)";
    case httplib::Error::ConnectionTimeout:
      return "no connection within the timeout";
    case httplib::Error::Read:
      return "the answer did not come, or broke off, within the timeout";
    case httplib::Error::Write:
      return "the request could not be sent";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed (is it https?)";
    case httplib::Error::SSLLoadingCerts:
      return "cannot load the CA certificates (--ca-file)";
    case httplib::Error::SSLServerVerification:
      return "its certificate did not verify";
    default:
      return httplib::to_string(e);
  }
}

}  // namespace

Result<HttpReply> http_get(const HttpGet& request) {
  const auto& u = request.url;
  std::unique_ptr<httplib::ClientImpl> client;
  httplib::SSLClient* ssl = nullptr;
  if (u.tls) {
    auto c = std::make_unique<httplib::SSLClient>(u.host, u.port);
    if (!request.ca_file.empty()) c->set_ca_cert_path(request.ca_file);
    c->enable_server_certificate_verification(true);
    ssl = c.get();
    client = std::move(c);
  } else {
    client = std::make_unique<httplib::ClientImpl>(u.host, u.port);
  }
  const auto seconds = request.timeout.count() / 1000;
  const auto usec = (request.timeout.count() % 1000) * 1000;
  client->set_connection_timeout(seconds, usec);
  client->set_read_timeout(seconds, usec);
  client->set_write_timeout(seconds, usec);
  client->set_keep_alive(false);
  if (!u.user.empty() || !u.password.empty())
    client->set_basic_auth(u.user.c_str(), u.password.c_str());
  httplib::Params params;
  for (const auto& [k, v] : request.params) params.emplace(k, v);
  const auto target = u.prefix + request.path;
  auto r = client->Get(target, params, httplib::Headers{{"Accept", "application/json"}});
  if (!r) {
    std::string why = in_words(r.error());
    if (ssl != nullptr)
      if (const auto verify = ssl->get_openssl_verify_result(); verify != X509_V_OK)
        why += fmt::format(" ({})", X509_verify_cert_error_string(verify));
    return fail(fmt::format("no answer from {}{}: {}", u.text(), request.path, why));
  }
  return HttpReply{r->status, std::move(r->body)};
}

}  // namespace dltune::serve
