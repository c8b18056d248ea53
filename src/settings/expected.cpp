// Expected values of a profile entry: exact, at least, one of.
#include <fmt/format.h>

#include "core/text.hpp"
#include "settings/profile.hpp"

namespace dltune::settings {
namespace {

// Two words are equal as integers when both are integers ("010" == "10"), else as text.
bool same_word(std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (const auto x = text::to_int(a), y = text::to_int(b); x && y) return *x == *y;
  if (const auto x = text::to_uint(a), y = text::to_uint(b); x && y) return *x == *y;
  return false;
}

// Whitespace-normalised comparison, numbers compared numerically word by word, so that a
// multi-field value ("4096 131072 6291456") compares like the kernel prints it.
bool same_value(std::string_view expected, std::string_view actual) {
  const auto e = text::fields(expected);
  const auto a = text::fields(actual);
  if (e.size() != a.size()) return false;
  for (std::size_t i = 0; i < e.size(); ++i)
    if (!same_word(e[i], a[i])) return false;
  return true;
}

// limits.conf(5) and getrlimit(2)'s text forms of RLIM_INFINITY as /proc/PID/limits and
// `ulimit` print them.
bool is_unlimited(std::string_view s) {
  return s == "unlimited" || s == "infinity";
}

}  // namespace

bool Expected::matches(std::string_view actual) const {
  switch (kind) {
    case Kind::kExact:
    case Kind::kOneOf:
      for (const auto& v : values)
        if (same_value(v, actual)) return true;
      return false;
    case Kind::kAtLeast: {
      if (values.empty()) return false;
      const auto a = text::trim(actual);
      if (is_unlimited(a)) return true;
      const auto have = text::to_uint(a);
      const auto want = text::to_uint(values.front());
      return have && want && *have >= *want;
    }
  }
  return false;
}

std::string Expected::text() const {
  switch (kind) {
    case Kind::kExact:
      return values.empty() ? std::string() : values.front();
    case Kind::kAtLeast:
      return values.empty() ? std::string() : ">= " + values.front();
    case Kind::kOneOf:
      if (values.size() == 1) return values.front();
      return fmt::format("one of {}", fmt::join(values, ", "));
  }
  return {};
}

Result<Expected> parse_expected(std::string_view text) {
  const auto t = text::trim(text);
  if (t.empty()) return fail("empty value");
  Expected e;
  if (t.starts_with(">=")) {
    const auto number = text::trim(t.substr(2));
    // Decimal digits only: to_uint would also take "+5" and a later compare must not guess.
    const bool digits = !number.empty() && number.find_first_not_of("0123456789") == number.npos;
    if (!digits || !text::to_uint(number))
      return fail("a minimum must be \">= N\" with N an unsigned decimal number, not",
                  fmt::format("\"{}\"", t));
    e.kind = Expected::Kind::kAtLeast;
    e.values.push_back(std::to_string(*text::to_uint(number)));
    return e;
  }
  e.kind = Expected::Kind::kExact;
  e.values.emplace_back(t);
  return e;
}

std::optional<bool> Expected::as_bool() const {
  if (kind != Kind::kExact || values.size() != 1) return std::nullopt;
  const std::string v = text::to_lower(values.front());
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return std::nullopt;
}

}  // namespace dltune::settings
