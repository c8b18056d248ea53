// The exporter-toolkit's web configuration file (web_config.hpp), read with yaml-cpp.
#include "serve/web_config.hpp"

#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "core/text.hpp"
#include "serve/basic_auth.hpp"

namespace dltune::serve {

namespace {

constexpr std::pair<const char*, TlsVersion> kVersions[] = {{"TLS10", TlsVersion::kTls10},
                                                            {"TLS11", TlsVersion::kTls11},
                                                            {"TLS12", TlsVersion::kTls12},
                                                            {"TLS13", TlsVersion::kTls13}};

// The toolkit's documented keys that dltune does not implement, and why or what instead.
// Silently ignoring one would serve with less protection than its author asked for.
const std::map<std::string, std::string>& unsupported_tls_keys() {
  static const std::map<std::string, std::string> keys = {
      {"cert",
       "inline PEM is not supported: put the certificate in a file and name it in cert_file"},
      {"key", "inline PEM is not supported: put the key in a file and name it in key_file"},
      {"client_ca",
       "inline PEM is not supported: put the CA certificates in a file and name it in "
       "client_ca_file"},
      {"cipher_suites",
       "is not supported (Go's suite names): OpenSSL's defaults for the TLS versions allowed are "
       "used"},
      {"curve_preferences", "is not supported: OpenSSL's default groups are used"},
      {"client_allowed_sans",
       "is not supported: any client certificate that client_ca_file verifies is accepted"},
  };
  return keys;
}

// Thrown inside the parser only (caught in parse_web_config): the first problem, worded whole.
struct Refusal {
  std::string message;
};

// A key of a mapping with its value, and where each is in the file.
struct Entry {
  std::string name, path;  // "min_version", "tls_server_config.min_version"
  YAML::Node key, value;
};

class Reader {
 public:
  Reader(std::string file, std::filesystem::path dir)
      : file_(std::move(file)), dir_(std::move(dir)) {}

  [[noreturn]] void refuse(const YAML::Node& at, const std::string& key,
                           const std::string& why) const {
    const auto mark = at.Mark();
    const std::string where = mark.is_null() ? file_ : fmt::format("{}:{}", file_, mark.line + 1);
    throw Refusal{fmt::format("{}: {}: {}", where, key, why)};
  }
  // At the value, or at its key when the value is empty (an empty value has no place of its own).
  [[noreturn]] void refuse(const Entry& e, const std::string& why) const {
    refuse(e.value.IsNull() || e.value.Mark().is_null() ? e.key : e.value, e.path, why);
  }

  // The entries of a mapping, each key once; null is an empty mapping.
  std::vector<Entry> mapping(const YAML::Node& n, const std::string& path) const {
    std::vector<Entry> out;
    if (n.IsNull()) return out;
    if (!n.IsMap()) refuse(n, path, "expected a mapping of keys to values");
    std::set<std::string> seen;
    for (const auto& kv : n) {
      if (!kv.first.IsScalar()) refuse(kv.first, path, "expected text keys");
      Entry e;
      e.name = kv.first.as<std::string>();
      e.path = path.empty() ? e.name : path + "." + e.name;
      e.key = kv.first;
      e.value = kv.second;
      if (!seen.insert(e.name).second) refuse(e.key, e.path, "given twice");
      out.push_back(std::move(e));
    }
    return out;
  }
  std::vector<Entry> mapping(const Entry& e) const {
    if (!e.value.IsNull() && !e.value.IsMap()) refuse(e, "expected a mapping of keys to values");
    return mapping(e.value, e.path);
  }

  std::string text(const Entry& e, const std::string& expected) const {
    if (!e.value.IsScalar()) refuse(e, "expected " + expected);
    return e.value.Scalar();
  }

  bool boolean(const Entry& e) const {
    const auto v = text(e, "true or false");
    if (v == "true") return true;
    if (v == "false") return false;
    refuse(e, fmt::format("expected true or false, not '{}'", v));
  }

  std::string file(const Entry& e) const {
    const auto v = text(e, "a file name");
    if (v.empty()) refuse(e, "expected a file name, not an empty one");
    std::filesystem::path p(v);
    // As the toolkit: relative to the configuration file's own directory.
    if (p.is_relative()) p = dir_ / p;
    return p.lexically_normal().string();
  }

  TlsVersion version(const Entry& e) const {
    const auto v = text(e, "TLS10, TLS11, TLS12 or TLS13");
    for (const auto& [name, version] : kVersions)
      if (v == name) return version;
    refuse(e, fmt::format("expected TLS10, TLS11, TLS12 or TLS13, not '{}'", v));
  }

