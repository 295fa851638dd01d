#pragma once
// Fat-tree generators. Every switch has K ports (the radix), every host one
// HCA port; links run at 4xEDR with 10 ns propagation. Node order: leaves,
// then spines / aggregations, then cores, then hosts H1.. in leaf order.
//
// fat-tree:2:K (K even, 4..64): K^2/2 hosts, 3K/2 switches.
//   Leaves L1..LK, spines S1..S{K/2}.
//   Leaf Li port p (1..K/2)     <-> host H{(i-1)K/2 + p} port 1
//   Leaf Li port K/2 + j        <-> spine Sj port i          (j = 1..K/2)
//
// fat-tree:3:K (K even, 4..64): the k-ary fat tree (Al-Fares et al., 2008).
//   h = K/2. K pods, each with h edge ("leaf") and h aggregation switches;
//   h^2 core switches. K^3/4 hosts, 5K^2/4 switches.
//   Edge e of pod p (0-based) is L{p*h + e + 1}, aggregation a of pod p is
//   A{p*h + a + 1}, core c (0-based) is C{c + 1}.
//   L(p,e) port i (1..h)        <-> host H{(p*h + e)*h + i} port 1
//   L(p,e) port h + a + 1       <-> A(p,a) port e + 1       (a = 0..h-1)
//   A(p,a) port h + j + 1       <-> C{a*h + j + 1} port p + 1  (j = 0..h-1)
//   So core c serves aggregation index c / h of every pod, on port pod + 1.
//
// Both throw TopologyError("K must ...") for a K outside the range above.
#include "fabric/topology/topology.h"

namespace ibfab::topo {

Topology make_fat_tree_2(unsigned k);
Topology make_fat_tree_3(unsigned k);

}  // namespace ibfab::topo
