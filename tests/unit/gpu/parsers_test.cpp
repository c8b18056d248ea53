// The pure parsers of GPU-related host files: pci.ids, /proc/driver/nvidia/version,
// /proc/modules and PCI sysfs values. Text copied from real hosts, with odd lines.
#include <gtest/gtest.h>

#include "host/parse/nvidia_version.hpp"
#include "host/parse/pci_device.hpp"
#include "host/parse/pci_ids.hpp"
#include "host/parse/proc_modules.hpp"

namespace parsers_test {

namespace parse = dltune::host::parse;

namespace {

// From pci.ids 2023.04.11 (Debian 12), cut down, with odd lines added: a CRLF line end, a bad
// hex id, a comment inside a vendor, a device id that another vendor also uses, and the class
// list at the end (whose indented lines look like devices).
constexpr const char* kPciIds =
    "#\n"
    "#\tList of PCI ID's\n"
    "#\n"
    "# Vendors, devices and subsystems. Please keep sorted.\n"
    "\n"
    "1002  Advanced Micro Devices, Inc. [AMD/ATI]\n"
    "\t740f  Aldebaran/MI200 [Instinct MI210]\n"
    "\t74a1  Aqua Vanjaram [Instinct MI300X]\n"
    "10de  NVIDIA Corporation\r\n"
    "\t1db6  GV100GL [Tesla V100 PCIe 32GB]\n"
    "# an odd comment inside a vendor\n"
    "\t20b0  GA100 [A100 SXM4 40GB]\n"
    "\t\t10de 134f  A100 SXM4 40GB\n"
    "\t2330  GH100[H100 SXM5 80GB]\n"
    "\t\t10de 16c1  H100 SXM5 80GB\n"
    "\tzzzz  not a device id\n"
    "\t\t10de\n"
    "\t2331  GH100 [H100 PCIe]\n"
    "19c1  Exegy Inc.\n"
    "\t2330  ZyWALL Turbo Card\n"
    "1a03  ASPEED Technology, Inc.\n"
    "\t1150  AST1150 PCI-to-PCI Bridge\n"
    "\t2000  ASPEED Graphics Family\n"
    "\t\t15d9 0832  X10SRL-F\n"
    "C 00  Unclassified device [0000]\n"
    "\t10de  a class line that looks like a device\n"
    "C 03  Display controller\n"
    "\t02  3D controller\n";

}  // namespace

TEST(PciIds, LooksUpOnlyWhatIsAsked) {
  const std::vector<parse::PciId> wanted = {
      {0x10de, 0x2330, 0x10de, 0x16c1},  // H100 SXM5 with its subsystem
      {0x10de, 0x20b0, 0x10de, 0x9999},  // a subsystem pci.ids does not list
      {0x1a03, 0x2000, std::nullopt, std::nullopt},
      {0x1002, 0x74a1, 0x1002, 0x74a1},
      {0x10de, 0xffff, std::nullopt, std::nullopt},  // a device it does not know
      {0x1234, 0x1111, std::nullopt, std::nullopt},  // a vendor it does not know
  };
  const auto names = parse::pci_ids_lookup(kPciIds, wanted);
  ASSERT_EQ(names.size(), wanted.size());
  EXPECT_EQ(names[0].vendor, "NVIDIA Corporation");  // the CRLF is gone
  EXPECT_EQ(names[0].device, "GH100[H100 SXM5 80GB]");
  EXPECT_EQ(names[0].subsystem, "H100 SXM5 80GB");
  EXPECT_EQ(names[1].device, "GA100 [A100 SXM4 40GB]");
  EXPECT_FALSE(names[1].subsystem);
  EXPECT_EQ(names[2].vendor, "ASPEED Technology, Inc.");
  EXPECT_EQ(names[2].device, "ASPEED Graphics Family");
  EXPECT_FALSE(names[2].subsystem);
  EXPECT_EQ(names[3].device, "Aqua Vanjaram [Instinct MI300X]");
  EXPECT_EQ(names[4].vendor, "NVIDIA Corporation");
  EXPECT_FALSE(names[4].device);
  EXPECT_FALSE(names[5].vendor);
  EXPECT_FALSE(names[5].device);
}

TEST(PciIds, ADeviceIdUnderAnotherVendorIsNotMistaken) {
  const std::vector<parse::PciId> wanted = {{0x19c1, 0x2330, std::nullopt, std::nullopt}};
  EXPECT_EQ(parse::pci_ids_lookup(kPciIds, wanted)[0].device, "ZyWALL Turbo Card");
}

TEST(PciIds, EmptyOrGarbledTextGivesNoNames) {
  const std::vector<parse::PciId> wanted = {{0x10de, 0x2330, std::nullopt, std::nullopt}};
  EXPECT_FALSE(parse::pci_ids_lookup("", wanted)[0].vendor);
  EXPECT_FALSE(parse::pci_ids_lookup("\x01\x02\n\t\t\t\n10de\n\t2330\n", wanted)[0].device);
  // "10de" with no name after it is a vendor without a name, and its device is still found.
  const auto n = parse::pci_ids_lookup("10de\n\t2330  GH100\n", wanted);
  EXPECT_FALSE(n[0].vendor);
  EXPECT_EQ(n[0].device, "GH100");
  EXPECT_TRUE(parse::pci_ids_lookup(kPciIds, {}).empty());
}

TEST(NvidiaVersion, ProprietaryKernelModule) {
  const auto v = parse::nvidia_version(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n"
      "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n");
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(v->version, "550.54.15");
  EXPECT_FALSE(v->open_kernel_module);
  EXPECT_EQ(v->architecture, "x86_64");
  EXPECT_EQ(v->gcc_version, "12.2.0");
}

TEST(NvidiaVersion, OpenKernelModule) {
  const auto v = parse::nvidia_version(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build  "
      "(dvs-builder@U16-I3-B03-4-3)  Sat Aug 19 01:13:45 UTC 2023\n"
      "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) \n");
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_EQ(v->version, "535.104.05");
  EXPECT_TRUE(v->open_kernel_module);
  EXPECT_EQ(v->architecture, "x86_64");
  EXPECT_EQ(v->gcc_version, "11.4.0");
}

TEST(NvidiaVersion, OlderAndOtherArchitectures) {
  const auto v = parse::nvidia_version(
      "NVRM version: NVIDIA UNIX aarch64 Kernel Module  470.82.01  Wed Oct 27 21:21:55 UTC 2021");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->version, "470.82.01");
  EXPECT_EQ(v->architecture, "aarch64");
  EXPECT_FALSE(v->gcc_version);
}

