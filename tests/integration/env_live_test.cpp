// `dltune env` on this machine, checked against independent reads: system calls, the files
// read here directly, and hwloc's own command-line tools.
#include <net/if.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "host/ethtool.hpp"
#include "support/build_paths.hpp"
#include "support/run.hpp"

namespace env_live_test {

using dltune::testing::run;
using nlohmann::json;

namespace {

const json& live() {
  static const json doc = [] {
    const auto r = run({DLTUNE_BINARY, "env", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }();
  return doc;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int hwloc_count(const std::string& type) {
  const auto r =
      run({"hwloc-calc", "--number-of", type, "all"}, {{"HWLOC_COMPONENTS", "-x86,-pci"}});
  EXPECT_EQ(r.exit_code, 0) << "hwloc-calc: " << r.err;
  return std::stoi(r.out);
}

}  // namespace

TEST(EnvLive, KernelAndHostnameMatchUname) {
  utsname u{};
  ASSERT_EQ(::uname(&u), 0);
  EXPECT_EQ(live()["os"]["kernel_release"], u.release);
  EXPECT_EQ(live()["os"]["hostname"], u.nodename);
}

TEST(EnvLive, BootTimeMatchesSysinfoUptime) {
  struct sysinfo si {};
  ASSERT_EQ(::sysinfo(&si), 0);
  const auto boot = static_cast<long>(std::time(nullptr)) - si.uptime;
  EXPECT_NEAR(live()["os"]["boot_time"].get<long>(), boot, 3);
}

TEST(EnvLive, MemoryMatchesSysinfo) {
  struct sysinfo si {};
  ASSERT_EQ(::sysinfo(&si), 0);
  EXPECT_EQ(live()["memory"]["total_bytes"].get<std::uint64_t>(),
            static_cast<std::uint64_t>(si.totalram) * si.mem_unit);
  EXPECT_EQ(live()["memory"]["swap_total_bytes"].get<std::uint64_t>(),
            static_cast<std::uint64_t>(si.totalswap) * si.mem_unit);
}

TEST(EnvLive, CpuTopologyMatchesHwlocToolsAndSysconf) {
  const auto& cpu = live()["cpu"];
  EXPECT_EQ(cpu["threads"].get<int>(), hwloc_count("pu"));
  EXPECT_EQ(cpu["cores"].get<int>(), hwloc_count("core"));
  EXPECT_EQ(cpu["sockets"].get<int>(), hwloc_count("package"));
  EXPECT_EQ(static_cast<int>(cpu["numa_nodes"].size()), hwloc_count("numanode"));
  EXPECT_EQ(cpu["threads"].get<long>(), ::sysconf(_SC_NPROCESSORS_CONF));
  int nodes = 0;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/node"))
    if (std::regex_match(e.path().filename().string(), std::regex("node[0-9]+"))) ++nodes;
  EXPECT_EQ(static_cast<int>(cpu["numa_nodes"].size()), nodes);
  // Every node's distance to itself is 10 (ACPI SLIT).
  for (const auto& n : cpu["numa_nodes"]) {
    ASSERT_FALSE(n["distances"].empty());
    EXPECT_EQ(n["distances"][n["id"].get<int>()], 10);
  }
}

#if defined(__x86_64__)
TEST(EnvLive, CpuFlagsMatchCpuid) {
  std::set<std::string> flags;
  for (const auto& f : live()["cpu"]["flags"]) flags.insert(f.get<std::string>());
  __builtin_cpu_init();
  EXPECT_EQ(flags.count("avx2") == 1, __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(flags.count("avx512f") == 1, __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(flags.count("fma") == 1, __builtin_cpu_supports("fma") != 0);
}
#endif

TEST(EnvLive, LimitsMatchGetrlimit) {
  // The child inherits this process's limits.
  rlimit nofile{}, memlock{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &nofile), 0);
  ASSERT_EQ(::getrlimit(RLIMIT_MEMLOCK, &memlock), 0);
  const auto& l = live()["memory"]["limits"];
  auto value = [](const json& v) -> rlim_t {
    return v.is_string() ? RLIM_INFINITY : v.get<rlim_t>();
  };
  EXPECT_EQ(value(l["nofile"]["soft"]), nofile.rlim_cur);
  EXPECT_EQ(value(l["nofile"]["hard"]), nofile.rlim_max);
  EXPECT_EQ(value(l["memlock"]["soft"]), memlock.rlim_cur);
}

TEST(EnvLive, ThpMatchesTheFile) {
  const auto text = slurp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("\\[([a-z+]+)\\]")));
  EXPECT_EQ(live()["memory"]["thp"]["enabled"]["selected"], m[1].str());
}

TEST(EnvLive, ShmAndRootFileSystemMatchStatvfs) {
  struct statvfs shm {};
  ASSERT_EQ(::statvfs("/dev/shm", &shm), 0);
  EXPECT_EQ(live()["memory"]["shm"]["size_bytes"].get<std::uint64_t>(),
            static_cast<std::uint64_t>(shm.f_blocks) * shm.f_frsize);
  struct statvfs rootfs {};
  ASSERT_EQ(::statvfs("/", &rootfs), 0);
  bool found = false;
  for (const auto& fs : live()["storage"]["file_systems"]) {
    if (fs["mount_point"] != "/") continue;
    found = true;
    EXPECT_EQ(fs["total_bytes"].get<std::uint64_t>(),
              static_cast<std::uint64_t>(rootfs.f_blocks) * rootfs.f_frsize);
  }
  EXPECT_TRUE(found);
}

TEST(EnvLive, CgroupVersionMatchesStatfs) {
  struct statfs st {};
  ASSERT_EQ(::statfs("/sys/fs/cgroup", &st), 0);
  constexpr long kCgroup2Magic = 0x63677270;  // linux/magic.h CGROUP2_SUPER_MAGIC
  const auto version = live()["os"]["cgroup"]["version"].get<std::string>();
  if (st.f_type == kCgroup2Magic) {
    EXPECT_EQ(version, "v2");
  } else {
    struct statfs unified {};
    const bool hybrid =
        ::statfs("/sys/fs/cgroup/unified", &unified) == 0 && unified.f_type == kCgroup2Magic;
    EXPECT_EQ(version, hybrid ? "hybrid" : "v1");
  }
}

TEST(EnvLive, InterfacesMatchIfNameindex) {
  std::set<std::string> kernel;
  struct if_nameindex* ifs = ::if_nameindex();
  ASSERT_NE(ifs, nullptr);
  for (auto* i = ifs; i->if_index != 0; ++i)
    if (std::string(i->if_name) != "lo") kernel.insert(i->if_name);
  ::if_freenameindex(ifs);
  std::set<std::string> reported;
  for (const auto& i : live()["network"]["interfaces"])
    reported.insert(i["name"].get<std::string>());
  EXPECT_EQ(reported, kernel);
}

// Each physical interface's rings and offloads, as env read them through ethtool netlink,
// against the ethtool program's own report (`ethtool -g`, `ethtool -k`).
TEST(EnvLive, RingsAndOffloadsMatchTheEthtoolProgram) {
  if (run({"ethtool", "--version"}).exit_code != 0)
    GTEST_SKIP() << "no ethtool program here (scripts/install-deps installs it)";
  int compared = 0;
  for (const auto& i : live()["network"]["interfaces"]) {
    if (!i.contains("ethtool")) continue;
    const std::string name = i["name"];
    const auto& e = i["ethtool"];
    if (e.contains("rings")) {
      const auto g = run({"ethtool", "-g", name});
      ASSERT_EQ(g.exit_code, 0) << g.err;
      // "Pre-set maximums:" then "Current hardware settings:", each with "RX:" and "TX:".
      std::map<std::string, std::string> v;
      std::string part;
      std::istringstream lines(g.out);
      for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("Pre-set")) part = "max";
        if (line.starts_with("Current")) part = "now";
        std::smatch m;
        if (std::regex_match(line, m, std::regex(R"((RX|TX):\s+([0-9]+))")))
          v[part + m[1].str()] = m[2];
      }
      EXPECT_EQ(std::to_string(e["rings"]["rx"].get<unsigned>()), v["nowRX"]) << g.out;
      EXPECT_EQ(std::to_string(e["rings"]["rx_max"].get<unsigned>()), v["maxRX"]) << g.out;
      EXPECT_EQ(std::to_string(e["rings"]["tx"].get<unsigned>()), v["nowTX"]) << g.out;
      EXPECT_EQ(std::to_string(e["rings"]["tx_max"].get<unsigned>()), v["maxTX"]) << g.out;
      ++compared;
    }
    if (e.contains("offloads")) {
      const auto k = run({"ethtool", "-k", name});
      ASSERT_EQ(k.exit_code, 0) << k.err;
      // "\ttx-tcp-segmentation: on", "generic-receive-offload: off [fixed]": ethtool prints a
      // few features by their older names (ethtool's off_flag_def table).
      const std::map<std::string, std::string> old_names = {
          {"rx-checksum", "rx-checksumming"},
          {"tx-generic-segmentation", "generic-segmentation-offload"},
          {"rx-gro", "generic-receive-offload"},
          {"rx-lro", "large-receive-offload"}};
      std::map<std::string, std::pair<bool, bool>> printed;  // on, changeable
      std::istringstream lines(k.out);
      for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_match(line, m, std::regex(R"(\s*([a-z0-9-]+): (on|off)( \[fixed\])?.*)")))
          printed[m[1]] = {m[2] == "on", !m[3].matched};
      }
      for (const auto& [n, o] : e["offloads"].items()) {
        const auto it = old_names.find(n);
        const std::string shown = it == old_names.end() ? n : it->second;
        ASSERT_TRUE(printed.count(shown)) << shown << "\n" << k.out;
        EXPECT_EQ(printed[shown].first, o["active"].get<bool>()) << shown;
        EXPECT_EQ(printed[shown].second, o["changeable"].get<bool>()) << shown;
      }
      ++compared;
    }
  }
  if (compared == 0) GTEST_SKIP() << "no physical interface reports its rings or offloads here";
}

// An interface that is not there: the kernel's answer (ENODEV), naming the interface.
TEST(EnvLive, EthtoolNetlinkNamesAMissingInterface) {
  auto nl = dltune::host::Ethtool::open();
  if (!nl) GTEST_SKIP() << "no ethtool netlink here: " << nl.error().message();
  const auto r = nl->rings("dltune-none0");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().errno_, ENODEV) << r.error().message();
  EXPECT_NE(r.error().message().find("dltune-none0"), std::string::npos) << r.error().message();
}

TEST(EnvLive, NothingUnreadableOnAHealthyHost) {
  EXPECT_TRUE(live()["problems"].empty()) << live()["problems"].dump(2);
}

}  // namespace env_live_test
