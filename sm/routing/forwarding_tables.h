#pragma once
// The back end shared by the routing engines: from a matrix of route
// lengths to linear forwarding tables, balancing LIDs over equal next hops.
//
// For each switch s and destination switch d != s, the next-hop candidates
// are the links of s whose far switch t satisfies the engine's rule
// (NextHopRule). The LIDs ending at d are assigned to candidates as
// follows, in ascending LID order, destination switches in index order:
//   - a LID with LMC 0 goes to the least-loaded candidate (load = LIDs
//     already assigned to that port of s), ties to the lowest port;
//   - the 2^lmc LIDs of one port with LMC > 0 go, in LID order, to the
//     least-loaded candidate not yet used by an earlier LID of the same
//     port (all candidates again once each has been used), so that they
//     leave s by different ports whenever s has that many candidates.
// At d itself a LID goes out of the port it ends at (0 for d's own).
// Switches are independent (a switch's choices depend only on its own
// loads), so the tables are built one switch at a time.
//
// Cost: O(sum over s of degree(s) * n) for the candidate sets (16-bit
// lanes, vectorised); O(candidates) each time a switch's candidate set
// differs from the previous destination switch's; amortised O(1) per LID
// while loads stay balanced (a resumable least-loaded scan). Memory: the
// tables, plus O(n * ceil(max_degree / 16)) scratch.
#include <cstdint>
#include <vector>

#include "sm/routing/routing_engine.h"
#include "sm/routing/switch_graph.h"

namespace ibfab::sm {

// Bit 15 of an UpDown route length: d is reached from s going down only.
inline constexpr Dist kDownOnly = 0x8000;

enum class NextHopRule : uint8_t {
  // t is a candidate iff dist[t][d] + 1 == dist[s][d].
  MinHop,
  // dist[s][d] = route length | kDownOnly if s forwards to d going down
  // only. If s has kDownOnly: candidates are down links to a t that has
  // kDownOnly and is one hop closer. Otherwise: up links to a t one hop
  // closer (with or without kDownOnly).
  UpDown,
};

// Fills out.lft (n tables of max_lid + 1 entries) and out.hops
// (hops[s * n + d] = dist[s][d] without flag, saturated at 254 since
// kUnreachable is 255, or kUnreachable). dist has n * n entries, row = source switch. link_down is
// indexed by link slot and read only for UpDown.
void fill_forwarding_tables(const SwitchGraph& g, uint16_t max_lid, const std::vector<Dist>& dist,
                            NextHopRule rule, const std::vector<uint8_t>& link_down,
                            RoutingOutput& out);

}  // namespace ibfab::sm
