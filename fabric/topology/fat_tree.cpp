#include "fabric/topology/fat_tree.h"

#include <string>
#include <vector>

#include "fabric/topology/topology_builder.h"

namespace ibfab::topo {
namespace {

void check_radix(unsigned k) {
  if (k < 4 || k > kMaxSwitchPorts)
    throw TopologyError("K must be between 4 and 64 (got " + std::to_string(k) + ")");
  if (k % 2 != 0) throw TopologyError("K must be even (got " + std::to_string(k) + ")");
}

std::string numbered(char prefix, size_t n) { return prefix + std::to_string(n); }

uint8_t port(unsigned p) { return static_cast<uint8_t>(p); }

}  // namespace

Topology make_fat_tree_2(unsigned k) {
  check_radix(k);
  const unsigned h = k / 2;
  const auto radix = port(k);
  TopologyBuilder b;
  b.reserve(size_t{k} * h + k + h);
  std::vector<uint32_t> leaf(k), spine(h);
  for (unsigned i = 0; i < k; ++i) leaf[i] = b.add_switch(numbered('L', i + 1), radix);
  for (unsigned j = 0; j < h; ++j) spine[j] = b.add_switch(numbered('S', j + 1), radix);
  for (unsigned i = 0; i < k; ++i)
    for (unsigned p = 1; p <= h; ++p)
      b.cable(leaf[i], port(p), b.add_hca(numbered('H', size_t{i} * h + p)), 1);
  for (unsigned i = 0; i < k; ++i)
    for (unsigned j = 0; j < h; ++j) b.cable(leaf[i], port(h + j + 1), spine[j], port(i + 1));
  return b.take();
}

Topology make_fat_tree_3(unsigned k) {
  check_radix(k);
  const unsigned h = k / 2;
  const auto radix = port(k);
  const size_t edges = size_t{k} * h;  // also the number of aggregation switches
  TopologyBuilder b;
  b.reserve(edges * h + 2 * edges + size_t{h} * h);
  std::vector<uint32_t> edge(edges), agg(edges), core(size_t{h} * h);
  for (size_t i = 0; i < edges; ++i) edge[i] = b.add_switch(numbered('L', i + 1), radix);
  for (size_t i = 0; i < edges; ++i) agg[i] = b.add_switch(numbered('A', i + 1), radix);
  for (size_t c = 0; c < core.size(); ++c) core[c] = b.add_switch(numbered('C', c + 1), radix);
  for (size_t i = 0; i < edges; ++i)
    for (unsigned p = 1; p <= h; ++p)
      b.cable(edge[i], port(p), b.add_hca(numbered('H', i * h + p)), 1);
  for (unsigned pod = 0; pod < k; ++pod) {
    for (unsigned e = 0; e < h; ++e)
      for (unsigned a = 0; a < h; ++a)
        b.cable(edge[pod * h + e], port(h + a + 1), agg[pod * h + a], port(e + 1));
    for (unsigned a = 0; a < h; ++a)
      for (unsigned j = 0; j < h; ++j)
        b.cable(agg[pod * h + a], port(h + j + 1), core[a * h + j], port(pod + 1));
  }
  return b.take();
}

}  // namespace ibfab::topo
