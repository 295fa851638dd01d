#include "sm/routing/up_down.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <numeric>
#include <tuple>
#include <utility>

#include "sm/routing/forwarding_tables.h"
#include "sm/routing/switch_graph.h"

namespace ibfab::sm {

namespace {

std::string guid_text(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

// Multi-source BFS from `roots`: hops to the nearest root.
std::vector<uint32_t> rank_switches(const SwitchGraph& g, const std::vector<uint32_t>& roots) {
  std::vector<uint32_t> rank(g.n, UINT32_MAX);
  std::vector<uint32_t> queue;
  queue.reserve(g.n);
  for (uint32_t r : roots) {
    rank[r] = 0;
    queue.push_back(r);
  }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const uint32_t u = queue[head];
    for (uint32_t e = g.link_begin[u]; e < g.link_begin[u + 1]; ++e) {
      const uint32_t t = g.link_peer[e];
      if (rank[t] == UINT32_MAX) {
        rank[t] = rank[u] + 1;
        queue.push_back(t);
      }
    }
  }
  return rank;
}

// The automatic roots of the components flagged in `wanted` (see the
// header), appended to `roots`.
void auto_roots(const SwitchGraph& g, const RoutingInput& in, const std::vector<uint32_t>& comp,
                const std::vector<uint8_t>& edge, const std::vector<uint8_t>& wanted,
                std::vector<uint32_t>& roots) {
  std::vector<uint32_t> edge_list;
  for (uint32_t s = 0; s < g.n; ++s)
    if (edge[s]) edge_list.push_back(s);
  const std::vector<uint32_t> to_edge = rank_switches(g, edge_list);
  const std::size_t comps = wanted.size();
  std::vector<uint32_t> farthest(comps, 0);
  std::vector<uint32_t> lowest_guid(comps, UINT32_MAX);
  for (uint32_t s = 0; s < g.n; ++s) {
    const uint32_t c = comp[s];
    if (to_edge[s] != UINT32_MAX) farthest[c] = std::max(farthest[c], to_edge[s]);
    if (lowest_guid[c] == UINT32_MAX || in.switches[s].guid < in.switches[lowest_guid[c]].guid)
      lowest_guid[c] = s;
  }
  for (uint32_t s = 0; s < g.n; ++s) {
    const uint32_t c = comp[s];
    if (!wanted[c]) continue;
    const bool has_edge = to_edge[lowest_guid[c]] != UINT32_MAX;
    if (has_edge ? to_edge[s] == farthest[c] : s == lowest_guid[c]) roots.push_back(s);
  }
}

// One up*down* computation for a given set of roots.
struct Attempt {
  // Inputs: per switch, its component and whether end ports are cabled to it.
  const std::vector<uint32_t>* comp = nullptr;
  const std::vector<uint8_t>* edge = nullptr;
  std::vector<uint32_t> rank;
  std::vector<uint8_t> link_down;  // per link slot: 1 if it goes down
  std::vector<Dist> dist;          // [s * n + d]: route length s -> d | kDownOnly
  // Per component: a switch with end ports and another switch of the
  // component have no route between them (fail_s -> fail_d).
  std::vector<uint8_t> failed;
  uint32_t fail_s = 0, fail_d = 0;
};

void attempt(const SwitchGraph& g, const RoutingInput& in, const std::vector<uint32_t>& roots,
             std::size_t comps, Attempt& a) {
  const uint32_t n = g.n;
  const std::vector<uint32_t>& comp = *a.comp;
  const std::vector<uint8_t>& edge = *a.edge;
  a.rank = rank_switches(g, roots);
  // pos[s]: place of s in (rank, GUID, index) order; up = towards lower pos.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return std::tuple(a.rank[x], in.switches[x].guid, x) <
           std::tuple(a.rank[y], in.switches[y].guid, y);
  });
  std::vector<uint32_t> pos(n);
  for (uint32_t i = 0; i < n; ++i) pos[order[i]] = i;
  a.link_down.assign(g.link_peer.size(), 0);
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t e = g.link_begin[s]; e < g.link_begin[s + 1]; ++e)
      a.link_down[e] = pos[g.link_peer[e]] > pos[s] ? 1 : 0;

  a.failed.assign(comps, 0);
  a.dist.assign(std::size_t{n} * n, kFar);
  // 64 destinations d = b + i at a time, bit i of each word.
  //   A[s]: s reaches d going down only (BFS from d along the up links,
  //         i.e. against the down links);
  //   then level by level, L = 1, 2, ...: a switch joins at L either
  //   because it is in A at down-only distance L, or, if it is not in A,
  //   because one of its up neighbours joined at L - 1 (its route length
  //   is 1 + the least of its up neighbours').
  std::vector<uint64_t> in_a(n), seen_d(n), front_d(n), next_d(n, 0), done(n), front(n),
      next_u(n, 0);
  const uint32_t* begin = g.link_begin.data();
  const uint32_t* peer = g.link_peer.data();
  const uint8_t* down = a.link_down.data();
  const auto start_batch = [&](uint32_t b, uint32_t batch) {
    std::fill(seen_d.begin(), seen_d.end(), uint64_t{0});
    std::fill(front_d.begin(), front_d.end(), uint64_t{0});
    for (uint32_t i = 0; i < batch; ++i) seen_d[b + i] = front_d[b + i] = uint64_t{1} << i;
  };
  // One level of the down-only BFS; returns whether it reached anything.
  // Calls on_fresh(t, bits) for the switches reached.
  const auto step_down = [&](auto&& on_fresh) {
    for (uint32_t u = 0; u < n; ++u) {
      const uint64_t f = front_d[u];
      if (f == 0) continue;
      for (uint32_t e = begin[u], end = begin[u + 1]; e < end; ++e)
        if (!down[e]) next_d[peer[e]] |= f;
    }
    bool any = false;
    for (uint32_t t = 0; t < n; ++t) {
      const uint64_t fresh = next_d[t] & ~seen_d[t];
      next_d[t] = 0;
      front_d[t] = fresh;
      if (fresh == 0) continue;
      any = true;
      seen_d[t] |= fresh;
      on_fresh(t, fresh);
    }
    return any;
  };
  for (uint32_t b = 0; b < n; b += 64) {
    const uint32_t batch = std::min(64u, n - b);
    const uint64_t all = batch == 64 ? ~uint64_t{0} : (uint64_t{1} << batch) - 1;
    start_batch(b, batch);
    while (step_down([](uint32_t, uint64_t) {})) {
    }
    std::copy(seen_d.begin(), seen_d.end(), in_a.begin());

    start_batch(b, batch);
    std::copy(seen_d.begin(), seen_d.end(), front.begin());
    std::fill(done.begin(), done.end(), uint64_t{0});
    for (uint32_t i = 0; i < batch; ++i) {
      done[b + i] = uint64_t{1} << i;
      a.dist[std::size_t{b + i} * n + b + i] = kDownOnly;
    }
    for (Dist level = 1;; ++level) {
      // Up rule: s -> t up, so from t's side the link goes down.
      for (uint32_t t = 0; t < n; ++t) {
        const uint64_t f = front[t];
        if (f == 0) continue;
        for (uint32_t e = begin[t], end = begin[t + 1]; e < end; ++e)
          if (down[e]) next_u[peer[e]] |= f;
      }
      std::fill(front.begin(), front.end(), uint64_t{0});
      bool any = step_down([&](uint32_t t, uint64_t fresh) {
        front[t] = fresh;
        done[t] |= fresh;
        Dist* row = &a.dist[std::size_t{t} * n + b];
        for (uint64_t bits = fresh; bits != 0; bits &= bits - 1)
          row[std::countr_zero(bits)] = static_cast<Dist>(level | kDownOnly);
      });
      for (uint32_t s = 0; s < n; ++s) {
        const uint64_t fresh = next_u[s] & ~in_a[s] & ~done[s];
        next_u[s] = 0;
        if (fresh == 0) continue;
        any = true;
        front[s] |= fresh;
        done[s] |= fresh;
        Dist* row = &a.dist[std::size_t{s} * n + b];
        for (uint64_t bits = fresh; bits != 0; bits &= bits - 1)
          row[std::countr_zero(bits)] = level;
      }
      if (!any) break;
    }
    for (uint32_t s = 0; s < n; ++s) {
      for (uint64_t bits = ~done[s] & all; bits != 0; bits &= bits - 1) {
        const uint32_t d = b + static_cast<uint32_t>(std::countr_zero(bits));
        if (comp[s] == comp[d] && (edge[s] || edge[d]) && !a.failed[comp[d]]) {
          a.failed[comp[d]] = 1;
          a.fail_s = s;
          a.fail_d = d;
        }
      }
    }
  }
}

}  // namespace

