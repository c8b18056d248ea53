#include "host/ethtool.hpp"

#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace dltune::host {

struct Ethtool::Reply {
  std::uint8_t command = 0;  // the request's, to check the reply against
  bool seen = false;
  std::uint16_t family = 0;  // CTRL_CMD_GETFAMILY
  EthtoolRings rings;
  EthtoolFeatures features;
};

namespace {

// The attributes of one nest (or of the message after its headers), by type; later duplicates
// win, unknown types above `max` are ignored (a newer kernel's).
struct Attrs {
  std::vector<const nlattr*> by_type;
  explicit Attrs(int max) : by_type(static_cast<std::size_t>(max) + 1, nullptr) {}
  [[nodiscard]] const nlattr* operator[](int type) const {
    return type >= 0 && static_cast<std::size_t>(type) < by_type.size()
               ? by_type[static_cast<std::size_t>(type)]
               : nullptr;
  }
};

int keep_attr(const nlattr* attr, void* data) {
  auto* a = static_cast<Attrs*>(data);
  const int type = mnl_attr_get_type(attr);
  if (type >= 0 && static_cast<std::size_t>(type) < a->by_type.size())
    a->by_type[static_cast<std::size_t>(type)] = attr;
  return MNL_CB_OK;
}

Attrs nested(const nlattr* nest, int max) {
  Attrs a(max);
  if (nest != nullptr) mnl_attr_parse_nested(nest, keep_attr, &a);
  return a;
}

std::uint32_t u32_of(const Attrs& a, int type) {
  const nlattr* x = a[type];
  return x != nullptr && mnl_attr_validate(x, MNL_TYPE_U32) >= 0 ? mnl_attr_get_u32(x) : 0;
}

// A bit set in the verbose form (the request asks for names): the names of the bits that are
// set. Without a mask (ETHTOOL_A_BITSET_NOMASK) only set bits are listed; with one, a bit is set
// when it carries ETHTOOL_A_BITSET_BIT_VALUE (ethtool-netlink.rst, "Bit sets").
std::vector<std::string> bit_names(const nlattr* bitset) {
  std::vector<std::string> out;
  if (bitset == nullptr) return out;
  const Attrs set = nested(bitset, ETHTOOL_A_BITSET_MAX);
  const bool nomask = set[ETHTOOL_A_BITSET_NOMASK] != nullptr;
  const nlattr* bits = set[ETHTOOL_A_BITSET_BITS];
  if (bits == nullptr) return out;
  // Every ETHTOOL_A_BITSET_BITS_BIT of the nest (mnl_attr_for_each_nested is C's: it assigns a
  // void pointer), in order.
  std::vector<const nlattr*> each;
  mnl_attr_parse_nested(
      bits,
      [](const nlattr* attr, void* data) {
        if (mnl_attr_get_type(attr) == ETHTOOL_A_BITSET_BITS_BIT)
          static_cast<std::vector<const nlattr*>*>(data)->push_back(attr);
        return MNL_CB_OK;
      },
      &each);
  for (const nlattr* bit : each) {
    const Attrs b = nested(bit, ETHTOOL_A_BITSET_BIT_MAX);
    const nlattr* name = b[ETHTOOL_A_BITSET_BIT_NAME];
    if (name == nullptr || mnl_attr_validate(name, MNL_TYPE_NUL_STRING) < 0) continue;
    if (nomask || b[ETHTOOL_A_BITSET_BIT_VALUE] != nullptr)
      out.emplace_back(mnl_attr_get_str(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

int on_reply(const nlmsghdr* nlh, void* data) {
  auto* r = static_cast<Ethtool::Reply*>(data);
  const auto* genl = static_cast<const genlmsghdr*>(mnl_nlmsg_get_payload(nlh));
  if (r->command == CTRL_CMD_GETFAMILY) {
    Attrs a(CTRL_ATTR_MAX);
    mnl_attr_parse(nlh, sizeof(genlmsghdr), keep_attr, &a);
    if (const nlattr* id = a[CTRL_ATTR_FAMILY_ID]; id && mnl_attr_validate(id, MNL_TYPE_U16) >= 0) {
      r->family = mnl_attr_get_u16(id);
      r->seen = true;
    }
  } else if (r->command == ETHTOOL_MSG_RINGS_GET && genl->cmd == ETHTOOL_MSG_RINGS_GET_REPLY) {
    Attrs a(ETHTOOL_A_RINGS_MAX);
    mnl_attr_parse(nlh, sizeof(genlmsghdr), keep_attr, &a);
    r->rings.rx = u32_of(a, ETHTOOL_A_RINGS_RX);
    r->rings.rx_max = u32_of(a, ETHTOOL_A_RINGS_RX_MAX);
    r->rings.tx = u32_of(a, ETHTOOL_A_RINGS_TX);
    r->rings.tx_max = u32_of(a, ETHTOOL_A_RINGS_TX_MAX);
    r->seen = true;
  } else if (r->command == ETHTOOL_MSG_FEATURES_GET &&
             genl->cmd == ETHTOOL_MSG_FEATURES_GET_REPLY) {
    Attrs a(ETHTOOL_A_FEATURES_MAX);
    mnl_attr_parse(nlh, sizeof(genlmsghdr), keep_attr, &a);
    r->features.changeable = bit_names(a[ETHTOOL_A_FEATURES_HW]);
    r->features.active = bit_names(a[ETHTOOL_A_FEATURES_ACTIVE]);
    r->features.fixed = bit_names(a[ETHTOOL_A_FEATURES_NOCHANGE]);
    r->seen = true;
  }
  return MNL_CB_OK;
}

}  // namespace

Result<void> Ethtool::ask(std::uint16_t type, std::uint8_t command, int header_attr,
                          const std::string& ifname, Reply& reply) {
  std::vector<char> buf(MNL_SOCKET_BUFFER_SIZE);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buf.data());
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = ++seq_;
  auto* genl = static_cast<genlmsghdr*>(mnl_nlmsg_put_extra_header(nlh, sizeof(genlmsghdr)));
  genl->cmd = command;
  if (command == CTRL_CMD_GETFAMILY) {
    genl->version = 1;
    mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
  } else {
    genl->version = ETHTOOL_GENL_VERSION;
    nlattr* header = mnl_attr_nest_start(nlh, static_cast<std::uint16_t>(header_attr));
    mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, ifname.c_str());
    mnl_attr_nest_end(nlh, header);
  }
  reply.command = command;
  const std::string what = command == CTRL_CMD_GETFAMILY
                               ? std::string("netlink: the ethtool family")
                               : fmt::format("ethtool netlink ({})", ifname);
  if (mnl_socket_sendto(socket_, nlh, nlh->nlmsg_len) < 0) return fail("cannot ask", what, errno);
  for (;;) {
    const ssize_t n = mnl_socket_recvfrom(socket_, buf.data(), buf.size());
    if (n < 0) return fail("no answer from", what, errno);
    const int r =
        mnl_cb_run(buf.data(), static_cast<std::size_t>(n), seq_, port_, on_reply, &reply);
    if (r == MNL_CB_STOP) break;  // the acknowledgement
    if (r < 0) return fail("refused:", what, errno);
  }
  if (!reply.seen) return fail("no reply from", what, ENODATA);
  return {};
}

Result<Ethtool> Ethtool::open() {
  mnl_socket* s = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
  if (s == nullptr) return fail("cannot open a generic netlink socket", "", errno);
  if (mnl_socket_bind(s, 0, MNL_SOCKET_AUTOPID) < 0) {
    const int err = errno;
    mnl_socket_close(s);
    return fail("cannot bind a generic netlink socket", "", err);
  }
  Ethtool e(s, 0, mnl_socket_get_portid(s));
  Reply reply;
  if (auto r = e.ask(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0, "", reply); !r) {
    // ENOENT: the kernel has no ethtool family (before 5.6, or CONFIG_ETHTOOL_NETLINK off).
    return tl::unexpected(r.error());
  }
  e.family_ = reply.family;
  return e;
}

Ethtool::Ethtool(Ethtool&& other) noexcept
    : socket_(std::exchange(other.socket_, nullptr)),
      family_(other.family_),
      port_(other.port_),
      seq_(other.seq_) {}

Ethtool& Ethtool::operator=(Ethtool&& other) noexcept {
  if (this != &other) {
    if (socket_ != nullptr) mnl_socket_close(socket_);
    socket_ = std::exchange(other.socket_, nullptr);
    family_ = other.family_;
    port_ = other.port_;
    seq_ = other.seq_;
  }
  return *this;
}

Ethtool::~Ethtool() {
  if (socket_ != nullptr) mnl_socket_close(socket_);
}

Result<EthtoolRings> Ethtool::rings(const std::string& ifname) {
  Reply reply;
  if (auto r = ask(family_, ETHTOOL_MSG_RINGS_GET, ETHTOOL_A_RINGS_HEADER, ifname, reply); !r)
    return tl::unexpected(r.error());
  return reply.rings;
}

Result<EthtoolFeatures> Ethtool::features(const std::string& ifname) {
  Reply reply;
  if (auto r = ask(family_, ETHTOOL_MSG_FEATURES_GET, ETHTOOL_A_FEATURES_HEADER, ifname, reply); !r)
    return tl::unexpected(r.error());
  return reply.features;
}

}  // namespace dltune::host
