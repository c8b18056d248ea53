// parse_profile: one profile's TOML text to a Profile (no includes resolved). Every refusal names
// the file, the line and column of the offending item, and the setting's key.
#include <algorithm>
#include <array>
#include <tuple>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "settings/profile.hpp"
#include "settings/sysctl_name.hpp"
#include "settings/value_types.hpp"

namespace dltune::settings {
namespace {

constexpr std::array kSettingFields = {"value",  "severity", "critical", "field",
                                       "reason", "source",   "drop"};
constexpr std::array kProfileFields = {"name", "description", "include", "baseline"};
constexpr std::array kSeverities = {"info", "warn", "critical"};

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

template <std::size_t N>
bool one_of(std::string_view s, const std::array<const char*, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

// Errors of one file: "FILE:LINE:COLUMN: setting "KEY": problem".
class Refusals {
 public:
  explicit Refusals(std::string_view origin) : origin_(origin) {}

  [[nodiscard]] tl::unexpected<Error> at(const toml::source_region& where,
                                         std::string_view problem) const {
    if (where.begin.line == 0) return fail(fmt::format("{}: {}", origin_, problem));
    return fail(
        fmt::format("{}:{}:{}: {}", origin_, where.begin.line, where.begin.column, problem));
  }
  [[nodiscard]] tl::unexpected<Error> setting(const toml::source_region& where,
                                              std::string_view key,
                                              std::string_view problem) const {
    return at(where, fmt::format("setting \"{}\": {}", key, problem));
  }

 private:
  std::string origin_;
};

// A value: 10 | true | "madvise" | ">= 16777216" | ["always", "madvise"].
Result<Expected> expected_from(const toml::node& n) {
  if (const auto* i = n.as_integer()) return parse_expected(std::to_string(i->get()));
  if (const auto* b = n.as_boolean()) return parse_expected(b->get() ? "true" : "false");
  if (const auto* s = n.as_string()) return parse_expected(s->get());
  if (const auto* a = n.as_array()) {
    if (a->empty()) return fail("an empty set of values matches nothing");
    Expected e;
    e.kind = Expected::Kind::kOneOf;
    for (const auto& item : *a) {
      std::string text;
      if (const auto* i = item.as_integer()) {
        text = std::to_string(i->get());
      } else if (const auto* s = item.as_string()) {
        auto one = parse_expected(s->get());
        if (!one) return tl::unexpected(one.error());
        if (one->kind != Expected::Kind::kExact)
          return fail("a set of values holds exact values, not a minimum:", s->get());
        text = one->values.front();
      } else {
        return fail(
            fmt::format("a set of values holds strings and integers, not {}", type_name(item)));
      }
      e.values.push_back(std::move(text));
    }
    return e;
  }
  return fail(
      fmt::format("a value is an integer, a boolean, a string, \">= N\" or an array of "
                  "strings and integers, not {}",
                  type_name(n)));
}

Result<std::string> nonempty_string(const toml::node& n, const Refusals& r, std::string_view key,
                                    std::string_view field) {
  const auto* s = n.as_string();
  if (s == nullptr)
    return r.setting(n.source(), key,
                     fmt::format("{} must be a string, not {}", field, type_name(n)));
  if (s->get().find_first_not_of(" \t\r\n") == std::string::npos)
    return r.setting(n.source(), key, fmt::format("{} is empty", field));
  return s->get();
}

// Parses [settings."KEY"]; returns the entry, or nullopt for `drop = true`.
Result<std::optional<ProfileEntry>> parse_setting(const std::string& key, const toml::node& node,
                                                  const Refusals& r, bool require_reasons) {
  const auto* t = node.as_table();
  if (t == nullptr)
    return r.setting(node.source(), key,
                     fmt::format("must be a table ([settings.\"{}\"] with value, reason and "
                                 "source), not {}",
                                 key, type_name(node)));
  for (const auto& [k, v] : *t) {
    if (one_of(k.str(), kSettingFields)) continue;
    // [settings.vm.swappiness] without quotes makes nested tables: say how to write it.
    if (v.is_table())
      return r.setting(k.source(), key,
                       fmt::format("unknown field \"{}\" (quote a dotted key: "
                                   "[settings.\"{}.{}\"])",
                                   k.str(), key, k.str()));
    return r.setting(
        k.source(), key,
        fmt::format("unknown field \"{}\" (fields: {})", k.str(), fmt::join(kSettingFields, ", ")));
  }

  if (const auto* d = t->get("drop")) {
    if (!d->is_boolean())
      return r.setting(d->source(), key,
                       fmt::format("drop must be true or false, not {}", type_name(*d)));
    if (d->as_boolean()->get()) {
      for (const char* f : {"value", "severity", "critical", "field"})
        if (const auto* n = t->get(f))
          return r.setting(n->source(), key,
                           fmt::format("drop = true removes the setting; it takes no {}", f));
      return std::optional<ProfileEntry>();
    }
  }

  ProfileEntry e;
  e.key = key;
  const auto* value = t->get("value");
  if (value == nullptr) return r.setting(node.source(), key, "missing value");
  auto expected = expected_from(*value);
  if (!expected) return r.setting(value->source(), key, expected.error().message());
  e.expected = std::move(*expected);

  if (const auto* c = t->get("critical")) {
    auto crit = expected_from(*c);
    if (!crit) return r.setting(c->source(), key, "critical: " + crit.error().message());
    e.critical = std::move(*crit);
  }
  if (const auto* s = t->get("severity")) {
    if (!s->is_string() || !one_of(s->as_string()->get(), kSeverities))
      return r.setting(s->source(), key,
                       fmt::format("severity must be \"info\", \"warn\" or \"critical\", not {}",
                                   s->is_string() ? "\"" + s->as_string()->get() + "\""
                                                  : std::string(type_name(*s))));
    e.severity = s->as_string()->get();
  }
  if (const auto* f = t->get("field")) {
    if (!f->is_integer())
      return r.setting(f->source(), key,
                       fmt::format("field must be an integer, not {}", type_name(*f)));
    const auto n = f->as_integer()->get();
    // The widest multi-field sysctls (tcp_rmem, sched_domain flags) have a handful of fields.
    if (n < 1 || n > 64)
      return r.setting(f->source(), key, fmt::format("field is 1-based and at most 64, not {}", n));
    e.field = static_cast<int>(n);
  }
  // The value against what the setting takes, where it was written.
  if (auto ok = check_value(e); !ok) return r.setting(value->source(), key, ok.error().message());
  for (const char* f : {"reason", "source"}) {
    const auto* n = t->get(f);
    if (n == nullptr && !require_reasons) continue;
    if (n == nullptr) return r.setting(node.source(), key, fmt::format("missing {}", f));
    auto s = nonempty_string(*n, r, key, f);
    if (!s) return tl::unexpected(s.error());
    (f == std::string_view("reason") ? e.reason : e.source) = std::move(*s);
  }
  return std::optional<ProfileEntry>(std::move(e));
}

// `include`'s value into p.includes: one name (tuned's `include=throughput-performance` is one
// name, so `include = "training"` is too) or an array of them.
Result<void> parse_include(const toml::node& v, const Refusals& r, Profile& p) {
  if (const auto* one = v.as_string()) {
    if (one->get().empty())
      return r.at(v.source(), "include holds profile names (non-empty strings)");
    p.includes.push_back(one->get());
    p.include_lines.push_back(static_cast<int>(v.source().begin.line));
    return {};
  }
  const auto* a = v.as_array();
  if (a == nullptr)
    return r.at(
        v.source(),
        fmt::format("include must be a profile name or an array of them, not {}", type_name(v)));
  for (const auto& item : *a) {
    if (!item.is_string() || item.as_string()->get().empty())
      return r.at(item.source(), "include holds profile names (non-empty strings)");
    p.includes.push_back(item.as_string()->get());
    p.include_lines.push_back(static_cast<int>(item.source().begin.line));
  }
  return {};
}

Result<void> parse_header(const toml::node& node, const Refusals& r, Profile& p) {
  const auto* t = node.as_table();
  if (t == nullptr)
    return r.at(node.source(), fmt::format("[profile] must be a table, not {}", type_name(node)));
  for (const auto& [k, v] : *t) {
    if (!one_of(k.str(), kProfileFields))
      return r.at(k.source(), fmt::format("unknown field \"{}\" in [profile] (fields: {})", k.str(),
                                          fmt::join(kProfileFields, ", ")));
    if (k.str() == "include") {
      if (auto ok = parse_include(v, r, p); !ok) return ok;
    } else if (k.str() == "baseline") {
      if (!v.is_string() || !v.as_string()->get().starts_with('/'))
        return r.at(v.source(),
                    "baseline must be the absolute path of a baseline file (dltune baseline -o)");
      p.baseline = v.as_string()->get();
    } else {
      if (!v.is_string() || v.as_string()->get().empty())
        return r.at(v.source(), fmt::format("{} must be a non-empty string", k.str()));
      (k.str() == "name" ? p.name : p.description) = v.as_string()->get();
    }
  }
  return {};
}

// "dir/training.toml" -> "training".
std::string stem(std::string_view origin) {
  if (const auto slash = origin.rfind('/'); slash != origin.npos) origin.remove_prefix(slash + 1);
  if (origin.ends_with(".toml")) origin.remove_suffix(5);
  return std::string(origin);
}

}  // namespace

Result<Profile> parse_profile(std::string_view toml_text, std::string_view origin,
                              const KeyValidator& validate, bool require_reasons) {
  const Refusals r(origin);
  toml::table doc;
  try {
    doc = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    return r.at(e.source(), e.description());
  }

  Profile p;
  for (const auto& [k, v] : doc) {
    if (k.str() == "include" && !v.is_table()) continue;  // `include = "training"` at the top
    if (k.str() != "profile" && k.str() != "settings")
      return r.at(k.source(), v.is_table()
                                  ? fmt::format("unknown table [{}] (a profile has [profile] and "
                                                "[settings.\"KEY\"] tables)",
                                                k.str())
                                  : fmt::format("unknown key \"{}\" at the top (a profile has "
                                                "include, [profile] and [settings.\"KEY\"] tables)",
                                                k.str()));
  }
  if (const auto* h = doc.get("profile")) {
    auto ok = parse_header(*h, r, p);
    if (!ok) return tl::unexpected(ok.error());
  }
  // tuned's users write the parent first, at the top: the same as [profile] include.
  if (const auto* top = doc.get("include"); top != nullptr && !top->is_table()) {
    if (!p.includes.empty())
      return r.at(top->source(), "include is given twice (at the top and in [profile])");
    if (auto ok = parse_include(*top, r, p); !ok) return tl::unexpected(ok.error());
  }
  if (p.name.empty()) p.name = stem(origin);
  p.chain = {p.name};

  const auto* settings = doc.get("settings");
  if (settings == nullptr) return p;
  if (!settings->is_table())
    return r.at(settings->source(),
                fmt::format("settings must be a table, not {}", type_name(*settings)));

  // toml++ keeps a table's keys sorted; the profile's order is the file's order.
  std::vector<std::pair<const toml::key*, const toml::node*>> ordered;
  for (const auto& [k, v] : *settings->as_table()) ordered.emplace_back(&k, &v);
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    const auto& x = a.first->source().begin;
    const auto& y = b.first->source().begin;
    return std::tie(x.line, x.column) < std::tie(y.line, y.column);
  });

