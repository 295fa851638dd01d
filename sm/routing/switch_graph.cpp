#include "sm/routing/switch_graph.h"

#include <algorithm>
#include <bit>
#include <cstdio>

namespace ibfab::sm {

namespace {

std::string where(const RoutingInput& in, uint32_t s, std::size_t port) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "switch 0x%016llx port %zu",
                static_cast<unsigned long long>(in.switches[s].guid), port);
  return buf;
}

bool add_dest(const RoutingInput& in, uint32_t s, std::size_t port, uint16_t lid, uint8_t lmc,
              std::vector<SwitchGraph::Dest>& out, std::string& error) {
  if (lid == 0) return true;
  if (lmc > 7) {
    error = where(in, s, port) + ": LMC above 7";
    return false;
  }
  const uint32_t count = 1u << lmc;
  if (lid + count - 1 > in.max_lid) {
    error = where(in, s, port) + ": LIDs beyond max_lid";
    return false;
  }
  out.push_back({lid, static_cast<uint16_t>(count), static_cast<uint8_t>(port)});
  return true;
}

}  // namespace

bool SwitchGraph::build(const RoutingInput& in, SwitchGraph& g, std::string& error) {
  const std::size_t n = in.switches.size();
  if (n >= kMaxRoutedSwitches) {
    error = "too many switches to route";
    return false;
  }
  g = SwitchGraph{};
  g.n = static_cast<uint32_t>(n);
  g.link_begin.reserve(n + 1);
  g.dest_begin.reserve(n + 1);
  g.link_begin.push_back(0);
  g.dest_begin.push_back(0);
  for (uint32_t s = 0; s < n; ++s) {
    const RoutingSwitch& sw = in.switches[s];
    if (sw.ports.size() > std::size_t{sw.num_ports} + 1) {
      error = where(in, s, sw.ports.size() - 1) + ": port beyond num_ports";
      return false;
    }
    const std::size_t first_dest = g.dests.size();
    if (!add_dest(in, s, 0, sw.lid, sw.lmc, g.dests, error)) return false;
    for (std::size_t p = 1; p < sw.ports.size(); ++p) {
      const RoutingSwitch::Peer& peer = sw.ports[p];
      switch (peer.kind) {
        case RoutingSwitch::Peer::Kind::None:
          break;
        case RoutingSwitch::Peer::Kind::Endport:
          if (!add_dest(in, s, p, peer.lid, peer.lmc, g.dests, error)) return false;
          break;
        case RoutingSwitch::Peer::Kind::Switch: {
          const bool back =
              peer.sw < n && peer.port < in.switches[peer.sw].ports.size() &&
              in.switches[peer.sw].ports[peer.port].kind == RoutingSwitch::Peer::Kind::Switch &&
              in.switches[peer.sw].ports[peer.port].sw == s &&
              in.switches[peer.sw].ports[peer.port].port == p;
          if (!back) {
            error = where(in, s, p) + ": far end of the cable does not point back";
            return false;
          }
          g.link_peer.push_back(peer.sw);
          g.link_port.push_back(static_cast<uint8_t>(p));
          break;
        }
      }
    }
    std::sort(g.dests.begin() + static_cast<std::ptrdiff_t>(first_dest), g.dests.end(),
              [](const Dest& a, const Dest& b) { return a.lid < b.lid; });
    g.link_begin.push_back(static_cast<uint32_t>(g.link_peer.size()));
    g.dest_begin.push_back(static_cast<uint32_t>(g.dests.size()));
    g.max_degree = std::max(g.max_degree, g.degree(s));
  }
  return true;
}

std::vector<Dist> all_pairs_distances(const SwitchGraph& g) {
  const uint32_t n = g.n;
  std::vector<Dist> dist(std::size_t{n} * n, kFar);
  // Bit i of each word: source b + i.
  std::vector<uint64_t> seen(n), frontier(n), next(n, 0);
  const uint32_t* begin = g.link_begin.data();
  const uint32_t* peer = g.link_peer.data();
  for (uint32_t b = 0; b < n; b += 64) {
    const uint32_t batch = std::min(64u, n - b);
    std::fill(seen.begin(), seen.end(), uint64_t{0});
    std::fill(frontier.begin(), frontier.end(), uint64_t{0});
    for (uint32_t i = 0; i < batch; ++i) {
      seen[b + i] = frontier[b + i] = uint64_t{1} << i;
      dist[std::size_t{b + i} * n + b + i] = 0;
    }
    for (Dist level = 1;; ++level) {
      for (uint32_t u = 0; u < n; ++u) {
        const uint64_t f = frontier[u];
        if (f == 0) continue;
        for (uint32_t e = begin[u], end = begin[u + 1]; e < end; ++e) next[peer[e]] |= f;
      }
      bool any = false;
      for (uint32_t t = 0; t < n; ++t) {
        const uint64_t fresh = next[t] & ~seen[t];
        next[t] = 0;
        frontier[t] = fresh;
        if (fresh == 0) continue;
        any = true;
        seen[t] |= fresh;
        // Distances are symmetric: write row t, where the batch's columns
        // are contiguous.
        Dist* row = &dist[std::size_t{t} * n + b];
        for (uint64_t bits = fresh; bits != 0; bits &= bits - 1)
          row[std::countr_zero(bits)] = level;
      }
      if (!any) break;
    }
  }
  return dist;
}

std::vector<uint32_t> switch_components(const SwitchGraph& g) {
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> comp(g.n, kNone);
  std::vector<uint32_t> stack;
  uint32_t next = 0;
  for (uint32_t s = 0; s < g.n; ++s) {
    if (comp[s] != kNone) continue;
    comp[s] = next;
    stack.push_back(s);
    while (!stack.empty()) {
      const uint32_t u = stack.back();
      stack.pop_back();
      for (uint32_t e = g.link_begin[u]; e < g.link_begin[u + 1]; ++e) {
        const uint32_t t = g.link_peer[e];
        if (comp[t] == kNone) {
          comp[t] = next;
          stack.push_back(t);
        }
      }
    }
    ++next;
  }
  return comp;
}

}  // namespace ibfab::sm
