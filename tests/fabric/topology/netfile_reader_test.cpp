#include "fabric/topology/netfile_reader.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/fabric/topology/test_data.h"

namespace ibfab::topo {
namespace {

Topology read(const std::string& text) {
  std::istringstream in(text);
  return read_netfile(in, "t.net");
}

std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string peer(const Topology& t, const std::string& name, unsigned port) {
  const auto p = t.peer({t.find(name).value(), static_cast<uint8_t>(port)});
  return p ? t.port_name(*p) : "-";
}

const LinkDesc& link(const Topology& t, const std::string& name, unsigned port) {
  return t.links()[t.link_at({t.find(name).value(), static_cast<uint8_t>(port)}).value()];
}

TEST(NetfileReader, IbnetdiscoverSnapshot) {
  const Topology t = read(testdata::kSnapshot);
  ASSERT_EQ(t.nodes().size(), 6u);
  EXPECT_EQ(t.switch_count(), 2u);
  EXPECT_EQ(t.hca_count(), 4u);
  EXPECT_EQ(t.links().size(), 7u);  // each declared from both ends, kept once

  const NodeDesc& s1 = t.nodes()[0];
  EXPECT_EQ(s1.kind, NodeKind::Switch);
  EXPECT_EQ(s1.name, "S-248a070300f8e1a0");
  EXPECT_EQ(s1.description, "MF0;leaf1:MSB7700/U1");
  EXPECT_EQ(s1.num_ports, 36);
  EXPECT_EQ(s1.node_guid, 0x248a070300f8e1a0u);
  EXPECT_EQ(s1.port_guids, std::vector<uint64_t>{0x248a070300f8e1a0u});
  EXPECT_EQ(s1.device_id, 0xcf08);

  const NodeDesc& h4 = t.nodes()[5];
  EXPECT_EQ(h4.name, "H-0002c90300a1b2f0");
  EXPECT_EQ(h4.description, "node04 mlx4_0");
  EXPECT_EQ(h4.num_ports, 2);
  EXPECT_EQ(h4.node_guid, 0x2c90300a1b2f0u);
  EXPECT_EQ(h4.system_guid, 0x2c90300a1b2f3u);
  EXPECT_EQ(h4.port_guids, (std::vector<uint64_t>{0, 0x2c90300a1b2f1u, 0x2c90300a1b2f2u}));
  EXPECT_EQ(h4.device_id, 0x1003);

  const NodeDesc& h3 = t.nodes()[4];
  EXPECT_EQ(h3.vendor_id, 0x15b3);
  EXPECT_EQ(h3.port_guids.at(1), h3.node_guid);

  EXPECT_EQ(peer(t, "S-248a070300f8e1a0", 36), "S-248a070300f8e1c0[36]");
  EXPECT_EQ(peer(t, "H-0002c90300a1b2f0", 2), "S-248a070300f8e1c0[2]");
  EXPECT_EQ(link(t, "H-0002c90300a1b2f0", 2).rate.str(), "4xQDR");
  EXPECT_EQ(link(t, "H-98039b0300867bba", 1).rate.str(), "4xHDR");
  EXPECT_EQ(link(t, "S-248a070300f8e1a0", 35).rate.str(), "4xEDR");
  EXPECT_EQ(link(t, "S-248a070300f8e1a0", 35).propagation, sim::Time::ns(10));
}

TEST(NetfileReader, IbsimShortForm) {
  const Topology t = read(testdata::kShortForm);
  ASSERT_EQ(t.nodes().size(), 4u);
  EXPECT_EQ(t.links().size(), 5u);
  EXPECT_EQ(peer(t, "S1", 4), "S2[4]");  // declared from S1 only
  EXPECT_EQ(peer(t, "S2", 1), "H2[1]");  // peer port defaults to 1
  EXPECT_EQ(peer(t, "H1", 2), "S2[2]");
  EXPECT_EQ(link(t, "S1", 1).rate.str(), "4xEDR");  // default rate
  // GUIDs come from the allocator, in file order per kind.
  EXPECT_EQ(t.nodes()[0].node_guid, 0x0002c90100000001u);
  EXPECT_EQ(t.nodes()[1].node_guid, 0x0002c90100000002u);
  EXPECT_EQ(t.nodes()[2].node_guid, 0x0002c90200000001u);
  EXPECT_EQ(t.nodes()[3].node_guid, 0x0002c90200000004u);  // H1 took 3 GUIDs
  EXPECT_EQ(t.nodes()[2].port_guids.at(2), 0x0002c90200000003u);
  EXPECT_EQ(t.nodes()[3].description, "H2");
}

TEST(NetfileReader, GuidLinesSetTheNextGuidLikeIbsim) {
  const Topology t = read(
      "switchguid=0x100\ncaguid=200\ndevid=0x1234\n"
      "Switch 4 \"A\"\nSwitch 4 \"B\"\nHca 2 \"X\"\nCa 1 \"Y\" # plain text desc lid 4\n");
  EXPECT_EQ(t.nodes()[0].node_guid, 0x100u);
  EXPECT_EQ(t.nodes()[1].node_guid, 0x101u);
  EXPECT_EQ(t.nodes()[2].node_guid, 200u);
  EXPECT_EQ(t.nodes()[3].node_guid, 203u);
  EXPECT_EQ(t.nodes()[3].description, "plain text desc");
  for (const NodeDesc& n : t.nodes()) EXPECT_EQ(n.device_id, 0x1234);  // devid persists
}

TEST(NetfileReader, ToleratesGroupingAndCrLf) {
  const Topology t = read(
      "Chassis 2 (guid 0x1)\r\nHostname: x\r\n\r\n  Switch 4 \"A\" # \"d\"\r\n"
      "[1][ext 7]\t\"B\"[1]\t# 12xNDR\r\n\r\nHca 1 \"B\"\r\n");
  EXPECT_EQ(t.links().size(), 1u);
  EXPECT_EQ(t.links()[0].rate.str(), "12xNDR");
  EXPECT_EQ(read("Switch 2 \"A\"\n[1] \"B\"[1] # \"a 4xSDR desc\" lid 1 FDR10\n\nCa 1 \"B\"\n")
                .links()[0].rate.str(),
            "4xEDR");  // rates inside quotes are descriptions; bare FDR10 has no width
  EXPECT_EQ(read("Switch 2 \"A\"\n[1] \"B\"[1] # lid 1 4xFDR10\n\nCa 1 \"B\"\n").links()[0].rate.str(),
            "4xQDR");
}

// Every error names the file and the line it was found on.
TEST(NetfileReader, Errors) {
  const std::string sw = "Switch 4 \"S1\"\n";  // line 1 of most cases below
  EXPECT_EQ(error_of("\nRouter 2 \"R1\"\n"), "t.net:2: unknown node type 'Router'");
  EXPECT_EQ(error_of("rtguid=0x5\nRt 2 \"R1\"\n"), "t.net:2: routers (Rt) are not supported");
  EXPECT_EQ(error_of(sw + "[5] \"H1\"[1]\n"), "t.net:2: port 5 of 'S1' is out of range (1..4)");
  EXPECT_EQ(error_of(sw + "[0] \"H1\"[1]\n"), "t.net:2: port 0 of 'S1' is out of range (1..4)");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[2]\n\nHca 1 \"H1\"\n"),
            "t.net:2: port 2 of 'H1' is out of range (1..1)");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[1]\n[2] \"H9\"[1]\n\nHca 1 \"H1\"\n"),
            "t.net:3: link to undeclared node 'H9'");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[1]\n[1] \"H2\"[1]\n"),
            "t.net:3: port 1 of 'S1' is declared twice (first at line 2)");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[1]\n[2] \"H1\"[1]\n\nHca 1 \"H1\"\n"),
            "t.net:3: port H1[1] is already connected to S1[1]");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[1]\n\nHca 2 \"H1\"\n[1] \"S1\"[2]\n"),
            "t.net:5: asymmetric link: line 2 cables S1[1] to H1[1], line 5 cables H1[1] to S1[2]");
  EXPECT_EQ(error_of(sw + "[1] \"S1\"[1]\n"), "t.net:2: port S1[1] is cabled to itself");
  EXPECT_EQ(error_of("Switch \"S1\"\n"), "t.net:1: missing port count after node type");
  EXPECT_EQ(error_of("Switch 4 S1\n"), "t.net:1: expected a quoted node name");
  EXPECT_EQ(error_of("Switch 4 \"S1\n"), "t.net:1: unterminated quote in node name");
  EXPECT_EQ(error_of("Switch 4 \"S1\" # \"desc\n"), "t.net:1: unterminated quote in node description");
  EXPECT_EQ(error_of("Switch 4 \"S1\" junk\n"), "t.net:1: unexpected text 'junk' after node name");
  EXPECT_EQ(error_of(sw + "[x] \"H1\"[1]\n"), "t.net:2: bad port number, expected [N]");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[\n"), "t.net:2: bad peer port number, expected [N]");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[0]\n"), "t.net:2: peer port 0 cannot be cabled");
  EXPECT_EQ(error_of(sw + "[1] H1[1]\n"), "t.net:2: expected a quoted peer node name");
  EXPECT_EQ(error_of(sw + "[1](zz) \"H1\"[1]\n"), "t.net:2: bad GUID in parentheses");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[1] 7\n"), "t.net:2: unexpected text '7'");
  EXPECT_EQ(error_of(sw + "[1] \"H1\"[1] # 4xXDR\n"), "t.net:2: bad link rate '4xXDR'");
  EXPECT_EQ(error_of("switchguid=0xZZ\n"), "t.net:1: bad number after 'switchguid='");
  EXPECT_EQ(error_of("devid=0x10000\n"), "t.net:1: devid out of range (at most 0xffff)");
  EXPECT_EQ(error_of("caguid=99999999999999999999\n"), "t.net:1: bad number after 'caguid='");
  EXPECT_EQ(error_of("colour=3\n"), "t.net:1: unknown setting 'colour'");
  EXPECT_EQ(error_of("include \"x.net\"\n"), "t.net:1: unsupported ibsim directive 'include'");
  EXPECT_EQ(error_of("hello world\n"), "t.net:1: unrecognised line 'hello world'");
  EXPECT_EQ(error_of("[1] \"H1\"[1]\n"), "t.net:1: port line outside a node block");
  EXPECT_EQ(error_of(sw + "\n[1] \"H1\"[1]\n"), "t.net:3: port line outside a node block");
  EXPECT_EQ(error_of(sw + "Switch 4 \"S1\"\n"), "t.net:2: duplicate node name 'S1'");
  EXPECT_EQ(error_of("caguid=0x10\nCa 1 \"A\"\ncaguid=0x10\nCa 1 \"B\"\n"),
            "t.net:4: duplicate GUID 0x0000000000000010: 'B' and 'A'");
  EXPECT_EQ(error_of("caguid=0x10\nCa 2 \"A\"\nCa 1 \"B\"\n[1](0x11) \"A\"[1]\n"),
            "t.net:3: duplicate GUID 0x0000000000000011: 'B' and 'A'");
  EXPECT_EQ(error_of("Switch 0 \"S1\"\n"), "t.net:1: switch 'S1' has 0 ports");
  EXPECT_EQ(error_of("Ca 0 \"H1\"\n"), "t.net:1: HCA 'H1' has 0 ports");
  EXPECT_EQ(error_of("Ca 3 \"H1\"\n"), "t.net:1: HCA 'H1' has too many ports (at most 2)");
  EXPECT_EQ(error_of("Switch 65 \"S1\"\n"), "t.net:1: switch 'S1' has too many ports (at most 64)");
  EXPECT_EQ(error_of("Switch 99999999999999999999 \"S1\"\n"),
            "t.net:1: switch 'S1' has too many ports (at most 64)");
  EXPECT_EQ(error_of("switchguid=0\nSwitch 2 \"S1\"\n"), "t.net:2: node 'S1' has a zero node GUID");
}

TEST(NetfileReader, AsymmetricLinkReportedAtTheLaterLine) {
  // H1[1] claims S1[3]; S1[3] is declared (later) towards H2[1].
  EXPECT_EQ(error_of("Hca 1 \"H1\"\n[1] \"S1\"[3]\n\nSwitch 4 \"S1\"\n[3] \"H2\"[1]\n\nHca 1 \"H2\"\n"),
            "t.net:5: asymmetric link: line 2 cables H1[1] to S1[3], line 5 cables S1[3] to H2[1]");
}

TEST(NetfileReader, InputWithoutNodesIsRefused) {
  EXPECT_EQ(error_of(""), "t.net: no nodes (a net file declares at least one Switch or Ca)");
  EXPECT_EQ(error_of("# nothing\n\n"), "t.net: no nodes (a net file declares at least one Switch or Ca)");
}

}  // namespace
}  // namespace ibfab::topo
