#include "settings/sysctl_name.hpp"

#include <string>

#include <gtest/gtest.h>

namespace sysctl_name_test {

using dltune::settings::sysctl_normalise;
using dltune::settings::sysctl_path;

namespace {

struct Case {
  const char* name;
  const char* path;        // nullptr: refused
  const char* normalised;  // the dotted form
};

// The spellings of sysctl(8) and sysctl.d(5) (systemd's sysctl-util is the model): dotted names
// with '/' for a dot inside a component, and slash names that keep their dots.
const Case kCases[] = {
    {"vm.swappiness", "/proc/sys/vm/swappiness", "vm.swappiness"},
    {"vm/swappiness", "/proc/sys/vm/swappiness", "vm.swappiness"},
    {"net.ipv4.tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem", "net.ipv4.tcp_rmem"},
    {"net/ipv4/tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem", "net.ipv4.tcp_rmem"},
    {"net.ipv4.conf.eth0/100.rp_filter", "/proc/sys/net/ipv4/conf/eth0.100/rp_filter",
     "net.ipv4.conf.eth0/100.rp_filter"},
    {"net/ipv4/conf/eth0.100/rp_filter", "/proc/sys/net/ipv4/conf/eth0.100/rp_filter",
     "net.ipv4.conf.eth0/100.rp_filter"},
    {"net.ipv6.conf.enp1s0f0/10/20.disable_ipv6",
     "/proc/sys/net/ipv6/conf/enp1s0f0.10.20/disable_ipv6",
     "net.ipv6.conf.enp1s0f0/10/20.disable_ipv6"},
    {"net.ipv4.conf.all.forwarding", "/proc/sys/net/ipv4/conf/all/forwarding",
     "net.ipv4.conf.all.forwarding"},
    {"net.ipv4.neigh.br-lan.gc_stale_time", "/proc/sys/net/ipv4/neigh/br-lan/gc_stale_time",
     "net.ipv4.neigh.br-lan.gc_stale_time"},
    {"net.ipv4.conf.wg0:1.rp_filter", "/proc/sys/net/ipv4/conf/wg0:1/rp_filter",
     "net.ipv4.conf.wg0:1.rp_filter"},
    {"net.ipv4.conf.veth@if3.rp_filter", "/proc/sys/net/ipv4/conf/veth@if3/rp_filter",
     "net.ipv4.conf.veth@if3.rp_filter"},
    {"net.ipv4.conf.a+b.rp_filter", "/proc/sys/net/ipv4/conf/a+b/rp_filter",
     "net.ipv4.conf.a+b.rp_filter"},
    {"kernel.numa_balancing", "/proc/sys/kernel/numa_balancing", "kernel.numa_balancing"},
    {"fs.file-max", "/proc/sys/fs/file-max", "fs.file-max"},
    {"dev.raid.speed_limit_min", "/proc/sys/dev/raid/speed_limit_min", "dev.raid.speed_limit_min"},
    // Refused: empty, empty components, '.' and '..', separators at either end, absolute
    // paths, characters outside [A-Za-z0-9_.:/@+-], a top directory alone.
    {"", nullptr, nullptr},
    {"vm", nullptr, nullptr},
    {"vm.", nullptr, nullptr},
    {".vm.swappiness", nullptr, nullptr},
    {"vm.swappiness.", nullptr, nullptr},
    {"vm..swappiness", nullptr, nullptr},
    {"vm//swappiness", nullptr, nullptr},
    {"/vm/swappiness", nullptr, nullptr},
    {"vm/swappiness/", nullptr, nullptr},
    {"/proc/sys/vm/swappiness", nullptr, nullptr},
    {"../../etc/shadow", nullptr, nullptr},
    {"..", nullptr, nullptr},
    {".", nullptr, nullptr},
    {"/", nullptr, nullptr},
    {"vm/../../etc/shadow", nullptr, nullptr},
    {"vm/./swappiness", nullptr, nullptr},
    {"net.ipv4.conf./.rp_filter", nullptr, nullptr},   // component "." in dotted form
    {"net.ipv4.conf.//.rp_filter", nullptr, nullptr},  // component ".."
    {"net/ipv4/conf/../../../etc/x", nullptr, nullptr},
    {"vm.swap piness", nullptr, nullptr},
    {"vm.swappiness\n", nullptr, nullptr},
    {"vm.swappiness\t", nullptr, nullptr},
    {"vm.swap*", nullptr, nullptr},
    {"vm.swap\\piness", nullptr, nullptr},
    {"vm.swäppiness", nullptr, nullptr},
    {"vm.$(reboot)", nullptr, nullptr},
    {"~/vm.swappiness", nullptr, nullptr},
};

}  // namespace

TEST(SysctlName, Table) {
  for (const auto& c : kCases) {
    const auto path = sysctl_path(c.name);
    const auto normal = sysctl_normalise(c.name);
    if (c.path == nullptr) {
      EXPECT_FALSE(path.has_value()) << c.name << " -> " << (path ? *path : "");
      EXPECT_FALSE(normal.has_value()) << c.name;
      continue;
    }
    ASSERT_TRUE(path.has_value()) << c.name << ": " << path.error().message();
    EXPECT_EQ(*path, c.path) << c.name;
    ASSERT_TRUE(normal.has_value()) << c.name;
    EXPECT_EQ(*normal, c.normalised) << c.name;
    // The normal form names the same file.
    EXPECT_EQ(sysctl_path(*normal).value_or(""), c.path) << c.name;
  }
}

TEST(SysctlName, RefusalNamesTheName) {
  const auto r = sysctl_path("../../etc/shadow");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("../../etc/shadow"), std::string::npos);
  const auto nul = sysctl_path(std::string("vm.swap\0piness", 14));
  EXPECT_FALSE(nul.has_value());
}

TEST(SysctlName, EveryPathStaysUnderProcSys) {
  // Whatever is accepted maps to a normalised path under /proc/sys.
  for (const auto& c : kCases) {
    const auto path = sysctl_path(c.name);
    if (!path) continue;
    EXPECT_TRUE(path->starts_with("/proc/sys/")) << *path;
    EXPECT_EQ(path->find("/../"), std::string::npos) << *path;
    EXPECT_EQ(path->find("/./"), std::string::npos) << *path;
    EXPECT_EQ(path->find("//"), std::string::npos) << *path;
  }
}

}  // namespace sysctl_name_test
