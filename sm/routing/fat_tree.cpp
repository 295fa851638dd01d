#include "sm/routing/fat_tree.h"

#include <algorithm>
#include <vector>

#include "sm/routing/switch_graph.h"

namespace ibfab::sm {

namespace {

constexpr uint32_t kUnranked = UINT32_MAX;

// Rank = hops to the nearest leaf (a switch with end ports).
std::vector<uint32_t> ranks(const SwitchGraph& g) {
  std::vector<uint32_t> rank(g.n, kUnranked);
  std::vector<uint32_t> queue;
  for (uint32_t s = 0; s < g.n; ++s)
    for (uint32_t d = g.dest_begin[s]; d < g.dest_begin[s + 1]; ++d)
      if (g.dests[d].port != 0 && rank[s] == kUnranked) {
        rank[s] = 0;
        queue.push_back(s);
      }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const uint32_t u = queue[head];
    for (uint32_t e = g.link_begin[u]; e < g.link_begin[u + 1]; ++e)
      if (rank[g.link_peer[e]] == kUnranked) {
        rank[g.link_peer[e]] = rank[u] + 1;
        queue.push_back(g.link_peer[e]);
      }
  }
  return rank;
}

}  // namespace

std::string_view FatTreeEngine::description() const {
  return "fat trees only: destination-mod-k up-ports, so one leaf's hosts leave by different uplinks; minimal, "
         "deadlock-free";
}

bool FatTreeEngine::route(const RoutingInput& in, RoutingOutput& out, std::string& error) {
  SwitchGraph g;
  if (!SwitchGraph::build(in, g, error)) return false;
  const std::vector<uint32_t> rank = ranks(g);
  uint32_t top = 0;
  for (uint32_t s = 0; s < g.n; ++s) {
    if (rank[s] == kUnranked) {
      error = "ftree: switch " + std::to_string(s) + " is not connected to any leaf (no fat tree)";
      return false;
    }
    top = std::max(top, rank[s]);
    for (uint32_t e = g.link_begin[s]; e < g.link_begin[s + 1]; ++e)
      if (rank[g.link_peer[e]] == rank[s]) {
        error = "ftree: a cable joins two switches of rank " + std::to_string(rank[s]) + " (no fat tree)";
        return false;
      }
  }
  if (g.n == 0) {
    error = "ftree: no switch";
    return false;
  }
  // stride[r]: product of the up-port counts of ranks below r (taken from
  // the first switch of each rank).
  std::vector<uint32_t> ups_at(top + 1, 0);
  for (uint32_t s = 0; s < g.n; ++s) {
    if (ups_at[rank[s]] != 0) continue;
    for (uint32_t e = g.link_begin[s]; e < g.link_begin[s + 1]; ++e) ups_at[rank[s]] += rank[g.link_peer[e]] > rank[s];
  }
  std::vector<uint64_t> stride(top + 1, 1);
  for (uint32_t r = 1; r <= top; ++r) stride[r] = stride[r - 1] * std::max<uint32_t>(1, ups_at[r - 1]);

  // Number every LID: end ports in leaf order, then switch LIDs.
  std::vector<uint64_t> number(std::size_t{in.max_lid} + 1, 0);
  uint64_t next = 0;
  for (const bool switches : {false, true})
    for (uint32_t s = 0; s < g.n; ++s)
      for (uint32_t d = g.dest_begin[s]; d < g.dest_begin[s + 1]; ++d)
        if ((g.dests[d].port == 0) == switches)
          for (uint32_t k = 0; k < g.dests[d].count; ++k) number[g.dests[d].lid + k] = next++;

  const std::vector<Dist> dist = all_pairs_distances(g);
  out.lft.assign(g.n, std::vector<uint8_t>(std::size_t{in.max_lid} + 1, kNoRoute));
  out.hops.assign(std::size_t{g.n} * g.n, kUnreachable);
  std::vector<uint8_t> candidates;
  candidates.reserve(g.max_degree);
  for (uint32_t s = 0; s < g.n; ++s) {
    std::vector<uint8_t>& lft = out.lft[s];
    for (uint32_t t = 0; t < g.n; ++t) {
      const Dist here = dist[std::size_t{s} * g.n + t];
      if (here == kFar) continue;
      out.hops[std::size_t{s} * g.n + t] = static_cast<uint8_t>(std::min<Dist>(here, 254));
      candidates.clear();
      bool down = false;
      if (s != t) {
        // Below s (reachable going down only) iff the distance is the rank gap.
        down = rank[s] > rank[t] && here == rank[s] - rank[t];
        // Minimal next hops in the wanted direction; a top switch going to
        // another top switch has no way up, and takes the minimal way down.
        for (const bool any : {false, true}) {
          for (uint32_t e = g.link_begin[s]; e < g.link_begin[s + 1]; ++e) {
            const uint32_t peer = g.link_peer[e];
            if ((any || (rank[peer] < rank[s]) == down) && dist[std::size_t{peer} * g.n + t] + 1 == here)
              candidates.push_back(g.link_port[e]);
          }
          if (!candidates.empty()) break;
        }
        if (candidates.empty()) continue;
      }
      for (uint32_t d = g.dest_begin[t]; d < g.dest_begin[t + 1]; ++d) {
        const SwitchGraph::Dest& dest = g.dests[d];
        for (uint32_t k = 0; k < dest.count; ++k) {
          const uint16_t lid = static_cast<uint16_t>(dest.lid + k);
          if (s == t) {
            lft[lid] = dest.port;
            continue;
          }
          const uint64_t i = down ? number[lid] : number[lid] / stride[rank[s]];
          lft[lid] = candidates[i % candidates.size()];
        }
      }
    }
  }
  return true;
}

}  // namespace ibfab::sm