TEST(NvidiaVersion, GarbledTextIsAnErrorNamingTheLine) {
  EXPECT_FALSE(parse::nvidia_version(""));
  EXPECT_FALSE(parse::nvidia_version("GCC version:  gcc version 12.2.0\n"));
  const auto v = parse::nvidia_version("\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  \n");
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message().find("line 2"), std::string::npos) << v.error().message();
}

TEST(NvidiaVersion, DriverVersionShape) {
  EXPECT_TRUE(parse::is_driver_version("550.54.15"));
  EXPECT_TRUE(parse::is_driver_version("418.87"));
  EXPECT_FALSE(parse::is_driver_version("550"));
  EXPECT_FALSE(parse::is_driver_version("550..15"));
  EXPECT_FALSE(parse::is_driver_version("550.54."));
  EXPECT_FALSE(parse::is_driver_version("x86_64"));
  EXPECT_FALSE(parse::is_driver_version("22:23:56"));
}

TEST(ProcModules, ParsesNamesDependenciesAndState) {
  const auto m = parse::proc_modules(
      "nvidia_uvm 1536000 0 - Live 0x0000000000000000 (POE)\n"
      "nvidia_drm 77824 2 - Live 0x0000000000000000 (POE)\n"
      "nvidia_modeset 1314816 3 nvidia_drm, Live 0x0000000000000000 (POE)\n"
      "nvidia 56627200 19 nvidia_uvm,nvidia_modeset, Live 0x0000000000000000 (POE)\n"
      "\n"
      "this line is garbled\n"
      "nouveau 2711552 0 - Loading 0xffffffffc0a00000\n");
  ASSERT_EQ(m.modules.size(), 5u);
  EXPECT_EQ(m.modules[3].name, "nvidia");
  EXPECT_EQ(m.modules[3].size_bytes, 56627200u);
  EXPECT_EQ(m.modules[3].instances, 19u);
  EXPECT_EQ(m.modules[3].used_by, (std::vector<std::string>{"nvidia_uvm", "nvidia_modeset"}));
  EXPECT_EQ(m.modules[3].state, "Live");
  EXPECT_TRUE(m.modules[0].used_by.empty());
  EXPECT_EQ(m.modules[4].name, "nouveau");
  EXPECT_EQ(m.modules[4].state, "Loading");
  ASSERT_EQ(m.errors.size(), 1u);
  EXPECT_NE(m.errors[0].find("line 6"), std::string::npos) << m.errors[0];
}

