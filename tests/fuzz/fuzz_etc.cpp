// libFuzzer target: the /etc files dltune reads and rewrites (fstab, limits.conf and limits.d,
// sysctl.conf and sysctl.d) and tune's rewriting of them (tune/dropins.hpp): the merge of a file
// with whatever is already in it must not crash, and merging twice must give the same text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include "fuzz_input.hpp"
#include "host/parse/fstab.hpp"
#include "host/parse/limits_conf.hpp"
#include "host/parse/sysctl_conf.hpp"
#include "settings/dropins.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace parse = dltune::host::parse;
  namespace dropins = dltune::settings;
  const dltune::fuzz::Input in(data, size);
  const auto [first, second] = in.two();
  const std::string value(second.substr(0, 64));
  // What tune hands the merges: a sysctl name of [a-z0-9_./-] and a value that is not blank
  // (tune/plan.cpp); anything else is outside their contract, not a finding.
  const std::string key(second.substr(0, 32));
  // A normalised name: words of [a-z0-9_-] joined by '.' or '/', starting with a letter or digit
  // (a leading '-' is sysctl.d's "ignore errors" prefix, never part of a name).
  const auto word_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  };
  bool key_ok =
      !key.empty() && word_char(key.front()) && key.front() != '-' && word_char(key.back());
  for (std::size_t i = 0; key_ok && i < key.size(); ++i) {
    const bool sep = key[i] == '.' || key[i] == '/';
    key_ok = word_char(key[i]) || (sep && !(key[i - 1] == '.' || key[i - 1] == '/'));
  }
  const bool value_ok = value.find_first_not_of(" \t\r\n") != std::string::npos;
  switch (in.selector % 8) {
    case 0:
      (void)parse::fstab(in.text);
      (void)parse::fstab_unescape(in.text);
      break;
    case 1:
      (void)parse::limits_conf(in.text);
      break;
    case 2:
      (void)parse::sysctl_conf(in.text);
      break;
    case 3: {
      if (!key_ok || !value_ok) break;
      const std::map<std::string, std::string> settings{{"vm.swappiness", value}, {key, "1"}};
      const auto once = dropins::merge_sysctl_dropin(first, settings);
      // Idempotent: a second merge of the same settings gives the same text (dropins.hpp).
      if (dropins::merge_sysctl_dropin(once, settings) != once) std::abort();
      (void)dropins::remove_from_sysctl_dropin(first, {"vm.swappiness", std::string(value)});
      break;
    }
    case 4: {
      const std::map<std::string, std::string> items{{"nofile", "1048576"},
                                                     {"memlock", "unlimited"}};
      if (dropins::check_limits(std::string(value), items)) {
        const auto once = dropins::merge_limits_dropin(first, std::string(value), items);
        if (dropins::merge_limits_dropin(once, std::string(value), items) != once) std::abort();
      }
      (void)dropins::remove_from_limits_dropin(first, "*", {"nofile"});
      break;
    }
    case 5:
      (void)dropins::fstab_add_option(first, std::string(value), "noatime");
      (void)dropins::fstab_options(first, std::string(value));
      break;
    case 6:
      (void)dropins::fstab_add_option(first, "/", value);
      break;
    case 7: {
      const std::map<std::string, std::string> writes{
          {"/sys/kernel/mm/transparent_hugepage/enabled", value}};
      if (auto once = dropins::merge_tmpfiles_dropin(first, writes)) {
        const auto twice = dropins::merge_tmpfiles_dropin(*once, writes);
        if (!twice || *twice != *once) std::abort();
      }
      break;
    }
  }
  return 0;
}
