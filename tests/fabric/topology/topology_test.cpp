#include "fabric/topology/topology.h"

#include <gtest/gtest.h>

#include <string>

namespace ibfab::topo {
namespace {

using fabric::LinkRate;

const LinkRate kEdr = *LinkRate::parse("4xEDR");

NodeDesc hca(std::string name, uint64_t guid, uint8_t ports = 1) {
  NodeDesc n;
  n.kind = NodeKind::Hca;
  n.name = std::move(name);
  n.node_guid = guid;
  n.num_ports = ports;
  return n;
}

NodeDesc sw(std::string name, uint64_t guid, uint8_t ports = 8) {
  NodeDesc n = hca(std::move(name), guid, ports);
  n.kind = NodeKind::Switch;
  return n;
}

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "(no error)";
}

// A small fabric: S1 (8 ports), H1 (2 ports) on S1[1], H2 on S1[2].
Topology small() {
  Topology t;
  t.add_node(sw("S1", 0x100));
  t.add_node(hca("H1", 0x200, 2));
  t.add_node(hca("H2", 0x300));
  t.connect({0, 1}, {1, 1}, kEdr, sim::Time::ns(10));
  t.connect({0, 2}, {2, 1}, kEdr, sim::Time::ns(10));
  return t;
}

TEST(Topology, AddNodeFillsDefaults) {
  Topology t = small();
  const NodeDesc& s = t.nodes()[0];
  EXPECT_EQ(s.description, "S1");
  EXPECT_EQ(s.system_guid, 0x100u);
  EXPECT_EQ(s.port_guids, std::vector<uint64_t>{0x100});
  const NodeDesc& h = t.nodes()[1];
  EXPECT_EQ(h.port_guids, (std::vector<uint64_t>{0, 0x201, 0x202}));
  EXPECT_EQ(t.switch_count(), 1u);
  EXPECT_EQ(t.hca_count(), 2u);
}

TEST(Topology, FindLinkAtAndPeer) {
  Topology t = small();
  EXPECT_EQ(t.find("H2"), 2u);
  EXPECT_EQ(t.find("nope"), std::nullopt);
  EXPECT_EQ(t.link_at({0, 2}), 1u);
  EXPECT_EQ(t.link_at({0, 3}), std::nullopt);
  EXPECT_EQ(t.link_at({0, 9}), std::nullopt);   // beyond the last port
  EXPECT_EQ(t.link_at({7, 1}), std::nullopt);   // no such node
  ASSERT_TRUE(t.peer({2, 1}));
  EXPECT_EQ(*t.peer({2, 1}), (PortRef{0, 2}));
  EXPECT_EQ(*t.peer({0, 1}), (PortRef{1, 1}));
  EXPECT_EQ(t.peer({1, 2}), std::nullopt);
}

TEST(Topology, AddNodeRejections) {
  Topology t = small();
  EXPECT_EQ(error_of([&] { t.add_node(hca("H1", 0x999)); }), "duplicate node name 'H1'");
  EXPECT_EQ(error_of([&] { t.add_node(hca("H9", 0x100)); }),
            "duplicate GUID 0x0000000000000100: 'H9' and 'S1'");
  // H9's node GUID is H1's port 1 GUID.
  EXPECT_EQ(error_of([&] { t.add_node(hca("H9", 0x201)); }),
            "duplicate GUID 0x0000000000000201: 'H9' and 'H1'");
  EXPECT_EQ(error_of([&] { t.add_node(hca("H9", 0x900, 3)); }), "HCA 'H9' has 3 ports (at most 2)");
  EXPECT_EQ(error_of([&] { t.add_node(sw("S9", 0x900, 65)); }), "switch 'S9' has 65 ports (at most 64)");
  EXPECT_EQ(error_of([&] { t.add_node(sw("S9", 0x900, 0)); }), "switch 'S9' has 0 ports");
  EXPECT_EQ(error_of([&] { t.add_node(hca("H9", 0)); }), "node 'H9' has a zero node GUID");
  EXPECT_EQ(error_of([&] { t.add_node(hca("", 0x900)); }), "node name is empty");
  EXPECT_NE(error_of([&] { t.add_node(hca("a\"b", 0x900)); }).find("contains '\"'"), std::string::npos);
  NodeDesc long_desc = hca("H9", 0x900);
  long_desc.description.assign(65, 'x');
  EXPECT_EQ(error_of([&] { t.add_node(long_desc); }), "description of 'H9' is longer than 64 bytes");
  NodeDesc twin_ports = hca("H9", 0x900, 2);
  twin_ports.port_guids = {0, 0x901, 0x901};
  EXPECT_EQ(error_of([&] { t.add_node(twin_ports); }),
            "ports 1 and 2 of 'H9' share GUID 0x0000000000000901");
  NodeDesc bad_switch = sw("S9", 0x900);
  bad_switch.port_guids = {0x901};
  EXPECT_NE(error_of([&] { t.add_node(bad_switch); }).find("exactly one port GUID"), std::string::npos);
}

TEST(Topology, PortGuidMayEqualOwnNodeGuid) {
  Topology t;
  NodeDesc n = hca("H1", 0x500);
  n.port_guids = {0, 0x500};
  EXPECT_NO_THROW(t.add_node(n));
}

TEST(Topology, ConnectRejections) {
  Topology t = small();
  EXPECT_EQ(error_of([&] { t.connect({0, 0}, {1, 2}, kEdr, sim::Time::ns(10)); }),
            "port 0 of 'S1' is out of range (1..8)");
  EXPECT_EQ(error_of([&] { t.connect({0, 3}, {1, 3}, kEdr, sim::Time::ns(10)); }),
            "port 3 of 'H1' is out of range (1..2)");
  EXPECT_EQ(error_of([&] { t.connect({0, 1}, {1, 2}, kEdr, sim::Time::ns(10)); }),
            "port S1[1] is already connected to H1[1]");
  EXPECT_EQ(error_of([&] { t.connect({1, 2}, {2, 1}, kEdr, sim::Time::ns(10)); }),
            "port H2[1] is already connected to S1[2]");
  EXPECT_EQ(error_of([&] { t.connect({0, 5}, {0, 5}, kEdr, sim::Time::ns(10)); }),
            "cannot connect port S1[5] to itself");
  EXPECT_EQ(error_of([&] { t.connect({9, 1}, {0, 5}, kEdr, sim::Time::ns(10)); }),
            "connect: end a names node #9, which does not exist");
  // Two ports of one switch may be cabled together (a loopback cable).
  EXPECT_NO_THROW(t.connect({0, 5}, {0, 6}, kEdr, sim::Time::ns(10)));
}

TEST(Topology, ErrorsLeaveTopologyUnchanged) {
  Topology t = small();
  const auto nodes = t.nodes();
  const auto links = t.links();
  const auto same = [&] {
    EXPECT_EQ(t.nodes(), nodes);
    EXPECT_EQ(t.links(), links);
    EXPECT_EQ(t.find("H9"), std::nullopt);
    EXPECT_EQ(t.link_at({0, 5}), std::nullopt);
    EXPECT_EQ(t.link_at({1, 2}), std::nullopt);
    EXPECT_EQ(t.switch_count(), 1u);
  };
  EXPECT_THROW(t.add_node(hca("H1", 0x999)), TopologyError);
  same();
  EXPECT_THROW(t.add_node(hca("H9", 0x201)), TopologyError);  // GUID clash found after name check
  same();
  EXPECT_THROW(t.add_node(sw("S9", 0x900, 65)), TopologyError);
  same();
  EXPECT_THROW(t.connect({0, 5}, {1, 1}, kEdr, sim::Time::ns(10)), TopologyError);  // b taken
  same();
  EXPECT_THROW(t.connect({1, 2}, {0, 9}, kEdr, sim::Time::ns(10)), TopologyError);
  same();
  // The GUIDs and name of a rejected node stay free.
  EXPECT_NO_THROW(t.add_node(hca("H9", 0x901)));
}

}  // namespace
}  // namespace ibfab::topo