  TlsServerConfig tls(const Entry& section) const {
    if (!section.value.IsMap()) refuse(section, "expected a mapping with cert_file and key_file");
    TlsServerConfig t;
    std::optional<Entry> ca, auth, max;
    for (const auto& e : mapping(section)) {
      if (e.name == "cert_file") {
        t.cert_file = file(e);
      } else if (e.name == "key_file") {
        t.key_file = file(e);
      } else if (e.name == "client_ca_file") {
        t.client_ca_file = file(e);
        ca = e;
      } else if (e.name == "client_auth_type") {
        const auto a = text(e, "a client authentication policy");
        auth = e;
        if (a == "NoClientCert")
          t.client_auth = ClientAuth::kNoClientCert;
        else if (a == "VerifyClientCertIfGiven")
          t.client_auth = ClientAuth::kVerifyClientCertIfGiven;
        else if (a == "RequireAndVerifyClientCert")
          t.client_auth = ClientAuth::kRequireAndVerifyClientCert;
        else if (a == "RequestClientCert" || a == "RequireAnyClientCert" ||
                 a == "RequireClientCert")
          refuse(e, fmt::format("{} takes a client certificate without verifying it, which proves "
                                "nothing: use RequireAndVerifyClientCert (or NoClientCert)",
                                a));
        else
          refuse(e, fmt::format("expected NoClientCert, VerifyClientCertIfGiven or "
                                "RequireAndVerifyClientCert, not '{}'",
                                a));
      } else if (e.name == "min_version") {
        t.min_version = version(e);
      } else if (e.name == "max_version") {
        t.max_version = version(e);
        max = e;
      } else if (e.name == "prefer_server_cipher_suites") {
        t.prefer_server_cipher_suites = boolean(e);
      } else if (const auto u = unsupported_tls_keys().find(e.name);
                 u != unsupported_tls_keys().end()) {
        refuse(e.key, e.path, u->second);
      } else {
        refuse(e.key, e.path,
               "unknown key (expected cert_file, key_file, client_ca_file, client_auth_type, "
               "min_version, max_version or prefer_server_cipher_suites)");
      }
    }
    if (max && *t.max_version < t.min_version)
      refuse(*max, fmt::format("is older than min_version {}", tls_version_name(t.min_version)));
    if (t.cert_file.empty())
      refuse(section.value, section.path + ".cert_file", "missing (the server's certificate)");
    if (t.key_file.empty())
      refuse(section.value, section.path + ".key_file", "missing (the certificate's key)");
    if (ca && t.client_auth == ClientAuth::kNoClientCert)
      refuse(*ca, auth ? "given with client_auth_type NoClientCert, which never asks for a "
                         "client certificate"
                       : "given without client_auth_type (RequireAndVerifyClientCert to "
                         "require a client certificate it verifies)");
    if (!ca && auth && t.client_auth != ClientAuth::kNoClientCert)
      refuse(*auth,
             "needs client_ca_file (the CA certificates that client certificates must chain to)");
    return t;
  }

  void http_server(const Entry& section, WebConfig& w) const {
    for (const auto& e : mapping(section)) {
      if (e.name == "http2") {
        (void)boolean(e);  // serve speaks HTTP/1.1 only; either value serves the same
      } else if (e.name == "headers") {
        for (const auto& h : mapping(e)) {
          const auto value = text(h, "the header's value");
          const auto lower = text::to_lower(value);
          if (h.name == "X-Frame-Options") {
            if (!value.empty() && lower != "deny" && lower != "sameorigin")
              refuse(h, fmt::format("expected deny or sameorigin, not '{}'", value));
          } else if (h.name == "X-Content-Type-Options") {
            if (!value.empty() && lower != "nosniff")
              refuse(h, fmt::format("expected nosniff, not '{}'", value));
          } else if (h.name != "Content-Security-Policy" && h.name != "X-XSS-Protection" &&
                     h.name != "Strict-Transport-Security") {
            refuse(h.key, h.path,
                   "unknown header (expected Content-Security-Policy, X-Frame-Options, "
                   "X-Content-Type-Options, X-XSS-Protection or Strict-Transport-Security)");
          }
          if (value.find_first_of("\r\n") != std::string::npos) refuse(h, "expected one line");
          if (!value.empty()) w.headers.emplace_back(h.name, value);
        }
      } else {
        refuse(e.key, e.path, "unknown key (expected http2 or headers)");
      }
    }
  }

