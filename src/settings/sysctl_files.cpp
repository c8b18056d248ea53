#include "settings/sysctl_files.hpp"

#include <algorithm>
#include <map>

#include "host/parse/sysctl_conf.hpp"
#include "settings/sysctl_name.hpp"

namespace dltune::settings {

SysctlFiles::SysctlFiles(const host::Root& root) {
  static const char* kDirs[] = {"/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d",
                                "/usr/lib/sysctl.d", "/lib/sysctl.d"};
  std::map<std::string, std::string> by_name;  // file name -> path (first directory wins)
  for (const char* dir : kDirs) {
    auto names = root.list(dir);
    if (!names || !*names) continue;
    for (const auto& n : **names)
      if (n.ends_with(".conf") && !by_name.count(n)) by_name[n] = std::string(dir) + "/" + n;
  }
  for (const auto& [name, path] : by_name) order_.push_back(path);
  order_.push_back("/etc/sysctl.conf");
  for (std::size_t i = 0; i < order_.size(); ++i) {
    auto text = root.read(order_[i], 1 << 20);
    if (!text || !*text) continue;
    for (const auto& a : host::parse::sysctl_conf(**text)) {
      auto key = settings::sysctl_normalise(a.key);
      if (!key) continue;
      entries_.push_back(Entry{*key, SysctlSource{order_[i], a.line, a.value}, i});
    }
  }
}

std::vector<SysctlSource> SysctlFiles::sources(const std::string& key) const {
  std::vector<SysctlSource> out;
  for (const auto& e : entries_)
    if (e.key == key) out.push_back(e.source);
  return out;
}

std::vector<SysctlSource> SysctlFiles::overriding_dltune(const std::string& key) const {
  // Where dltune's file sits (or would sit) in the order.
  const std::string ours = "90-dltune.conf";
  std::vector<SysctlSource> out;
  for (const auto& e : entries_) {
    if (e.key != key || e.source.file == kDltuneSysctlFile) continue;
    const auto& file = e.source.file;
    const bool after = file == "/etc/sysctl.conf" || file.substr(file.rfind('/') + 1) > ours;
    if (after) out.push_back(e.source);
  }
  return out;
}

}  // namespace dltune::settings
