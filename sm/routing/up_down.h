#pragma once
// "updn": up*/down* routing, deadlock-free on any topology.
//
// Ranks: BFS distance from the root switches. A link s -> t goes *up* iff
// (rank, GUID, switch index) of t is lower than that of s; this is a total
// order, so the up links form an acyclic orientation of the switch graph.
// A route never takes an up link after a down link, so the channel
// dependencies of all routes are acyclic.
//
// Roots: in.root_guids when given (every GUID must be a switch of the
// input). A connected component with none of them gets automatic roots:
// the switches farthest (in hops) from the nearest switch with an end port
// cabled to it (so the top level of a fat tree), or its lowest-GUID switch
// if it has no end ports. OpenSM instead picks switches whose hop
// histogram to the CAs has one bar above 90% (and none other above 5%).
//
// Coverage: up*down* cannot always join two switches that have no end
// ports (in a k-ary fat tree, a core and an aggregation switch of another
// core plane); such LIDs get kNoRoute and hops kUnreachable. Every route
// that starts or ends at a switch with end ports must exist: if automatic
// roots break that (possible when several roots share a rank), the
// component falls back to one root, the lowest-GUID one of them.
//
// Routes, for each destination switch d: a switch from which d can be
// reached going down only forwards down, along the shortest such path;
// any other switch forwards up, to a neighbour whose resulting route is
// the shortest. So every switch's choice is valid whatever way a packet
// arrived, and on fat trees the routes are minimum-hop. Equal next hops
// are balanced by load as in minhop (forwarding_tables.h). hops[] holds
// the lengths of these routes (not necessarily symmetric).
//
// Cost: per 64 destination switches, two bit-parallel sweeps of
// O(diameter * (n + links)) word operations, plus the tables
// (forwarding_tables.h). Memory: the tables and hops, plus 2 * n^2 bytes
// while routing. hops saturate at 254.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

class UpDownEngine final : public RoutingEngine {
 public:
  std::string_view name() const override { return "updn"; }
  std::string_view description() const override;
  // Fails on a malformed input, a root GUID that is not a switch, or given
  // roots that leave a switch with end ports and another switch of its
  // component without an up*down* route between them.
  bool route(const RoutingInput& in, RoutingOutput& out, std::string& error) override;

  // Of the last successful route(): the root switches (indices into
  // in.switches, ascending) and every switch's rank.
  const std::vector<uint32_t>& roots() const { return roots_; }
  const std::vector<uint32_t>& ranks() const { return ranks_; }

 private:
  std::vector<uint32_t> roots_;
  std::vector<uint32_t> ranks_;
};

}  // namespace ibfab::sm
