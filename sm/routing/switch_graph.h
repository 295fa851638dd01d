#pragma once
// The compact, validated form of a RoutingInput that the routing engines
// work on: switch-to-switch links in CSR order, and the LIDs that end at
// each switch (its own, and those of the end ports cabled to it).
//
// Memory: O(switches + links + end ports). Built in one pass over the input.
#include <cstdint>
#include <string>
#include <vector>

#include "sm/routing/routing_engine.h"

namespace ibfab::sm {

// Route length in switch-to-switch hops, as the engines store it in their
// n x n working matrices. Bit 15 is free for an engine's own flag.
using Dist = uint16_t;
inline constexpr Dist kFar = 0x7FFF;                  // no route
inline constexpr uint32_t kMaxRoutedSwitches = kFar;  // so that every path is < kFar hops

struct SwitchGraph {
  // LIDs that leave the fabric at a switch: count = 2^lmc consecutive LIDs
  // from `lid`, all out of `port` (0 = the switch itself).
  struct Dest {
    uint16_t lid = 0;
    uint16_t count = 0;
    uint8_t port = 0;
  };

  uint32_t n = 0;  // switches
  // Links of switch s: slots link_begin[s] .. link_begin[s + 1] - 1, in
  // ascending local port order (one slot per cabled port, so parallel
  // cables are separate slots).
  std::vector<uint32_t> link_begin;
  std::vector<uint32_t> link_peer;  // the far switch
  std::vector<uint8_t> link_port;   // the local port
  // Destinations of switch s: dest_begin[s] .. dest_begin[s + 1] - 1, in
  // ascending LID order.
  std::vector<uint32_t> dest_begin;
  std::vector<Dest> dests;
  uint32_t max_degree = 0;  // most links on one switch

  uint32_t degree(uint32_t s) const { return link_begin[s + 1] - link_begin[s]; }

  // Fills `g` from `in`. Returns false with `error` set when the input is
  // malformed: a peer switch index out of range, a cable whose far end does
  // not point back, a port beyond num_ports, a LID range that is unaligned
  // for its LMC, beyond max_lid, or LMC > 7, or more than kMaxRoutedSwitches
  // switches. LID 0 (unassigned) destinations are skipped.
  static bool build(const RoutingInput& in, SwitchGraph& g, std::string& error);
};

// Hops between every pair of switches over the switch links:
// dist[a * n + b] (kFar if unreachable; symmetric). Breadth-first searches
// from 64 sources at once, one bit per source: O(n / 64 * diameter *
// (n + links)) word operations.
std::vector<Dist> all_pairs_distances(const SwitchGraph& g);

// Connected-component label of each switch (labels 0.., in order of each
// component's lowest switch index). O(n + links).
std::vector<uint32_t> switch_components(const SwitchGraph& g);

}  // namespace ibfab::sm
