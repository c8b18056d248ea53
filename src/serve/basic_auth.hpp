#pragma once
// HTTP basic authentication against bcrypt hashes (the web config's basic_auth_users), verified
// by libcrypt's crypt_r(3): Debian 12's libxcrypt computes bcrypt for the $2a$, $2b$ and $2y$
// prefixes that htpasswd -B, Python's bcrypt and Go's x/crypto/bcrypt write.
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace dltune::serve {

// "$2a$", "$2b$" or "$2y$", a cost of 04 to 31, "$", 53 characters of bcrypt's base64 (the salt,
// then the hash).
[[nodiscard]] bool is_bcrypt_hash(std::string_view hash);
// Whether `password` hashes to `hash` (crypt_r with the hash as its setting); the two hashes are
// compared in constant time. False for a password with a NUL in it (C strings end there).
[[nodiscard]] bool bcrypt_matches(std::string_view password, const std::string& hash);

// "Basic dXNlcjpwYXNz" -> {"user", "pass"}; false for any other scheme or bad base64.
[[nodiscard]] bool parse_basic_authorization(std::string_view header, std::string& user,
                                             std::string& password);

class BasicAuth {
 public:
  // user -> bcrypt hash, each is_bcrypt_hash (the web config checked them).
  explicit BasicAuth(std::map<std::string, std::string> users);
  // Whether an Authorization header's value names a user with the right password. An unknown
  // user costs a bcrypt as a known one does (no user list by timing, as in the toolkit). A
  // verified password is remembered as a SHA-256 digest, so that a scrape every few seconds does
  // not pay bcrypt's cost (tens of ms at cost 10) each time; wrong ones never are. Thread-safe.
  [[nodiscard]] bool allows(std::string_view authorization);

 private:
  using Digest = std::array<unsigned char, 32>;
  [[nodiscard]] static Digest digest(std::string_view user, std::string_view password);

  std::map<std::string, std::string> users_;
  std::string decoy_;  // a hash of the highest cost among the users', for unknown users
  std::mutex mu_;
  std::deque<Digest> verified_;  // most recent last, at most kRemembered
  static constexpr std::size_t kRemembered = 16;
};

}  // namespace dltune::serve
