#include "fabric/topology/address_plan.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/topology/topology_spec.h"

namespace ibfab::topo {
namespace {

// An address as a sockaddr: IPv6 when the text holds a ':'.
struct Addr {
  sockaddr_storage storage{};
  explicit Addr(const std::string& text) {
    if (text.find(':') != std::string::npos) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
      in6->sin6_family = AF_INET6;
      EXPECT_EQ(::inet_pton(AF_INET6, text.c_str(), &in6->sin6_addr), 1) << text;
    } else {
      auto* in = reinterpret_cast<sockaddr_in*>(&storage);
      in->sin_family = AF_INET;
      EXPECT_EQ(::inet_pton(AF_INET, text.c_str(), &in->sin_addr), 1) << text;
    }
  }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

uint32_t node(const Topology& t, const std::string& name) {
  const auto n = t.find(name);
  EXPECT_TRUE(n.has_value()) << name;
  return n.value_or(UINT32_MAX);
}

// "NODE PORT" of the port carrying `address`, or "none".
std::string owner(const Topology& t, const AddressPlan& plan, const std::string& address) {
  const Addr a(address);
  const PortAddress* p = plan.find(a.get());
  return p ? t.nodes()[p->node].name + " " + std::to_string(p->port) : "none";
}

std::optional<uint8_t> route(const AddressPlan& plan, uint32_t from, const std::string& address) {
  const Addr a(address);
  return plan.route(from, a.get());
}

std::string error_of(const Topology& t, std::vector<std::string> overrides,
                     std::optional<uint8_t> mcast_port = 1) {
  try {
    AddressPlan plan(t, AddressOptions{std::move(overrides), mcast_port});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

// One switch S; HCAs A (2 ports, both cabled), B (2 ports, port 2 free),
// C (1 port).
Topology two_port_hcas() {
  Topology t;
  const uint32_t s = t.add_node(NodeDesc{.kind = NodeKind::Switch, .name = "S", .node_guid = 0x100, .num_ports = 8});
  const uint32_t a = t.add_node(NodeDesc{.kind = NodeKind::Hca, .name = "A", .node_guid = 0x200, .num_ports = 2});
  const uint32_t b = t.add_node(NodeDesc{.kind = NodeKind::Hca, .name = "B", .node_guid = 0x300, .num_ports = 2});
  const uint32_t c = t.add_node(NodeDesc{.kind = NodeKind::Hca, .name = "C", .node_guid = 0x400, .num_ports = 1});
  const auto rate = fabric::LinkRate{};
  t.connect({a, 1}, {s, 1}, rate, sim::Time::ns(10));
  t.connect({a, 2}, {s, 2}, rate, sim::Time::ns(10));
  t.connect({b, 1}, {s, 3}, rate, sim::Time::ns(10));
  t.connect({c, 1}, {s, 4}, rate, sim::Time::ns(10));
  return t;
}

TEST(AddressPlan, DefaultAddressesOfAFatTree) {
  const Topology t = load_topology("fat-tree:2:4");  // L1..L4, S1, S2, then H1..H8
  const AddressPlan plan(t, {});
  ASSERT_EQ(plan.ports().size(), 8u);
  const PortAddress* h1 = plan.of(node(t, "H1"), 1);
  ASSERT_NE(h1, nullptr);
  EXPECT_EQ(h1->node, node(t, "H1"));
  EXPECT_EQ(h1->port, 1);
  EXPECT_EQ(AddressPlan::ipv4_text(h1->ipv4), "10.1.0.1");
  EXPECT_EQ(h1->prefix4, 16);
  EXPECT_EQ(AddressPlan::ipv6_text(h1->ipv6), "fd00:0:0:1::1");
  EXPECT_EQ(h1->prefix6, 64);
  const PortAddress* h8 = plan.of(node(t, "H8"), 1);
  ASSERT_NE(h8, nullptr);
  EXPECT_EQ(AddressPlan::ipv4_text(h8->ipv4), "10.1.0.8");
  EXPECT_EQ(AddressPlan::ipv6_text(h8->ipv6), "fd00:0:0:1::8");
  // Switches and ports an HCA lacks have no address.
  EXPECT_EQ(plan.of(node(t, "L1"), 1), nullptr);
  EXPECT_EQ(plan.of(node(t, "H1"), 2), nullptr);
  EXPECT_EQ(plan.of(node(t, "H1"), 0), nullptr);
  EXPECT_EQ(plan.of(1000, 1), nullptr);

  const std::vector<std::string> lines = plan.lines(t);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines.front(), "H1 1 10.1.0.1/16 fd00:0:0:1::1/64");
  EXPECT_EQ(lines.back(), "H8 1 10.1.0.8/16 fd00:0:0:1::8/64");
}

TEST(AddressPlan, DefaultsCountHostsPastOneByte) {
  const Topology t = load_topology("ring:10:30");  // H1..H300
  const AddressPlan plan(t, {});
  EXPECT_EQ(owner(t, plan, "10.1.1.0"), "H256 1");
  EXPECT_EQ(owner(t, plan, "10.1.1.44"), "H300 1");
  EXPECT_EQ(owner(t, plan, "fd00:0:0:1::12c"), "H300 1");
}

TEST(AddressPlan, HostsPastTheSlash16HaveOnlyIpv6) {
  const Topology t = load_topology("fat-tree:3:64");  // 65536 hosts
  const AddressPlan plan(t, {});
  ASSERT_EQ(plan.ports().size(), 65536u);
  EXPECT_EQ(owner(t, plan, "10.1.255.254"), "H65534 1");
  const PortAddress* last_v4 = plan.of(node(t, "H65534"), 1);
  const PortAddress* h65535 = plan.of(node(t, "H65535"), 1);
  ASSERT_NE(last_v4, nullptr);
  ASSERT_NE(h65535, nullptr);
  EXPECT_EQ(h65535->ipv4, 0u);
  EXPECT_EQ(owner(t, plan, "10.1.255.255"), "none");  // the /16's broadcast address
  EXPECT_EQ(owner(t, plan, "fd00:0:0:1::1:0"), "H65536 1");
  // inet_ntop shortens the first of two equal runs of zeros.
  EXPECT_EQ(plan.lines(t).back(), "H65536 1 - fd00::1:0:0:1:0/64");
  // A port without IPv4 has no IPv4 route of its own.
  EXPECT_EQ(route(plan, node(t, "H65535"), "10.1.0.1"), std::nullopt);
  EXPECT_EQ(route(plan, node(t, "H65535"), "fd00:0:0:1::1"), 1);
}

TEST(AddressPlan, FindByFamily) {
  const Topology t = load_topology("fat-tree:2:4");
  const AddressPlan plan(t, {});
  EXPECT_EQ(owner(t, plan, "10.1.0.3"), "H3 1");
  EXPECT_EQ(owner(t, plan, "fd00:0:0:1::3"), "H3 1");
  EXPECT_EQ(owner(t, plan, "::ffff:10.1.0.3"), "H3 1");  // IPv4-mapped
  EXPECT_EQ(owner(t, plan, "10.1.0.9"), "none");
  EXPECT_EQ(owner(t, plan, "10.2.0.1"), "none");  // no HCA has a port 2
  EXPECT_EQ(owner(t, plan, "fd00:0:0:2::1"), "none");
  EXPECT_EQ(owner(t, plan, "192.168.0.1"), "none");
  sockaddr_storage ib{};
  ib.ss_family = AF_IB;
  EXPECT_EQ(plan.find(reinterpret_cast<const sockaddr*>(&ib)), nullptr);
  EXPECT_EQ(plan.find(nullptr), nullptr);
  // An empty plan finds nothing and routes nowhere.
  const AddressPlan empty;
  EXPECT_EQ(empty.find(Addr("10.1.0.1").get()), nullptr);
  EXPECT_EQ(empty.of(0, 1), nullptr);
  EXPECT_EQ(route(empty, 0, "10.1.0.1"), std::nullopt);
}

TEST(AddressPlan, OverridesReplaceOneFamily) {
  const Topology t = load_topology("fat-tree:2:4");
  const AddressPlan plan(t, AddressOptions{{"H2=192.168.1.7/24", "H3:1=fd12::5", "H4=10.9.9.9",
                                            "H5:1=fd99::1/48", "H6:1=172.16.0.6"}});
  const PortAddress* h2 = plan.of(node(t, "H2"), 1);
  ASSERT_NE(h2, nullptr);
  EXPECT_EQ(AddressPlan::ipv4_text(h2->ipv4), "192.168.1.7");
  EXPECT_EQ(h2->prefix4, 24);
  EXPECT_EQ(AddressPlan::ipv6_text(h2->ipv6), "fd00:0:0:1::2");  // IPv6 untouched
  const PortAddress* h3 = plan.of(node(t, "H3"), 1);
  ASSERT_NE(h3, nullptr);
  EXPECT_EQ(AddressPlan::ipv6_text(h3->ipv6), "fd12::5");
  EXPECT_EQ(h3->prefix6, 64);
  EXPECT_EQ(AddressPlan::ipv4_text(h3->ipv4), "10.1.0.3");  // IPv4 untouched
  EXPECT_EQ(plan.of(node(t, "H4"), 1)->prefix4, 16);
  EXPECT_EQ(plan.of(node(t, "H5"), 1)->prefix6, 48);

  EXPECT_EQ(owner(t, plan, "192.168.1.7"), "H2 1");
  EXPECT_EQ(owner(t, plan, "10.1.0.2"), "none");  // the replaced default
  EXPECT_EQ(owner(t, plan, "fd12::5"), "H3 1");
  EXPECT_EQ(owner(t, plan, "fd00:0:0:1::3"), "none");
  EXPECT_EQ(owner(t, plan, "10.9.9.9"), "H4 1");
  EXPECT_EQ(owner(t, plan, "fd99::1"), "H5 1");
  EXPECT_EQ(owner(t, plan, "172.16.0.6"), "H6 1");
  const std::vector<std::string> lines = plan.lines(t);
  EXPECT_EQ(lines[1], "H2 1 192.168.1.7/24 fd00:0:0:1::2/64");
  EXPECT_EQ(lines[4], "H5 1 10.1.0.5/16 fd99::1/48");
}

TEST(AddressPlan, OverridesMaySwapAddresses) {
  const Topology t = load_topology("fat-tree:2:4");
  const AddressPlan plan(t, AddressOptions{{"H1=10.1.0.2", "H2=10.1.0.1"}});
  EXPECT_EQ(owner(t, plan, "10.1.0.1"), "H2 1");
  EXPECT_EQ(owner(t, plan, "10.1.0.2"), "H1 1");
}

TEST(AddressPlan, EveryOverrideError) {
  const Topology t = load_topology("fat-tree:2:4");
  auto msg = [](const std::string& o, const std::string& problem) {
    return "address override '" + o + "': " + problem;
  };
  auto one = [&](const std::string& o) { return error_of(t, {o}); };
  EXPECT_EQ(one("H1"), msg("H1", "expected NODE[:PORT]=ADDRESS[/PREFIX]"));
  EXPECT_EQ(one("=10.0.0.1"), msg("=10.0.0.1", "no node before '='"));
  EXPECT_EQ(one("H99=10.0.0.1"), msg("H99=10.0.0.1", "no node named 'H99'"));
  EXPECT_EQ(one("H99:1=10.0.0.1"), msg("H99:1=10.0.0.1", "no node named 'H99'"));
  EXPECT_EQ(one("H1:x=10.0.0.1"), msg("H1:x=10.0.0.1", "no node named 'H1:x'"));
  EXPECT_EQ(one("L1=10.0.0.1"), msg("L1=10.0.0.1", "'L1' is a switch: only HCA ports have addresses"));
  EXPECT_EQ(one("H1:2=10.0.0.1"), msg("H1:2=10.0.0.1", "'H1' has no port 2 (its ports: 1)"));
  EXPECT_EQ(one("H1:0=10.0.0.1"), msg("H1:0=10.0.0.1", "'H1' has no port 0 (its ports: 1)"));
  EXPECT_EQ(one("H1:999=10.0.0.1"), msg("H1:999=10.0.0.1", "'H1' has no port 999"));
  EXPECT_EQ(one("H1="), msg("H1=", "no address after '='"));
  EXPECT_EQ(one("H1=/24"), msg("H1=/24", "no address after '='"));
  EXPECT_EQ(one("H1=10.0.0"), msg("H1=10.0.0", "'10.0.0' is not an IPv4 address (a.b.c.d) or an IPv6 address"));
  EXPECT_EQ(one("H1=10.0.0.256"), msg("H1=10.0.0.256", "'10.0.0.256' is not an IPv4 address (a.b.c.d) or an IPv6 address"));
  EXPECT_EQ(one("H1=fd00::zz"), msg("H1=fd00::zz", "'fd00::zz' is not an IPv6 address"));
  EXPECT_EQ(one("H1=10.0.0.1/33"), msg("H1=10.0.0.1/33", "prefix '/33' is not a length from 1 to 32"));
  EXPECT_EQ(one("H1=10.0.0.1/0"), msg("H1=10.0.0.1/0", "prefix '/0' is not a length from 1 to 32"));
  EXPECT_EQ(one("H1=10.0.0.1/"), msg("H1=10.0.0.1/", "prefix '/' is not a length from 1 to 32"));
  EXPECT_EQ(one("H1=10.0.0.1/2x"), msg("H1=10.0.0.1/2x", "prefix '/2x' is not a length from 1 to 32"));
  EXPECT_EQ(one("H1=fd00::1/129"), msg("H1=fd00::1/129", "prefix '/129' is not a length from 1 to 128"));
  EXPECT_EQ(one("H1=224.0.0.1"), msg("H1=224.0.0.1", "224.0.0.1 is a multicast address"));
  EXPECT_EQ(one("H1=127.0.0.1"), msg("H1=127.0.0.1", "127.0.0.1 is a loopback address"));
  EXPECT_EQ(one("H1=0.0.0.0"), msg("H1=0.0.0.0", "0.0.0.0 is the unspecified address"));
  EXPECT_EQ(one("H1=255.255.255.255"), msg("H1=255.255.255.255", "255.255.255.255 is the broadcast address"));
  EXPECT_EQ(one("H1=ff02::1"), msg("H1=ff02::1", "ff02::1 is a multicast address"));
  EXPECT_EQ(one("H1=::"), msg("H1=::", ":: is the unspecified address"));
  EXPECT_EQ(one("H1=::1"), msg("H1=::1", "::1 is the loopback address"));
  EXPECT_EQ(one("H1=::ffff:10.0.0.1"),
            msg("H1=::ffff:10.0.0.1", "::ffff:10.0.0.1 is an IPv4-mapped address (give the IPv4 address)"));
  // Twice for one port and family.
  EXPECT_EQ(error_of(t, {"H1=10.5.0.1", "H1:1=10.6.0.1"}),
            msg("H1:1=10.6.0.1", "H1[1] already has an IPv4 override ('H1=10.5.0.1')"));
  EXPECT_EQ(error_of(t, {"H1=10.5.0.1", "H1=fd00::7"}), "(no error)");  // one per family
  // One address on two ports: the override is named, whichever port is first.
  EXPECT_EQ(error_of(t, {"H1=10.1.0.2"}), msg("H1=10.1.0.2", "10.1.0.2 is also the address of H2[1]"));
  EXPECT_EQ(error_of(t, {"H3=10.1.0.1"}), msg("H3=10.1.0.1", "10.1.0.1 is also the address of H1[1]"));
  EXPECT_EQ(error_of(t, {"H1=fd00::9", "H2=fd00::9"}), msg("H2=fd00::9", "fd00::9 is also the address of H1[1]"));
  // The multicast route's port.
  EXPECT_EQ(error_of(t, {}, 3), "multicast route port 3: an HCA's ports are 1 and 2");
  EXPECT_EQ(error_of(t, {}, 0), "multicast route port 0: an HCA's ports are 1 and 2");
  EXPECT_EQ(error_of(t, {}, std::nullopt), "(no error)");
}

TEST(AddressPlan, NodeNamesWithColons) {
  Topology t;
  const uint32_t a = t.add_node(NodeDesc{.kind = NodeKind::Hca, .name = "rack:7", .node_guid = 0x10, .num_ports = 1});
  const AddressPlan plan(t, AddressOptions{{"rack:7=10.7.0.1", "rack:7:1=fd07::1"}});
  EXPECT_EQ(AddressPlan::ipv4_text(plan.of(a, 1)->ipv4), "10.7.0.1");
  EXPECT_EQ(AddressPlan::ipv6_text(plan.of(a, 1)->ipv6), "fd07::1");
}

TEST(AddressPlan, UnicastRoutes) {
  const Topology t = load_topology("fat-tree:2:4");
  const AddressPlan plan(t, AddressOptions{{"H2=192.168.1.1/24"}});
  const uint32_t h1 = node(t, "H1");
  const uint32_t h2 = node(t, "H2");
  EXPECT_EQ(route(plan, h1, "10.1.0.5"), 1);
  EXPECT_EQ(route(plan, h1, "10.1.200.7"), 1);       // in 10.1.0.0/16, owner or not
  EXPECT_EQ(route(plan, h1, "10.1.0.1"), 1);         // its own address
  EXPECT_EQ(route(plan, h1, "fd00:0:0:1::5"), 1);
  EXPECT_EQ(route(plan, h1, "::ffff:10.1.0.5"), 1);  // IPv4-mapped
  EXPECT_EQ(route(plan, h1, "10.2.0.1"), std::nullopt);
  EXPECT_EQ(route(plan, h1, "192.168.1.1"), std::nullopt);
  EXPECT_EQ(route(plan, h1, "fd00:0:0:2::1"), std::nullopt);
  // The override's prefix is H2's subnet now; 10.1.0.0/16 is not.
  EXPECT_EQ(route(plan, h2, "192.168.1.200"), 1);
  EXPECT_EQ(route(plan, h2, "192.168.2.1"), std::nullopt);
  EXPECT_EQ(route(plan, h2, "10.1.0.5"), std::nullopt);
  EXPECT_EQ(route(plan, h2, "fd00:0:0:1::5"), 1);
  // Switches, unknown nodes and other families have no route.
  EXPECT_EQ(route(plan, node(t, "L1"), "10.1.0.5"), std::nullopt);
  EXPECT_EQ(route(plan, 1000, "10.1.0.5"), std::nullopt);
  sockaddr_storage ib{};
  ib.ss_family = AF_IB;
  EXPECT_EQ(plan.route(h1, reinterpret_cast<const sockaddr*>(&ib)), std::nullopt);
  EXPECT_EQ(plan.route(h1, nullptr), std::nullopt);
}

TEST(AddressPlan, Ipv6PrefixesNotOnAByte) {
  const Topology t = load_topology("fat-tree:2:4");
  const AddressPlan plan(t, AddressOptions{{"H1=fd00:0:0:40::1/58"}});
  const uint32_t h1 = node(t, "H1");
  EXPECT_EQ(route(plan, h1, "fd00:0:0:7f::1"), 1);  // 0x40..0x7f share the top 2 bits of group 4
  EXPECT_EQ(route(plan, h1, "fd00:0:0:80::1"), std::nullopt);
  EXPECT_EQ(route(plan, h1, "fd00:0:0:3f::1"), std::nullopt);
}

TEST(AddressPlan, MulticastRoute) {
  const Topology t = load_topology("fat-tree:2:4");
  const uint32_t h1 = node(t, "H1");
  const AddressPlan by_default(t, {});
  EXPECT_EQ(route(by_default, h1, "239.1.2.3"), 1);
  EXPECT_EQ(route(by_default, h1, "224.0.0.1"), 1);
  EXPECT_EQ(route(by_default, h1, "ff12::1"), 1);
  EXPECT_EQ(route(by_default, h1, "ff0e::db8:1"), 1);
  EXPECT_EQ(route(by_default, node(t, "L1"), "239.1.2.3"), std::nullopt);
  const AddressPlan none(t, AddressOptions{{}, std::nullopt});
  EXPECT_EQ(route(none, h1, "239.1.2.3"), std::nullopt);
  EXPECT_EQ(route(none, h1, "ff12::1"), std::nullopt);
  EXPECT_EQ(route(none, h1, "10.1.0.2"), 1);  // unicast is unaffected
  const AddressPlan port2(t, AddressOptions{{}, 2});
  EXPECT_EQ(route(port2, h1, "239.1.2.3"), std::nullopt);  // these HCAs have no port 2
}

TEST(AddressPlan, TwoPortHcas) {
  const Topology t = two_port_hcas();
  const uint32_t a = node(t, "A");
  const uint32_t c = node(t, "C");
  const AddressPlan plan(t, AddressOptions{{}, 2});
  ASSERT_EQ(plan.ports().size(), 5u);
  EXPECT_EQ(plan.lines(t), (std::vector<std::string>{
                               "A 1 10.1.0.1/16 fd00:0:0:1::1/64",
                               "A 2 10.2.0.1/16 fd00:0:0:2::1/64",
                               "B 1 10.1.0.2/16 fd00:0:0:1::2/64",
                               "B 2 10.2.0.2/16 fd00:0:0:2::2/64",  // uncabled, addressed all the same
                               "C 1 10.1.0.3/16 fd00:0:0:1::3/64",
                           }));
  EXPECT_EQ(owner(t, plan, "10.2.0.2"), "B 2");
  EXPECT_EQ(owner(t, plan, "fd00:0:0:2::1"), "A 2");
  EXPECT_EQ(plan.of(c, 2), nullptr);
  EXPECT_EQ(route(plan, a, "10.2.0.2"), 2);
  EXPECT_EQ(route(plan, a, "10.1.0.3"), 1);
  EXPECT_EQ(route(plan, a, "fd00:0:0:2::2"), 2);
  EXPECT_EQ(route(plan, c, "10.2.0.1"), std::nullopt);  // C has no port in 10.2.0.0/16
  EXPECT_EQ(route(plan, a, "239.0.0.1"), 2);            // the multicast route's port
  EXPECT_EQ(route(plan, c, "239.0.0.1"), std::nullopt);  // C has no port 2

  // Both ports in one subnet: the lowest-numbered port wins.
  const AddressPlan same(t, AddressOptions{{"A:2=10.1.100.1"}});
  EXPECT_EQ(owner(t, same, "10.1.100.1"), "A 2");
  EXPECT_EQ(route(same, a, "10.1.0.3"), 1);
  EXPECT_EQ(route(same, a, "10.1.100.1"), 1);
  EXPECT_EQ(route(same, a, "10.2.0.2"), std::nullopt);  // port 2 left 10.2.0.0/16
  EXPECT_EQ(error_of(t, {"B:2=10.1.0.1"}), "address override 'B:2=10.1.0.1': 10.1.0.1 is also the address of A[1]");
  EXPECT_EQ(error_of(t, {"C:2=10.3.0.1"}), "address override 'C:2=10.3.0.1': 'C' has no port 2 (its ports: 1)");
  EXPECT_EQ(error_of(t, {"A:3=10.3.0.1"}), "address override 'A:3=10.3.0.1': 'A' has no port 3 (its ports: 1 and 2)");
}

}  // namespace
}  // namespace ibfab::topo
