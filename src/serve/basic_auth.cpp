// Basic auth against bcrypt hashes (basic_auth.hpp).
#include "serve/basic_auth.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

namespace dltune::serve {

namespace {

bool is_bcrypt_base64(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/';
}

int cost_of(std::string_view hash) {
  return (hash[4] - '0') * 10 + (hash[5] - '0');
}

// Standard base64 (RFC 4648 section 4) with its padding, as browsers, curl and Prometheus send
// basic auth; nullopt-like false for anything else.
bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  if (in.size() % 4 != 0) return false;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  for (std::size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + static_cast<std::size_t>(k)];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return false;  // data after padding
      v[k] = value(c);
      if (v[k] < 0) return false;
    }
    const unsigned triple = (static_cast<unsigned>(v[0]) << 18) |
                            (static_cast<unsigned>(v[1]) << 12) |
                            (static_cast<unsigned>(v[2]) << 6) | static_cast<unsigned>(v[3]);
    out.push_back(static_cast<char>((triple >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((triple >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(triple & 0xff));
  }
  return true;
}

}  // namespace

bool is_bcrypt_hash(std::string_view hash) {
  if (hash.size() != 60) return false;
  if (hash[0] != '$' || hash[1] != '2' || (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') ||
      hash[3] != '$' || !std::isdigit(static_cast<unsigned char>(hash[4])) ||
      !std::isdigit(static_cast<unsigned char>(hash[5])) || hash[6] != '$')
    return false;
  const int cost = cost_of(hash);
  if (cost < 4 || cost > 31) return false;
  return std::all_of(hash.begin() + 7, hash.end(), is_bcrypt_base64);
}

bool bcrypt_matches(std::string_view password, const std::string& hash) {
  if (password.find('\0') != std::string_view::npos) return false;
  const std::string pw(password);
  // struct crypt_data is about 32 KiB: on the heap, one per call (crypt_r is reentrant with it).
  auto data = std::make_unique<crypt_data>();
  std::memset(data.get(), 0, sizeof *data);
  const char* out = ::crypt_r(pw.c_str(), hash.c_str(), data.get());
  // libxcrypt answers a failure with a string starting with '*' (never a valid hash).
  if (out == nullptr || out[0] == '*') return false;
  const std::size_t n = std::strlen(out);
  if (n != hash.size()) return false;  // a hash's length is no secret
  return CRYPTO_memcmp(out, hash.data(), n) == 0;
}

bool parse_basic_authorization(std::string_view header, std::string& user, std::string& password) {
  constexpr std::string_view kScheme = "basic ";
  if (header.size() < kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i)  // the scheme is case-insensitive (RFC 7617)
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return false;
  auto token = header.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  std::string decoded;
  if (!base64_decode(token, decoded)) return false;
  const auto colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  user = decoded.substr(0, colon);
  password = decoded.substr(colon + 1);
  return true;
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {
  int cost = 4;
  for (const auto& [user, hash] : users_)
    if (is_bcrypt_hash(hash)) cost = std::max(cost, cost_of(hash));
  // A setting (prefix, cost, random salt) of the users' highest cost: crypt_r with it costs
  // what a real check costs, and matches nothing.
  char setting[CRYPT_GENSALT_OUTPUT_SIZE];
  if (::crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0, setting,
                         sizeof setting) != nullptr)
    decoy_ = setting;
}

BasicAuth::Digest BasicAuth::digest(std::string_view user, std::string_view password) {
  std::string both;
  both.reserve(user.size() + password.size() + 1);
  both.append(user).push_back('\0');
  both.append(password);
  Digest d{};
  unsigned int n = 0;
  ::EVP_Digest(both.data(), both.size(), d.data(), &n, ::EVP_sha256(), nullptr);
  ::OPENSSL_cleanse(both.data(), both.size());
  return d;
}

bool BasicAuth::allows(std::string_view authorization) {
  std::string user, password;
  if (!parse_basic_authorization(authorization, user, password)) return false;
  const auto d = digest(user, password);
  {
    std::lock_guard lock(mu_);
    bool known = false;
    for (const auto& v : verified_) known |= CRYPTO_memcmp(v.data(), d.data(), d.size()) == 0;
    if (known) {
      ::OPENSSL_cleanse(password.data(), password.size());
      return true;
    }
  }
  const auto it = users_.find(user);
  bool ok;
  if (it == users_.end()) {
    (void)bcrypt_matches(password, decoy_);
    ok = false;
  } else {
    ok = bcrypt_matches(password, it->second);
  }
  ::OPENSSL_cleanse(password.data(), password.size());
  if (ok) {
    std::lock_guard lock(mu_);
    verified_.push_back(d);
    if (verified_.size() > kRemembered) verified_.pop_front();
  }
  return ok;
}

}  // namespace dltune::serve
