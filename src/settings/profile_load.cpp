// Loading profiles: built-in, /etc/dltune/profiles/NAME.toml or a file; includes resolved and
// merged in order (child overrides in place, `drop = true` removes).
#include "settings/profile.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "core/text.hpp"

namespace dltune::settings {
namespace {

constexpr std::size_t kMaxProfileBytes = 1u << 20;
constexpr std::size_t kMaxIncludeDepth = 16;

// A profile's text and where it came from.
struct Source {
  std::string id;     // the name, or the path of a file: what a cycle is made of
  std::string label;  // how errors name it: "/etc/dltune/profiles/site.toml"
  std::string text;
  bool builtin = false;  // compiled in: every setting gives its reason and source
};

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-' || c == '.'))
      return false;
  return true;
}

// A built-in, else /etc/dltune/profiles/NAME.toml of the host.
Result<Source> find_named(const std::string& name, const host::Root& root) {
  if (!valid_name(name))
    return fail("not a profile name (letters, digits, '_', '-', '.'; a file needs a '/'):", name);
  if (const auto text = builtin_profile_text(name))
    return Source{name, fmt::format("<built-in>/{}.toml", name), std::string(*text), true};
  const std::string path = fmt::format("{}/{}.toml", kUserProfileDir, name);
  auto text = root.read(path, kMaxProfileBytes + 1);
  if (!text) return tl::unexpected(text.error());
  if (!*text) {
    std::string hint;
    if (name.ends_with(".toml")) hint = fmt::format("; for a file, write ./{}", name);
    std::vector<std::string> known = builtin_profiles();
    if (auto installed = root.list(kUserProfileDir); installed && *installed)
      for (const auto& f : **installed)
        if (f.ends_with(".toml")) known.push_back(f.substr(0, f.size() - 5));
    const auto guess = text::nearest_word(name, known);
    return fail(fmt::format("no such profile (built in: {}; or {}/NAME.toml{}):",
                            fmt::join(builtin_profiles(), ", "), kUserProfileDir, hint),
                guess.empty() ? name : fmt::format("{}; did you mean {}?", name, guess));
  }
  if ((*text)->size() > kMaxProfileBytes)
    return fail("profile larger than 1 MiB:", root.outside(path));
  return Source{name, path, std::move(**text), false};
}

// The user's own file on this machine (not a host file: `-p FILE`).
Result<Source> read_local(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    return fail("cannot read profile", path, ec ? ec.value() : ENOENT);
  if (!std::filesystem::is_regular_file(status))
    return fail("profile is not a regular file:", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read profile", path, errno);
  std::string text(kMaxProfileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return fail("cannot read profile", path, errno);
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxProfileBytes) return fail("profile larger than 1 MiB:", path);
  return Source{path, path, std::move(text), false};
}

class Loader {
 public:
  Loader(const host::Root& root, const KeyValidator& validate) : root_(root), validate_(validate) {}

  // Parses `src`, merges its includes and then itself into `merged_`; returns the parsed file.
  Result<Profile> load(const Source& src) {
    // A user's file: a key near one this host has is a typo, not another kernel's sysctl.
    auto p =
        parse_profile(src.text, src.label,
                      src.builtin ? validate_ : file_key_validator(root_, validate_), src.builtin);
    if (!p) return p;
    if (!src.builtin && p->entries.empty() && p->includes.empty() && p->drops.empty() &&
        p->baseline.empty())
      return fail(fmt::format(
          "{}: the profile sets nothing (no [settings.KEY], no include, no baseline); `dltune "
          "profiles show training` prints one to start from",
          src.label));
    stack_.push_back(src.id);
    for (std::size_t i = 0; i < p->includes.size(); ++i) {
      const int line = i < p->include_lines.size() ? p->include_lines[i] : 0;
      if (auto ok = include(p->includes[i], src, line); !ok) return tl::unexpected(ok.error());
    }
    if (auto ok = merge(*p, src); !ok) return tl::unexpected(ok.error());
    stack_.pop_back();
    done_.insert(src.id);
    return p;
  }

  Profile take() { return std::move(merged_); }

 private:
  // `line`: where `from` names `name`, so that errors read "FILE:LINE: ...".
  Result<void> include(const std::string& name, const Source& from, int line) {
    const std::string where =
        line > 0 ? fmt::format("{}:{}", from.label, line) : std::string(from.label);
    if (std::find(stack_.begin(), stack_.end(), name) != stack_.end()) {
      auto chain =
          std::vector<std::string>(std::find(stack_.begin(), stack_.end(), name), stack_.end());
      chain.push_back(name);
      return fail(fmt::format("{}: include cycle:", where),
                  fmt::format("{}", fmt::join(chain, " -> ")));
    }
    // Included twice (a diamond): merged once, where it first came, so that a later profile's
    // override is not undone.
    if (done_.contains(name)) return {};
    if (stack_.size() >= kMaxIncludeDepth)
      return fail(fmt::format("{}: includes nested deeper than {}:", where, kMaxIncludeDepth),
                  name);
    auto src = find_named(name, root_);
    if (!src) {
      return fail(fmt::format("{}: include \"{}\": {}", where, name, src.error().message()));
    }
    auto p = load(*src);
    if (!p) return tl::unexpected(p.error());
    return {};
  }

  Result<void> merge(const Profile& p, const Source& src) {
    auto& entries = merged_.entries;
    for (const auto& e : p.entries) {
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const ProfileEntry& m) { return m.key == e.key; });
      if (it != entries.end())
        *it = e;  // in place: the key keeps the position of its first definition
      else
        entries.push_back(e);
    }
    for (std::size_t i = 0; i < p.drops.size(); ++i) {
      const auto& key = p.drops[i];
      auto it = std::find_if(entries.begin(), entries.end(),
                             [&](const ProfileEntry& m) { return m.key == key; });
      // A drop of something no included profile sets is most likely a misspelt key.
      const int line = i < p.drop_lines.size() ? p.drop_lines[i] : 0;
      if (it == entries.end())
        return fail(
            fmt::format("{}{}: setting \"{}\": drop = true, but no included profile sets it",
                        src.label, line > 0 ? fmt::format(":{}", line) : "", key));
      entries.erase(it);
    }
    if (!p.baseline.empty()) merged_.baseline = p.baseline;
    merged_.chain.push_back(p.name);
    return {};
  }

  const host::Root& root_;
  const KeyValidator& validate_;
  std::vector<std::string> stack_;
  std::set<std::string, std::less<>> done_;
  Profile merged_;
};

}  // namespace

Result<Profile> load_profile(std::string_view name_or_path, const host::Root& root,
                             const KeyValidator& validate) {
  const std::string arg(name_or_path);
  auto src = arg.find('/') != std::string::npos ? read_local(arg) : find_named(arg, root);
  if (!src) return tl::unexpected(src.error());
  Loader loader(root, validate);
  auto top = loader.load(*src);
  if (!top) return tl::unexpected(top.error());
  Profile merged = loader.take();
  merged.name = top->name;
  merged.description = top->description;
  merged.includes = top->includes;
  merged.include_lines = top->include_lines;
  merged.drops = top->drops;
  merged.drop_lines = top->drop_lines;
  return merged;
}

}  // namespace dltune::settings
