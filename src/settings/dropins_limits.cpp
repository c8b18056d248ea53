// /etc/security/limits.d/90-dltune.conf (limits.conf(5), read by pam_limits at login).
#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/core.h>

#include "core/text.hpp"
#include "host/parse/limits_conf.hpp"
#include "settings/dropins.hpp"
#include "settings/dropins_text.hpp"

namespace dltune::settings {
namespace {

// The items pam_limits knows (process_limit in Linux-PAM's modules/pam_limits/pam_limits.c).
const std::set<std::string, std::less<>> kItems = {
    "as",           "core",    "cpu",      "data",   "fsize",      "locks",      "maxlogins",
    "maxsyslogins", "memlock", "msgqueue", "nice",   "nofile",     "nonewprivs", "nproc",
    "priority",     "rss",     "rtprio",   "rttime", "sigpending", "stack"};

// pam_limits lowercases items, and so the parser: compare in lower case, so that an item spelled
// "NOFILE" is not appended again at every merge.
std::string item_name(std::string_view item) {
  return text::to_lower(dropin_text::one_line(item));
}

// The entry on this one line, if it is one.
std::optional<host::parse::LimitsEntry> entry(std::string_view line) {
  auto e = host::parse::limits_conf(line);
  if (e.empty()) return std::nullopt;
  return e.front();
}

}  // namespace

std::string merge_limits_dropin(std::string_view existing, const std::string& domain,
                                const std::map<std::string, std::string>& items) {
  const auto dom = dropin_text::one_line(domain);
  std::map<std::string, std::string> wanted;
  for (const auto& [item, value] : items) wanted[item_name(item)] = dropin_text::one_line(value);

  std::string out;
  if (!dropin_text::contains_line(existing, kLimitsDropinHeader))
    out.append(kLimitsDropinHeader).push_back('\n');
  std::map<std::string, std::set<std::string>> covered;  // item -> types that have a line
  for (const auto line : dropin_text::lines(existing)) {
    const auto e = entry(line);
    const auto it = e && e->domain == dom ? wanted.find(e->item) : wanted.end();
    const bool ours =
        it != wanted.end() && (e->type == "soft" || e->type == "hard" || e->type == "-");
    if (!ours) {
      out.append(line).push_back('\n');
      continue;
    }
    out.append(line.substr(0, e->value_begin))
        .append(it->second)
        .append(line.substr(e->value_end))
        .push_back('\n');
    if (e->type == "-") {
      covered[e->item].insert({"soft", "hard"});
    } else {
      covered[e->item].insert(e->type);
    }
  }
  for (const auto& [item, value] : wanted)
    for (const char* type : {"soft", "hard"})
      if (!covered[item].contains(type))
        out += fmt::format("{} {} {} {}\n", dom, type, item, value);
  return out;
}

std::string remove_from_limits_dropin(std::string_view existing, const std::string& domain,
                                      const std::vector<std::string>& items) {
  const auto dom = dropin_text::one_line(domain);
  std::set<std::string> names;
  for (const auto& item : items) names.insert(item_name(item));
  std::string out;
  bool limits_left = false;
  for (const auto line : dropin_text::lines(existing)) {
    const auto e = entry(line);
    if (e && e->domain == dom && names.contains(e->item)) continue;
    if (!dropin_text::comment_or_blank(line, "#")) limits_left = true;
    out.append(line).push_back('\n');
  }
  return limits_left ? out : std::string();
}

Result<void> check_limits(const std::string& domain,
                          const std::map<std::string, std::string>& items) {
  // pam_limits splits a line on any white space (\v and \f too) and a NUL ends it; a control
  // character is never part of a user or group name. (Found by fuzz_etc: a domain with \f
  // merged differently the second time.)
  const bool odd = std::any_of(domain.begin(), domain.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x21 || u == 0x7f || c == '#';
  });
  if (domain.empty() || odd)
    return fail("not a limits.conf domain (a user, @group or *):", fmt::format("'{}'", domain));
  for (const auto& [item, value] : items) {
    if (!kItems.contains(item)) return fail("not a limits.conf item:", item);
    const bool signed_ok = item == "nice" || item == "priority";
    const bool number =
        signed_ok ? text::to_int(value).has_value() : text::to_uint(value).has_value();
    // pam_limits reads "unlimited", "infinity" and "-1" as RLIM_INFINITY.
    if (!number && value != "unlimited" && value != "infinity" && value != "-1")
      return fail(fmt::format("limit {} must be a number or unlimited, not", item),
                  fmt::format("'{}'", value));
  }
  return {};
}

}  // namespace dltune::settings
