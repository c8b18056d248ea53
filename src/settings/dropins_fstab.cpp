// The options field of one /etc/fstab entry (fstab(5); mount(8) for the options).
#include <fmt/format.h>

#include "host/parse/fstab.hpp"
#include "settings/dropins.hpp"

namespace dltune::settings {
namespace {

using host::parse::FstabEntry;

std::string without_trailing_slash(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

Result<FstabEntry> entry_for(std::string_view fstab, const std::string& mount_point) {
  const auto want = without_trailing_slash(mount_point);
  std::vector<FstabEntry> hits;
  for (auto& e : host::parse::fstab(fstab))
    if (without_trailing_slash(e.file) == want) hits.push_back(std::move(e));
  if (hits.empty()) return fail("no /etc/fstab entry mounts", mount_point);
  if (hits.size() > 1) {
    std::vector<int> lines;
    for (const auto& e : hits) lines.push_back(e.line);
    // mount(8) would use the first; which one the user means is not ours to guess.
    return fail(fmt::format("ambiguous: /etc/fstab lines {} each mount", fmt::join(lines, ", ")),
                mount_point);
  }
  if (hits.front().vfstype.empty())
    return fail(fmt::format("/etc/fstab line {} has no file system type for", hits.front().line),
                mount_point);
  return hits.front();
}

// Options are separated by commas, except inside double quotes (libmount allows
// context="system_u:object_r:tmp_t:s0:c127,c456").
std::vector<std::string_view> split_options(std::string_view s) {
  std::vector<std::string_view> out;
  bool quoted = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') quoted = !quoted;
    if (s[i] == ',' && !quoted) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

std::string_view name_of(std::string_view option) {
  return option.substr(0, option.find('='));
}

// mount(8): these decide when the access time is updated; the kernel resolves a mix of them by
// flag precedence, not by order, so only one may stay.
bool atime_option(std::string_view name) {
  return name == "atime" || name == "noatime" || name == "relatime" || name == "norelatime" ||
         name == "strictatime" || name == "nostrictatime";
}

// Whether `have`, already in the field, says the opposite of `want`.
bool contradicts(std::string_view have, std::string_view want) {
  if (have == want) return false;
  const auto a = name_of(have);
  const auto b = name_of(want);
  if (atime_option(a) && atime_option(b)) return true;
  if (a == b) return true;  // "commit=5" against "commit=60"
  if ((a == "ro" && b == "rw") || (a == "rw" && b == "ro")) return true;
  const auto negates = [](std::string_view x, std::string_view y) {
    return x.size() == y.size() + 2 && x.starts_with("no") && x.substr(2) == y;
  };
  return negates(a, b) || negates(b, a);  // "exec" against "noexec"
}

std::string with_option(std::string_view options, std::string_view want) {
  const auto parts = split_options(options);
  bool present = false;
  for (const auto p : parts) present = present || p == want;
  std::vector<std::string_view> out;
  bool placed = present;
  for (const auto p : parts) {
    if (!contradicts(p, want)) {
      out.push_back(p);
    } else if (!placed) {
      out.push_back(want);  // where the contradicting option stood
      placed = true;
    }
  }
  if (!placed) out.push_back(want);
  return fmt::format("{}", fmt::join(out, ","));
}

}  // namespace

Result<std::string> fstab_add_option(std::string_view fstab, const std::string& mount_point,
                                     const std::string& option) {
  if (option.empty() || option.find_first_of(" \t\r\n,#") != std::string::npos)
    return fail("not a single mount option:", fmt::format("'{}'", option));
  auto e = entry_for(fstab, mount_point);
  if (!e) return tl::unexpected(e.error());
  std::string out(fstab.substr(0, e->mntops_begin));
  if (e->has_mntops) {
    const auto options = with_option(e->mntops, option);
    if (options == e->mntops) return std::string(fstab);
    out += options;
  } else {
    out += ' ' + option;  // the field was absent: mount used no options
  }
  out += fstab.substr(e->mntops_end);
  return out;
}

Result<std::string> fstab_options(std::string_view fstab, const std::string& mount_point) {
  auto e = entry_for(fstab, mount_point);
  if (!e) return tl::unexpected(e.error());
  return e->has_mntops ? e->mntops : std::string("defaults");
}

}  // namespace dltune::settings
