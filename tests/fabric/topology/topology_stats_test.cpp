#include "fabric/topology/topology_stats.h"

#include <gtest/gtest.h>

#include <chrono>

#include "fabric/topology/fat_tree.h"
#include "fabric/topology/switch_grid.h"
#include "fabric/topology/topology_builder.h"
#include "tests/sanitized_build.h"

namespace ibfab::topo {
namespace {

TEST(TopologyStats, FatTree2) {
  const TopologyStats s = compute_stats(make_fat_tree_2(36));
  EXPECT_EQ(s.hcas, 648u);
  EXPECT_EQ(s.switches, 54u);
  EXPECT_EQ(s.links, 1296u);
  EXPECT_EQ(s.switch_links, 648u);
  EXPECT_EQ(s.host_links, 648u);
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(s.diameter, 4u);
}

TEST(TopologyStats, FatTree3WithinBudget) {
  const Topology t = make_fat_tree_3(36);
  const auto start = std::chrono::steady_clock::now();
  const TopologyStats s = compute_stats(t);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(s.diameter, 6u);
  EXPECT_EQ(s.switch_links, 2u * 648u * 18u);
  EXPECT_EQ(s.host_links, 11664u);
  // Budget 0.5 s; the bound leaves room for a loaded CI machine (not for a
  // sanitized build, several times slower: IBFAB_SANITIZED).
#ifndef IBFAB_SANITIZED
  EXPECT_LT(seconds, 1.5);
#endif
  RecordProperty("stats_seconds", std::to_string(seconds));
}

TEST(TopologyStats, SmallFatTree3) { EXPECT_EQ(compute_stats(make_fat_tree_3(4)).diameter, 6u); }

TEST(TopologyStats, RingsLinesTori) {
  EXPECT_EQ(compute_stats(make_ring(8, 1)).diameter, 4u + 2u);
  EXPECT_EQ(compute_stats(make_ring(7, 1)).diameter, 3u + 2u);
  EXPECT_EQ(compute_stats(make_line(5, 1)).diameter, 4u + 2u);
  EXPECT_EQ(compute_stats(make_line(1, 3)).diameter, 2u);
  EXPECT_EQ(compute_stats(make_line(1, 1)).diameter, 0u);  // one host: no pair
  EXPECT_EQ(compute_stats(make_torus(4, 4, 1)).diameter, 4u + 2u);
  EXPECT_EQ(compute_stats(make_torus(5, 3, 1)).diameter, 3u + 2u);
  // Hosts only on the ends of a line: switches without hosts still count as transit.
  const TopologyStats none = compute_stats(make_line(4, 0));
  EXPECT_EQ(none.diameter, 0u);
  EXPECT_TRUE(none.connected);
}

TEST(TopologyStats, Disconnected) {
  TopologyBuilder b;
  const uint32_t s1 = b.add_switch("S1", 4), s2 = b.add_switch("S2", 4);
  b.cable(s1, 1, b.add_hca("H1"), 1);
  b.cable(s2, 1, b.add_hca("H2"), 1);
  const TopologyStats s = compute_stats(b.take());
  EXPECT_FALSE(s.connected);
  EXPECT_EQ(s.diameter, 0u);
  EXPECT_EQ(s.links, 2u);

  TopologyBuilder lone;
  const uint32_t sw = lone.add_switch("S1", 4);
  lone.cable(sw, 1, lone.add_hca("H1"), 1);
  lone.cable(sw, 2, lone.add_hca("H2"), 1);
  lone.add_switch("S2", 4);  // linked to nothing
  const TopologyStats t = compute_stats(lone.take());
  EXPECT_FALSE(t.connected);
  EXPECT_EQ(t.diameter, 0u);
}

TEST(TopologyStats, BackToBackHcasAndDualHomedHosts) {
  TopologyBuilder pair;
  pair.cable(pair.add_hca("H1"), 1, pair.add_hca("H2"), 1);
  const TopologyStats p = compute_stats(pair.take());
  EXPECT_TRUE(p.connected);
  EXPECT_EQ(p.diameter, 1u);
  EXPECT_EQ(p.host_links, 1u);

  // H1 on S1 and S3 (2 ports), H2 on S3, chain S1-S2-S3: H1 reaches H2 in 2 hops.
  TopologyBuilder b;
  const uint32_t s1 = b.add_switch("S1", 4), s2 = b.add_switch("S2", 4), s3 = b.add_switch("S3", 4);
  b.cable(s1, 2, s2, 1);
  b.cable(s2, 2, s3, 2);
  const uint32_t h1 = b.add_hca("H1", 2);
  b.cable(s1, 1, h1, 1);
  b.cable(s3, 1, h1, 2);
  b.cable(s3, 3, b.add_hca("H2"), 1);
  const TopologyStats d = compute_stats(b.take());
  EXPECT_TRUE(d.connected);
  EXPECT_EQ(d.diameter, 2u);

  TopologyBuilder stray;  // an unattached HCA next to a working fabric
  const uint32_t s = stray.add_switch("S1", 4);
  stray.cable(s, 1, stray.add_hca("H1"), 1);
  stray.cable(s, 2, stray.add_hca("H2"), 1);
  stray.add_hca("H3");
  EXPECT_FALSE(compute_stats(stray.take()).connected);
}

TEST(TopologyStats, Empty) {
  const TopologyStats s = compute_stats(Topology{});
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(s.diameter, 0u);
}

}  // namespace
}  // namespace ibfab::topo