  void users(const Entry& section, WebConfig& w) const {
    for (const auto& e : mapping(section)) {
      if (e.name.empty()) refuse(e.key, section.path, "expected a user name, not an empty one");
      if (e.name.find(':') != std::string::npos)
        refuse(e.key, e.path,
               "a user name cannot hold ':' (basic auth ends the name at the first one)");
      const auto hash = text(e, "a bcrypt hash");
      if (!is_bcrypt_hash(hash))
        refuse(e,
               "expected a bcrypt hash ($2y$10$ and 53 characters, as `htpasswd -nBC 10 \"\" "
               "| tr -d ':\\n'` prints), not what is there");
      w.basic_auth_users.emplace(e.name, hash);
    }
  }

  void rate_limit(const Entry& section, WebConfig& w) const {
    std::optional<Entry> burst;
    for (const auto& e : mapping(section)) {
      if (e.name == "interval") {
        const auto s = text(e, "a duration");
        const auto ns = text::parse_duration_ns(s);
        if (!ns) refuse(e, fmt::format("expected a duration such as 1s or 500ms, not '{}'", s));
        w.rate_limit.interval_ns = *ns;
      } else if (e.name == "burst") {
        const auto s = text(e, "a whole number");
        int b = -1;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), b);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size() || b < 0)
          refuse(e, fmt::format("expected a whole number, not '{}'", s));
        w.rate_limit.burst = b;
        burst = e;
      } else {
        refuse(e.key, e.path, "unknown key (expected interval and burst)");
      }
    }
    if (w.rate_limit.interval_ns > 0 && w.rate_limit.burst < 1) {
      const std::string why = "expected at least 1 with an interval (0 would refuse every request)";
      if (burst) refuse(*burst, why);
      refuse(section.key, section.path + ".burst", why);
    }
  }

  WebConfig read(const YAML::Node& root) const {
    WebConfig w;
    w.file = file_;
    for (const auto& e : mapping(root, "")) {
      if (e.name == "tls_server_config")
        w.tls = tls(e);
      else if (e.name == "http_server_config")
        http_server(e, w);
      else if (e.name == "basic_auth_users")
        users(e, w);
      else if (e.name == "rate_limit")
        rate_limit(e, w);
      else
        refuse(e.key, e.path,
               "unknown key (expected tls_server_config, http_server_config, basic_auth_users "
               "or rate_limit)");
    }
    return w;
  }

 private:
  std::string file_;
  std::filesystem::path dir_;
};

}  // namespace

const char* tls_version_name(TlsVersion v) {
  for (const auto& [name, version] : kVersions)
    if (version == v) return name;
  return "?";
}

Result<WebConfig> parse_web_config(std::string_view text, const std::string& file,
                                   const std::string& dir) {
  try {
    const auto root = YAML::Load(std::string(text));
    if (!root.IsNull() && !root.IsMap())
      return fail(
          fmt::format("{}: expected a mapping (tls_server_config, basic_auth_users, ...)", file));
    return Reader(file, dir).read(root);
  } catch (const Refusal& r) {
    return fail(r.message);
  } catch (const YAML::Exception& e) {
    return fail(fmt::format("{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.msg));
  }
}

int read_regular_file(const std::string& path, std::size_t max, std::string& text) {
  // Opened without blocking and read only when it is a regular file: a FIFO or a device is
  // refused at once, not waited on. (This file is part of the HTTP module, which has its own
  // copy of the little of the program it uses: POSIX here, not core/local_file.)
  text.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return errno;
  struct stat st {};
  int err = 0;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    err = EINVAL;
  } else if (static_cast<std::size_t>(st.st_size) > max) {
    err = EFBIG;
  } else {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const auto n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) err = errno;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  return err;
}

Result<WebConfig> load_web_config(const std::string& path) {
  std::string text;
  if (const int err = read_regular_file(path, 1 << 20, text); err == EINVAL)
    return fail("--web-config: not a regular file (a FIFO, device or directory):", path);
  else if (err == EFBIG)
    return fail("--web-config: larger than 1 MiB:", path);
  else if (err != 0)
    return fail("--web-config: cannot read", path, err);
  auto w = parse_web_config(text, path, std::filesystem::path(path).parent_path());
  if (!w) return w;
  if (w->tls) {
    const std::pair<const char*, const std::string*> files[] = {
        {"cert_file", &w->tls->cert_file},
        {"key_file", &w->tls->key_file},
        {"client_ca_file", &w->tls->client_ca_file}};
    for (const auto& [key, name] : files) {
      if (name->empty()) continue;
      std::ifstream f(*name);
      if (!f)
        return fail(fmt::format("{}: tls_server_config.{}: cannot read", path, key), *name, errno);
    }
  }
  return w;
}

}  // namespace dltune::serve
