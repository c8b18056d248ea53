// sudo_user: whom `dltune run` drops to when started through sudo (the job runs as the
// invoking user, not root). sudo(8) sets SUDO_UID and SUDO_GID to the invoking user's ids; the
// name, home and supplementary groups come from the user database (NSS), as login(1) would.
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <limits>

#include "launch/spawn.hpp"

namespace dltune::launch {
namespace {

// A whole decimal id: no sign, no spaces, not -1 (which means "no change" to setresuid).
std::optional<std::uint32_t> to_id(const std::string& s) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  if (v == std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  return v;
}

Result<passwd> user_entry(uid_t uid, std::vector<char>& buffer) {
  const long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  buffer.resize(hint > 0 ? static_cast<std::size_t>(hint) : 4096);
  for (;;) {
    passwd entry{};
    passwd* found = nullptr;
    const int rc = ::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    if (rc != 0) return fail("cannot look up the user of SUDO_UID", std::to_string(uid), rc);
    if (!found) return fail("no user has the id in SUDO_UID:", std::to_string(uid));
    return entry;
  }
}

std::vector<gid_t> groups_of(const char* user, gid_t gid) {
  int count = 32;
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  // getgrouplist sets `count` to the number needed when the array is too small.
  while (::getgrouplist(user, gid, groups.data(), &count) < 0 &&
         static_cast<std::size_t>(count) > groups.size())
    groups.resize(static_cast<std::size_t>(count));
  groups.resize(static_cast<std::size_t>(count));
  return groups;
}

}  // namespace

Result<std::optional<Credentials>> sudo_user(
    const std::map<std::string, std::string>& environment) {
  const auto uid_text = environment.find("SUDO_UID");
  if (uid_text == environment.end()) return std::optional<Credentials>{};
  const auto uid = to_id(uid_text->second);
  if (!uid) return fail("not a user id in SUDO_UID:", "'" + uid_text->second + "'");

  std::vector<char> buffer;
  auto entry = user_entry(*uid, buffer);
  if (!entry) return tl::unexpected(entry.error());

  Credentials c;
  c.uid = *uid;
  c.gid = entry->pw_gid;
  if (const auto gid_text = environment.find("SUDO_GID"); gid_text != environment.end()) {
    const auto gid = to_id(gid_text->second);
    if (!gid) return fail("not a group id in SUDO_GID:", "'" + gid_text->second + "'");
    c.gid = *gid;
  }
  c.user = entry->pw_name;
  c.home = entry->pw_dir ? entry->pw_dir : "";
  c.groups = groups_of(entry->pw_name, c.gid);
  return std::optional<Credentials>(std::move(c));
}

}  // namespace dltune::launch
