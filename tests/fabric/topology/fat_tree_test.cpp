#include "fabric/topology/fat_tree.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

namespace ibfab::topo {
namespace {

const NodeDesc& node(const Topology& t, const std::string& name) {
  const auto i = t.find(name);
  EXPECT_TRUE(i) << name;
  return t.nodes()[i.value_or(0)];
}

// The port at the other end of NAME[port], as "NAME[port]", or "-".
std::string peer(const Topology& t, const std::string& name, unsigned port) {
  const auto i = t.find(name);
  if (!i) return "no node " + name;
  const auto p = t.peer({*i, static_cast<uint8_t>(port)});
  return p ? t.port_name(*p) : "-";
}

std::string at(char prefix, size_t n, size_t port) {
  return prefix + std::to_string(n) + "[" + std::to_string(port) + "]";
}

// Properties every generated topology has.
void expect_generated_defaults(const Topology& t) {
  std::set<uint64_t> guids;
  for (const NodeDesc& n : t.nodes()) {
    EXPECT_EQ(n.node_guid >> 40, 0x0002c9u) << n.name;
    EXPECT_TRUE(guids.insert(n.node_guid).second) << n.name;
    EXPECT_EQ(n.description, n.name);
    EXPECT_EQ(n.system_guid, n.node_guid);
    EXPECT_EQ(n.vendor_id, 0x02c9);
    if (n.kind == NodeKind::Switch) {
      EXPECT_EQ(n.device_id, 0xcf08);
      EXPECT_EQ(n.port_guids, std::vector<uint64_t>{n.node_guid});
    } else {
      EXPECT_EQ(n.device_id, 0x1017);
      EXPECT_EQ(n.num_ports, 1);
      EXPECT_EQ(n.port_guids.at(1), n.node_guid + 1);
      EXPECT_EQ(n.name[0], 'H');
    }
  }
  for (const LinkDesc& l : t.links()) {
    EXPECT_EQ(l.rate.str(), "4xEDR");
    EXPECT_EQ(l.propagation, sim::Time::ns(10));
  }
}

TEST(FatTree2, Counts36) {
  const Topology t = make_fat_tree_2(36);
  EXPECT_EQ(t.hca_count(), 648u);
  EXPECT_EQ(t.switch_count(), 54u);
  EXPECT_EQ(t.links().size(), 648u + 36u * 18u);
  for (const NodeDesc& n : t.nodes())
    if (n.kind == NodeKind::Switch) EXPECT_EQ(n.num_ports, 36);
  expect_generated_defaults(t);
}

TEST(FatTree2, WiringMatchesTheHeader) {
  const unsigned k = 8, h = k / 2;
  const Topology t = make_fat_tree_2(k);
  for (unsigned i = 1; i <= k; ++i) {
    for (unsigned p = 1; p <= h; ++p) EXPECT_EQ(peer(t, "L" + std::to_string(i), p), at('H', (i - 1) * h + p, 1));
    for (unsigned j = 1; j <= h; ++j) EXPECT_EQ(peer(t, "L" + std::to_string(i), h + j), at('S', j, i));
  }
  // Every switch port is cabled exactly once; every host hangs off a leaf.
  for (uint32_t n = 0; n < t.nodes().size(); ++n)
    for (unsigned p = 1; p <= t.nodes()[n].num_ports; ++p)
      EXPECT_TRUE(t.link_at({n, static_cast<uint8_t>(p)})) << t.nodes()[n].name << " " << p;
}

TEST(FatTree3, Counts36AndBuildTime) {
  const auto start = std::chrono::steady_clock::now();
  const Topology t = make_fat_tree_3(36);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(t.hca_count(), 11664u);
  EXPECT_EQ(t.switch_count(), 1620u);
  EXPECT_EQ(t.links().size(), 11664u + 2u * 648u * 18u);
  // Budget 0.3 s; the bound leaves room for a loaded CI machine.
  EXPECT_LT(seconds, 1.0);
  RecordProperty("build_seconds", std::to_string(seconds));
  size_t used_ports = 0;
  for (uint32_t n = 0; n < t.nodes().size(); ++n) {
    const NodeDesc& d = t.nodes()[n];
    if (d.kind == NodeKind::Switch) EXPECT_EQ(d.num_ports, 36);
    for (unsigned p = 1; p <= d.num_ports; ++p) used_ports += t.link_at({n, static_cast<uint8_t>(p)}) ? 1 : 0;
    if (d.kind == NodeKind::Hca) EXPECT_EQ(t.nodes()[t.peer({n, 1})->node].name[0], 'L');
  }
  EXPECT_EQ(used_ports, 2 * t.links().size());  // every port used once, all ports used
  expect_generated_defaults(t);
}

TEST(FatTree3, WiringMatchesTheHeader) {
  const unsigned k = 6, h = k / 2;
  const Topology t = make_fat_tree_3(k);
  EXPECT_EQ(t.hca_count(), k * k * k / 4);
  EXPECT_EQ(t.switch_count(), 5 * k * k / 4);
  for (unsigned pod = 0; pod < k; ++pod) {
    for (unsigned e = 0; e < h; ++e) {
      const std::string leaf = "L" + std::to_string(pod * h + e + 1);
      for (unsigned i = 1; i <= h; ++i) EXPECT_EQ(peer(t, leaf, i), at('H', (pod * h + e) * h + i, 1));
      for (unsigned a = 0; a < h; ++a) EXPECT_EQ(peer(t, leaf, h + a + 1), at('A', pod * h + a + 1, e + 1));
    }
    for (unsigned a = 0; a < h; ++a)
      for (unsigned j = 0; j < h; ++j)
        EXPECT_EQ(peer(t, "A" + std::to_string(pod * h + a + 1), h + j + 1), at('C', a * h + j + 1, pod + 1));
  }
  EXPECT_EQ(node(t, "C9").num_ports, k);
  EXPECT_FALSE(t.find("C10"));
}

TEST(FatTree, RejectsBadRadix) {
  for (unsigned k : {0u, 2u, 3u, 35u, 66u, 70u}) {
    EXPECT_THROW(make_fat_tree_2(k), TopologyError) << k;
    EXPECT_THROW(make_fat_tree_3(k), TopologyError) << k;
  }
  try {
    make_fat_tree_3(35);
    FAIL();
  } catch (const TopologyError& e) {
    EXPECT_STREQ(e.what(), "K must be even (got 35)");
  }
  EXPECT_NO_THROW(make_fat_tree_2(64));
  EXPECT_NO_THROW(make_fat_tree_3(4));
}

TEST(FatTree, Deterministic) {
  const Topology a = make_fat_tree_3(8), b = make_fat_tree_3(8);
  EXPECT_EQ(a.nodes(), b.nodes());
  EXPECT_EQ(a.links(), b.links());
}

}  // namespace
}  // namespace ibfab::topo
