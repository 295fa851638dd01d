#include "fabric/topology/switch_grid.h"

#include <gtest/gtest.h>

#include <string>

namespace ibfab::topo {
namespace {

std::string peer(const Topology& t, const std::string& name, unsigned port) {
  const auto i = t.find(name);
  if (!i) return "no node " + name;
  const auto p = t.peer({*i, static_cast<uint8_t>(port)});
  return p ? t.port_name(*p) : "-";
}

TEST(Ring, CountsAndWiring) {
  const Topology t = make_ring(5, 2);
  EXPECT_EQ(t.switch_count(), 5u);
  EXPECT_EQ(t.hca_count(), 10u);
  EXPECT_EQ(t.links().size(), 10u + 5u);
  EXPECT_EQ(t.nodes()[0].num_ports, 36);
  EXPECT_EQ(peer(t, "S1", 1), "H1[1]");
  EXPECT_EQ(peer(t, "S3", 2), "H6[1]");
  EXPECT_EQ(peer(t, "S1", 3), "S2[4]");
  EXPECT_EQ(peer(t, "S5", 3), "S1[4]");  // wraps around
  EXPECT_EQ(peer(t, "S2", 5), "-");
}

TEST(Line, CountsAndWiring) {
  const Topology t = make_line(4, 1);
  EXPECT_EQ(t.switch_count(), 4u);
  EXPECT_EQ(t.hca_count(), 4u);
  EXPECT_EQ(t.links().size(), 4u + 3u);
  EXPECT_EQ(peer(t, "S4", 2), "-");  // no wrap
  EXPECT_EQ(peer(t, "S4", 3), "S3[2]");
  EXPECT_EQ(make_line(1, 3).links().size(), 3u);
  EXPECT_EQ(make_line(3, 0).hca_count(), 0u);
}

TEST(Torus, CountsAndWiring) {
  const Topology t = make_torus(3, 4, 1);
  EXPECT_EQ(t.switch_count(), 12u);
  EXPECT_EQ(t.hca_count(), 12u);
  EXPECT_EQ(t.links().size(), 12u + 24u);
  // (x, y) = (2, 0) is S3: x+ wraps to S1, y+ goes to S6.
  EXPECT_EQ(peer(t, "S3", 2), "S1[3]");
  EXPECT_EQ(peer(t, "S3", 4), "S6[5]");
  // (0, 3) is S10: y+ wraps to S1.
  EXPECT_EQ(peer(t, "S10", 4), "S1[5]");
  for (uint32_t n = 0; n < t.switch_count(); ++n)
    for (uint8_t p = 1; p <= 5; ++p) EXPECT_TRUE(t.link_at({n, p}));
}

TEST(SwitchGrid, RadixGrowsWithHosts) {
  EXPECT_EQ(make_ring(3, 34).nodes()[0].num_ports, 36);
  EXPECT_EQ(make_ring(3, 40).nodes()[0].num_ports, 42);
  EXPECT_EQ(make_torus(3, 3, 60).nodes()[0].num_ports, 64);
  EXPECT_THROW(make_torus(3, 3, 61), TopologyError);
  EXPECT_THROW(make_ring(3, 63), TopologyError);
}

TEST(SwitchGrid, RejectsDegenerateAndHugeSizes) {
  EXPECT_THROW(make_ring(2, 1), TopologyError);
  EXPECT_THROW(make_line(0, 1), TopologyError);
  EXPECT_THROW(make_torus(2, 5, 1), TopologyError);
  EXPECT_THROW(make_ring(kMaxGridNodes, 1), TopologyError);
  EXPECT_THROW(make_torus(UINT64_MAX, UINT64_MAX, 1), TopologyError);
  EXPECT_THROW(make_line(UINT64_MAX, UINT64_MAX), TopologyError);
}

TEST(SwitchGrid, HostsInSwitchOrder) {
  const Topology t = make_torus(3, 3, 2);
  for (unsigned s = 1; s <= 9; ++s)
    for (unsigned p = 1; p <= 2; ++p)
      EXPECT_EQ(peer(t, "S" + std::to_string(s), p), "H" + std::to_string((s - 1) * 2 + p) + "[1]");
}

}  // namespace
}  // namespace ibfab::topo
