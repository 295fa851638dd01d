#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fabric/topology/fat_tree.h"
#include "fabric/topology/netfile_reader.h"
#include "fabric/topology/netfile_writer.h"
#include "fabric/topology/switch_grid.h"
#include "tests/fabric/topology/test_data.h"

namespace ibfab::topo {
namespace {

std::string write(const Topology& t) {
  std::ostringstream out;
  write_netfile(out, t);
  return out.str();
}

Topology read(const std::string& text) {
  std::istringstream in(text);
  return read_netfile(in, "round.net");
}

// Links as an order-free set of (end, end, rate) with the ends sorted.
std::vector<std::tuple<uint32_t, uint8_t, uint32_t, uint8_t, std::string, int64_t>> link_set(const Topology& t) {
  std::vector<std::tuple<uint32_t, uint8_t, uint32_t, uint8_t, std::string, int64_t>> v;
  for (const LinkDesc& l : t.links()) {
    PortRef a = l.a, b = l.b;
    if (std::tie(b.node, b.port) < std::tie(a.node, a.port)) std::swap(a, b);
    v.emplace_back(a.node, a.port, b.node, b.port, l.rate.str(), l.propagation.ps());
  }
  std::sort(v.begin(), v.end());
  return v;
}

void expect_round_trip(const Topology& t) {
  const std::string text = write(t);
  const Topology back = read(text);
  EXPECT_EQ(back.nodes(), t.nodes());  // same order, names, GUIDs, ids, descriptions
  EXPECT_EQ(link_set(back), link_set(t));
  EXPECT_EQ(write(back), text);  // and the text is a fixed point
}

TEST(NetfileRoundTrip, Generators) {
  expect_round_trip(make_fat_tree_2(4));
  expect_round_trip(make_fat_tree_3(4));
  expect_round_trip(make_ring(5, 2));
  expect_round_trip(make_line(1, 0));
  expect_round_trip(make_torus(3, 3, 1));
}

TEST(NetfileRoundTrip, Snapshot) {
  const Topology t = read(testdata::kSnapshot);
  expect_round_trip(t);
}

TEST(NetfileRoundTrip, ShortForm) { expect_round_trip(read(testdata::kShortForm)); }

TEST(NetfileRoundTrip, MixedRatesAndBackToBackHcas) {
  Topology t;
  NodeDesc a;
  a.kind = NodeKind::Hca;
  a.name = "A";
  a.description = "a host";
  a.node_guid = 0x10;
  a.num_ports = 2;
  NodeDesc b = a;
  b.name = "B";
  b.node_guid = 0x20;
  b.port_guids = {0, 0x20, 0x2f};
  t.add_node(a);
  t.add_node(b);
  t.connect({0, 2}, {1, 1}, *fabric::LinkRate::parse("1xSDR"), sim::Time::ns(10));
  t.connect({1, 2}, {0, 1}, *fabric::LinkRate::parse("12xNDR"), sim::Time::ns(10));
  expect_round_trip(t);
}

TEST(NetfileWriter, IbnetdiscoverLayout) {
  const std::string text = write(make_fat_tree_2(4));
  // A switch block and an HCA block as ibnetdiscover prints them.
  EXPECT_NE(text.find("\nvendid=0x2c9\ndevid=0xcf08\nsysimgguid=0x2c90100000001\n"
                      "switchguid=0x2c90100000001(2c90100000001)\n"
                      "Switch\t4 \"L1\"\t\t# \"L1\" enhanced port 0 lid 0 lmc 0\n"
                      "[1]\t\"H1\"[1](2c90200000002) \t\t# \"H1\" lid 0 4xEDR\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[3]\t\"S1\"[1]\t\t# \"S1\" lid 0 4xEDR\n"), std::string::npos);
  EXPECT_NE(text.find("caguid=0x2c90200000001\nCa\t1 \"H1\"\t\t# \"H1\"\n"
                      "[1](2c90200000002) \t\"L1\"[1]\t\t# lid 0 lmc 0 \"L1\" lid 0 4xEDR\n"),
            std::string::npos);
  // No port line holds an '=', which ibsim would take for a port option.
  std::istringstream lines(text);
  size_t port_lines = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '[') continue;
    ++port_lines;
    EXPECT_EQ(line.find('='), std::string::npos) << line;
  }
  EXPECT_EQ(port_lines, 2 * 16u);
}

}  // namespace
}  // namespace ibfab::topo