std::string_view UpDownEngine::description() const {
  return "up*/down* over BFS ranks from root switches; deadlock-free on any topology";
}

bool UpDownEngine::route(const RoutingInput& in, RoutingOutput& out, std::string& error) {
  SwitchGraph g;
  if (!SwitchGraph::build(in, g, error)) return false;
  const uint32_t n = g.n;
  const std::vector<uint32_t> comp = switch_components(g);
  const std::size_t comps = n == 0 ? 0 : *std::max_element(comp.begin(), comp.end()) + 1;

  std::vector<uint32_t> roots;
  std::vector<uint8_t> automatic(comps, 1);
  for (uint64_t guid : in.root_guids) {
    uint32_t s = 0;
    while (s < n && in.switches[s].guid != guid) ++s;
    if (s == n) {
      error = "up/down root " + guid_text(guid) + " is not a switch of the subnet";
      return false;
    }
    roots.push_back(s);
    automatic[comp[s]] = 0;
  }
  std::vector<uint8_t> edge(n, 0);  // end ports are cabled to it
  for (uint32_t s = 0; s < n; ++s)
    for (const RoutingSwitch::Peer& p : in.switches[s].ports)
      if (p.kind == RoutingSwitch::Peer::Kind::Endport) edge[s] = 1;
  auto_roots(g, in, comp, edge, automatic, roots);

  Attempt a;
  a.comp = &comp;
  a.edge = &edge;
  attempt(g, in, roots, comps, a);
  std::vector<uint8_t> retry(comps, 0);
  bool any_retry = false;
  for (std::size_t c = 0; c < comps; ++c) {
    if (a.failed[c] && automatic[c]) {
      retry[c] = 1;
      any_retry = true;
    }
  }
  if (any_retry) {
    // One root per retried component: its lowest-GUID automatic root.
    std::vector<uint32_t> kept;
    std::vector<uint32_t> single(comps, UINT32_MAX);
    for (uint32_t r : roots) {
      const uint32_t c = comp[r];
      if (!retry[c]) {
        kept.push_back(r);
      } else if (single[c] == UINT32_MAX || in.switches[r].guid < in.switches[single[c]].guid) {
        single[c] = r;
      }
    }
    for (std::size_t c = 0; c < comps; ++c)
      if (retry[c]) kept.push_back(single[c]);
    roots = std::move(kept);
    attempt(g, in, roots, comps, a);
  }
  for (std::size_t c = 0; c < comps; ++c) {
    if (a.failed[c]) {
      error = "up/down roots leave switch " + guid_text(in.switches[a.fail_s].guid) +
              " without a path to switch " + guid_text(in.switches[a.fail_d].guid);
      return false;
    }
  }

  fill_forwarding_tables(g, in.max_lid, a.dist, NextHopRule::UpDown, a.link_down, out);
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  roots_ = std::move(roots);
  ranks_ = std::move(a.rank);
  return true;
}

}  // namespace ibfab::sm