  std::vector<std::string> seen;
  for (const auto& [k, v] : ordered) {
    std::string key(k->str());
    // sysctl.d's slash form ("vm/swappiness") names the same setting as the dotted form, which
    // is what merges and finding ids use (CONTRIBUTING.md, convention 10).
    if (const auto sep = key.find_first_of("./"); sep != key.npos && key[sep] == '/') {
      if (auto dotted = sysctl_normalise(key)) key = std::move(*dotted);
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      return r.setting(k->source(), key,
                       fmt::format("set twice (here as \"{}\")", std::string(k->str())));
    seen.push_back(key);
    // The shape first: an unquoted dotted key gets its hint rather than "unknown setting".
    auto entry = parse_setting(key, *v, r, require_reasons);
    if (!entry) return tl::unexpected(entry.error());
    if (validate) {
      if (auto ok = validate(key); !ok) {
        // The message names the key already: "unknown setting (...): KEY".
        const auto& e = ok.error();
        std::string why = e.input == key && e.errno_ == 0 ? e.what : e.message();
        if (why.ends_with(':')) why.pop_back();
        return r.setting(k->source(), key, why);
      }
    }
    if (!*entry) {
      p.drops.push_back(key);
      p.drop_lines.push_back(static_cast<int>(k->source().begin.line));
      continue;
    }
    (*entry)->origin = p.name;
    (*entry)->origin_file = std::string(origin);
    p.entries.push_back(std::move(**entry));
  }
  return p;
}

}  // namespace dltune::settings