TEST(ProcModules, EmptyFileHasNoModules) {
  const auto m = parse::proc_modules("");
  EXPECT_TRUE(m.modules.empty());
  EXPECT_TRUE(m.errors.empty());
}

TEST(PciDevice, LinkSpeedStrings) {
  struct Case {
    const char* text;
    std::optional<double> gts;
    std::optional<int> gen;
  };
  const Case cases[] = {
      {"16.0 GT/s PCIe\n", 16.0, 4},  // kernels since 5.x
      {"8.0 GT/s PCIe", 8.0, 3},
      {"32.0 GT/s PCIe", 32.0, 5},
      {"64.0 GT/s PCIe", 64.0, 6},
      {"2.5 GT/s", 2.5, 1},  // older kernels
      {"5 GT/s", 5.0, 2},
      {"8 GT/s", 8.0, 3},
      {"2.5 GT/s PCIe", 2.5, 1},
      {"20.0 GT/s PCIe", 20.0, std::nullopt},  // a rate that is no PCIe generation's
      {"Unknown", std::nullopt, std::nullopt},
      {"Unknown speed", std::nullopt, std::nullopt},
      {"", std::nullopt, std::nullopt},
      {"fast GT/s", std::nullopt, std::nullopt},
      {"-8.0 GT/s", std::nullopt, std::nullopt},
      {"33 MHz PCI", std::nullopt, std::nullopt},
  };
  for (const auto& c : cases) {
    const auto s = parse::pcie_link_speed(c.text);
    EXPECT_EQ(s.has_value(), c.gts.has_value()) << c.text;
    if (s && c.gts) {
      EXPECT_DOUBLE_EQ(s->gts, *c.gts) << c.text;
      EXPECT_EQ(s->generation, c.gen) << c.text;
    }
  }
}

TEST(PciDevice, LinkWidths) {
  EXPECT_EQ(parse::pcie_link_width("16\n"), 16);
  EXPECT_EQ(parse::pcie_link_width("x8"), 8);
  EXPECT_EQ(parse::pcie_link_width("1"), 1);
  EXPECT_FALSE(parse::pcie_link_width("0"));   // link down
  EXPECT_FALSE(parse::pcie_link_width("63"));  // all ones: the device fell off the bus
  EXPECT_FALSE(parse::pcie_link_width("Unknown"));
  EXPECT_FALSE(parse::pcie_link_width(""));
}

TEST(PciDevice, Addresses) {
  EXPECT_EQ(parse::pci_address("00000000:17:00.0"), "0000:17:00.0");  // NVML's form
  EXPECT_EQ(parse::pci_address("0000:8A:00.0"), "0000:8a:00.0");
  EXPECT_EQ(parse::pci_address("17:00.1"), "0000:17:00.1");
  EXPECT_EQ(parse::pci_address("10000:e1:00.0"), "10000:e1:00.0");  // an Intel VMD domain
  EXPECT_EQ(parse::pci_address(" 0000:17:00.0\n"), "0000:17:00.0");
  EXPECT_FALSE(parse::pci_address("0000:17:00"));
  EXPECT_FALSE(parse::pci_address("0000:17:20.0"));  // device is 5 bits
  EXPECT_FALSE(parse::pci_address("0000:17:00.8"));  // function is 3 bits
  EXPECT_FALSE(parse::pci_address("0000:117:00.0"));
  EXPECT_FALSE(parse::pci_address("GPU-1234"));
  EXPECT_FALSE(parse::pci_address(""));
  EXPECT_FALSE(parse::pci_address("XXXXXXXXXXXXXXXXXXXXXXXX"));
}

TEST(PciDevice, HexAttributes) {
  EXPECT_EQ(parse::pci_hex("0x030200\n"), 0x030200u);
  EXPECT_EQ(parse::pci_hex("0x10de"), 0x10deu);
  EXPECT_EQ(parse::pci_hex("10DE"), 0x10deu);
  EXPECT_FALSE(parse::pci_hex("0x"));
  EXPECT_FALSE(parse::pci_hex("garbage"));
  EXPECT_FALSE(parse::pci_hex("0x1234567890"));
}

}  // namespace parsers_test
