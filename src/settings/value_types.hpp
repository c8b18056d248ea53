#pragma once
// What value each setting takes, so that a profile's value is checked before anything is read or
// changed: "ten" or -5 for vm.swappiness, a newline in a sysctl, "sometimes" for THP are profile
// errors, never a plan ("60 -> ten").
#include <string>

#include "core/error.hpp"
#include "settings/profile.hpp"

namespace dltune::settings {

// Checks every value `entry` names (its `value`, `critical`, a minimum's number, one value per
// field when `field` is set) against the type and range of `entry.key`: the kernel's own range
// where it has one (vm.swappiness 0 to 200, overcommit 0 to 2, dirty ratios 0 to 100), three
// integers for tcp_rmem/tcp_wmem/tcp_mem, THP's modes, limits as "unlimited" or an integer,
// booleans for the checks that are yes or no. A sysctl without a known range takes one line of
// printable text. The error says the value and what is allowed ("-5: expected a whole number from
// 0 to 200"); the caller adds where it was written.
[[nodiscard]] Result<void> check_value(const ProfileEntry& entry);

// What `key` takes, in words, for listings ("a whole number from 0 to 200").
[[nodiscard]] std::string value_type_text(const std::string& key);

}  // namespace dltune::settings
