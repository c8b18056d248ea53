#pragma once
// A NIC's ring sizes and offloads through the kernel's ethtool netlink interface (the "ethtool"
// generic netlink family, Linux 5.6 and later: Documentation/networking/ethtool-netlink.rst),
// spoken with libmnl. What `ethtool -g IF` and `ethtool -k IF` print, without running ethtool.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

struct mnl_socket;

namespace dltune::host {

// ETHTOOL_MSG_RINGS_GET: the descriptors in each ring now and the most the device takes.
struct EthtoolRings {
  std::uint32_t rx = 0, rx_max = 0;
  std::uint32_t tx = 0, tx_max = 0;
};

// ETHTOOL_MSG_FEATURES_GET, by the names `ethtool -k` uses in its long form ("rx-gro",
// "tx-tcp-segmentation"): the ones the driver lets be changed (ETHTOOL_A_FEATURES_HW), the ones
// on (ETHTOOL_A_FEATURES_ACTIVE) and the ones that cannot change (ETHTOOL_A_FEATURES_NOCHANGE).
struct EthtoolFeatures {
  std::vector<std::string> changeable, active, fixed;  // each sorted
};

class Ethtool {
 public:
  // A socket bound to the ethtool family. Fails (naming why) where the kernel has no such
  // family (before 5.6, or without CONFIG_ETHTOOL_NETLINK) or netlink is not allowed.
  [[nodiscard]] static Result<Ethtool> open();
  Ethtool(Ethtool&& other) noexcept;
  Ethtool& operator=(Ethtool&& other) noexcept;
  Ethtool(const Ethtool&) = delete;
  Ethtool& operator=(const Ethtool&) = delete;
  ~Ethtool();

  // An error names the interface and the kernel's errno (EOPNOTSUPP: the driver does not report
  // it; ENODEV: no such interface).
  [[nodiscard]] Result<EthtoolRings> rings(const std::string& ifname);
  [[nodiscard]] Result<EthtoolFeatures> features(const std::string& ifname);

  struct Reply;  // what one request's answer held (ethtool.cpp)

 private:
  Ethtool(mnl_socket* socket, std::uint16_t family, unsigned port)
      : socket_(socket), family_(family), port_(port) {}
  Result<void> ask(std::uint16_t type, std::uint8_t command, int header_attr,
                   const std::string& ifname, Reply& reply);
  mnl_socket* socket_ = nullptr;
  std::uint16_t family_ = 0;
  unsigned port_ = 0;
  unsigned seq_ = 0;
};

}  // namespace dltune::host
