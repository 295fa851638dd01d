#include "fabric/topology/topology_spec.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/fabric/topology/test_data.h"

namespace ibfab::topo {
namespace {

std::string error_of(const std::string& spec) {
  try {
    load_topology(spec);
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TopologySpec, Generators) {
  Topology t = load_topology("fat-tree:2:36");
  EXPECT_EQ(t.hca_count(), 648u);
  EXPECT_EQ(t.switch_count(), 54u);
  t = load_topology("fat-tree:3:4");
  EXPECT_EQ(t.hca_count(), 16u);
  EXPECT_EQ(t.switch_count(), 20u);
  EXPECT_EQ(load_topology("ring:4").hca_count(), 4u);
  EXPECT_EQ(load_topology("ring:4:3").hca_count(), 12u);
  EXPECT_EQ(load_topology("line:2:0").hca_count(), 0u);
  t = load_topology("torus:3x4:2");
  EXPECT_EQ(t.switch_count(), 12u);
  EXPECT_EQ(t.hca_count(), 24u);
}

TEST(TopologySpec, MalformedSpecs) {
  EXPECT_EQ(error_of("fat-tree:3:35"), "spec 'fat-tree:3:35': K must be even (got 35)");
  EXPECT_EQ(error_of("fat-tree:4:8"), "spec 'fat-tree:4:8': levels must be 2 or 3 (got 4)");
  EXPECT_EQ(error_of("fat-tree:2:70"), "spec 'fat-tree:2:70': K must be between 4 and 64 (got 70)");
  EXPECT_EQ(error_of("fat-tree:2:2"), "spec 'fat-tree:2:2': K must be between 4 and 64 (got 2)");
  EXPECT_EQ(error_of("fat-tree:2"),
            "spec 'fat-tree:2': expected fat-tree:L:K (L = 2 or 3 levels, K = switch radix)");
  EXPECT_EQ(error_of("fat-tree:2:36:1"),
            "spec 'fat-tree:2:36:1': expected fat-tree:L:K (L = 2 or 3 levels, K = switch radix)");
  EXPECT_EQ(error_of("ring:0"), "spec 'ring:0': a ring needs at least 3 switches (got 0)");
  EXPECT_EQ(error_of("ring"), "spec 'ring': expected ring:N[:H]");
  EXPECT_EQ(error_of("ring:4x"), "spec 'ring:4x': '4x' is not a number");
  EXPECT_EQ(error_of("ring:-4"), "spec 'ring:-4': '-4' is not a number");
  EXPECT_EQ(error_of("ring:4:"), "spec 'ring:4:': missing number");
  EXPECT_EQ(error_of("line:3:1:9"), "spec 'line:3:1:9': expected line:N[:H]");
  EXPECT_EQ(error_of("line:0"), "spec 'line:0': a line needs at least 1 switch (got 0)");
  EXPECT_EQ(error_of("torus:3"), "spec 'torus:3': expected torus:XxY[:H], got no 'x' in '3'");
  EXPECT_EQ(error_of("torus:3x"), "spec 'torus:3x': missing number");
  EXPECT_EQ(error_of("torus:2x3"),
            "spec 'torus:2x3': a torus needs at least 3 switches in each dimension (got 2x3)");
  EXPECT_EQ(error_of("torus:3x3:70"), "spec 'torus:3x3:70': too many hosts per switch (70)");
  EXPECT_EQ(error_of("ring:99999999999999999999"), "spec 'ring:99999999999999999999': '99999999999999999999' is too large");
  EXPECT_EQ(error_of("ring:999999999"), "spec 'ring:999999999': too many nodes (at most 1000000)");
  EXPECT_EQ(error_of("torus:999999999x999999999"),
            "spec 'torus:999999999x999999999': too many nodes (at most 1000000)");
  EXPECT_EQ(error_of("fat-tree:3:18446744073709551616"),
            "spec 'fat-tree:3:18446744073709551616': '18446744073709551616' is too large");
  EXPECT_EQ(error_of("mesh:4"),
            "spec 'mesh:4': unknown generator 'mesh' (expected fat-tree:L:K, ring:N[:H], "
            "line:N[:H], torus:XxY[:H], or a net file path)");
  EXPECT_EQ(error_of(""), "spec '': empty topology spec");
}

TEST(TopologySpec, Files) {
  EXPECT_EQ(error_of("/nonexistent/dir/x.net"), "/nonexistent/dir/x.net: cannot open: No such file or directory");
  const std::string path = testing::TempDir() + "ibfab_topology_spec_test.net";
  {
    std::ofstream out(path);
    out << testdata::kSnapshot;
  }
  const Topology t = load_topology(path);
  EXPECT_EQ(t.hca_count(), 4u);
  EXPECT_EQ(t.links().size(), 7u);
  {
    std::ofstream out(path);
    out << "Switch 4 \"S1\"\n[9] \"H1\"[1]\n";
  }
  EXPECT_EQ(error_of(path), path + ":2: port 9 of 'S1' is out of range (1..4)");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ibfab::topo
