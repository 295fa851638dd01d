#include "sm/routing/forwarding_tables.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

namespace ibfab::sm {

namespace {

// Per-switch scratch, sized once for the largest switch.
struct Scratch {
  std::vector<uint16_t> masks;   // [word * n + d]: candidate link slots of s for d
  std::vector<uint32_t> load;    // per link slot of s: LIDs assigned so far
  std::vector<uint16_t> c_mask;  // the candidate set below, as a mask
  std::vector<uint32_t> c_slot;  // per candidate: its link slot (local to s)
  std::vector<uint32_t> c_load;  // per candidate: its load while it is one
  std::vector<uint8_t> c_port;   // per candidate: its port
  std::vector<uint8_t> c_used;   // per candidate: used by the current LMC group
};

// Candidate masks are 16 bits wide, all arithmetic in 16-bit lanes, so
// that the loops below vectorise 8 lanes to an SSE2 register.
constexpr uint32_t kMaskBits = 16;

// masks |= (1 << bit) where the link to t is a candidate for d.
template <NextHopRule kRule>
void mark_candidates(const Dist* rs, const Dist* rt, bool down, uint16_t* masks, uint32_t n,
                     unsigned bit) {
  const auto flag = [bit](bool b) {
    return static_cast<uint16_t>(static_cast<uint16_t>(b) << bit);
  };
  if constexpr (kRule == NextHopRule::MinHop) {
    for (uint32_t d = 0; d < n; ++d)
      masks[d] = static_cast<uint16_t>(masks[d] | flag(static_cast<Dist>(rt[d] + 1) == rs[d]));
  } else if (down) {
    for (uint32_t d = 0; d < n; ++d)
      masks[d] = static_cast<uint16_t>(masks[d] | flag(((rs[d] & rt[d] & kDownOnly) != 0) &
                                                       (static_cast<Dist>(rt[d] + 1) == rs[d])));
  } else {
    for (uint32_t d = 0; d < n; ++d)
      masks[d] = static_cast<uint16_t>(
          masks[d] | flag((rs[d] < kDownOnly) & (static_cast<Dist>((rt[d] & kFar) + 1) == rs[d])));
  }
}

// The k candidates of one (switch, destination), ports ascending, with
// their loads copied in (load() and take() work on the copies; store()
// writes them back), and a resumable least-loaded choice over them. The
// choice's state holds only while the loads change through take();
// restart() after anything else.
class Candidates {
 public:
  Candidates(uint32_t* slot, uint8_t* port, uint32_t* load)
      : slot_(slot), port_(port), load_(load) {}

  uint32_t size() const { return k_; }
  uint8_t port(uint32_t i) const { return port_[i]; }
  uint32_t& load(uint32_t i) { return load_[i]; }

  // Adds the candidates in `mask` (bit i = link slot base + i), in
  // ascending order after those already there, with their loads.
  void append(uint32_t mask, uint32_t base, const uint8_t* link_port, const uint32_t* loads) {
    for (uint32_t bits = mask; bits != 0; bits &= bits - 1) {
      const uint32_t slot = base + static_cast<uint32_t>(std::countr_zero(bits));
      slot_[k_] = slot;
      port_[k_] = link_port[slot];
      load_[k_] = loads[slot];
      ++k_;
    }
  }
  // Writes the loads back to `loads` (by slot) and empties the set.
  void store(uint32_t* loads) {
    for (uint32_t i = 0; i < k_; ++i) loads[slot_[i]] = load_[i];
    k_ = 0;
  }
  void restart() {
    level_ = *std::min_element(load_, load_ + k_);
    next_ = 0;
  }
  // The least-loaded candidate, ties to the lowest index; its load is
  // incremented. Invariant: candidates before next_ have load > level_,
  // the others >= level_. Amortised O(1) when loads are balanced.
  uint32_t take() {
    uint32_t i = next_, level = level_;
    for (;;) {
      for (; i < k_; ++i) {
        if (load_[i] == level) {
          ++load_[i];
          next_ = i + 1;
          return i;
        }
      }
      restart();
      i = 0;
      level = level_;
    }
  }

 private:
  uint32_t* slot_;
  uint8_t* port_;
  uint32_t* load_;
  uint32_t k_ = 0;
  uint32_t level_ = 0;
  uint32_t next_ = 0;
};

// Assigns the LIDs of one port with LMC > 0 (see the header), then
// restarts `c`.
void assign_group(const SwitchGraph::Dest& dest, Candidates& c, uint8_t* used, uint8_t* lft) {
  const uint32_t k = c.size();
  std::fill(used, used + k, uint8_t{0});
  uint32_t unused = k;
  for (uint32_t j = 0; j < dest.count; ++j) {
    if (unused == 0) {
      std::fill(used, used + k, uint8_t{0});
      unused = k;
    }
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < k; ++i)
      if (!used[i] && (best == UINT32_MAX || c.load(i) < c.load(best))) best = i;
    lft[dest.lid + j] = c.port(best);
    ++c.load(best);
    used[best] = 1;
    --unused;
  }
  c.restart();
}

template <NextHopRule kRule>
void fill_switch(const SwitchGraph& g, uint32_t s, const std::vector<Dist>& dist,
                 const std::vector<uint8_t>& link_down, Scratch& sc, RoutingOutput& out) {
  const uint32_t n = g.n;
  const uint32_t first = g.link_begin[s];
  const uint32_t degree = g.degree(s);
  const uint32_t words = (degree + kMaskBits - 1) / kMaskBits;
  const Dist* rs = &dist[std::size_t{s} * n];
  uint16_t* masks = sc.masks.data();
  std::fill(masks, masks + std::size_t{words} * n, uint16_t{0});
  for (uint32_t i = 0; i < degree; ++i) {
    const uint32_t t = g.link_peer[first + i];
    const bool down = kRule == NextHopRule::UpDown && link_down[first + i] != 0;
    mark_candidates<kRule>(rs, &dist[std::size_t{t} * n], down,
                           masks + std::size_t{i / kMaskBits} * n, n, i % kMaskBits);
  }
  std::fill(sc.load.begin(), sc.load.begin() + degree, 0u);
  // The candidate set is rebuilt only when it differs from the previous
  // destination's (long runs are equal: a leaf's uplinks, say).
  std::fill(sc.c_mask.begin(), sc.c_mask.begin() + words, uint16_t{0});
  Candidates c(sc.c_slot.data(), sc.c_port.data(), sc.c_load.data());
  uint32_t* load = sc.load.data();
  const uint8_t* link_port = g.link_port.data() + first;  // no links: past the end, never read

  uint8_t* lft = out.lft[s].data();
  uint8_t* hops = &out.hops[std::size_t{s} * n];
  const SwitchGraph::Dest* dests = g.dests.data();
  for (uint32_t d = 0; d < n; ++d) {
    const Dist len = static_cast<Dist>(rs[d] & kFar);
    hops[d] = len == kFar ? kUnreachable : static_cast<uint8_t>(std::min<Dist>(len, 254));
    const uint32_t dest_first = g.dest_begin[d], dest_end = g.dest_begin[d + 1];
    if (d == s) {
      for (uint32_t e = dest_first; e < dest_end; ++e)
        std::memset(lft + dests[e].lid, dests[e].port, dests[e].count);
      continue;
    }
    if (len == kFar || dest_first == dest_end) continue;

    bool same = true;
    for (uint32_t w = 0; w < words; ++w)
      same = same && masks[std::size_t{w} * n + d] == sc.c_mask[w];
    if (!same) {
      c.store(load);
      for (uint32_t w = 0; w < words; ++w) {
        sc.c_mask[w] = masks[std::size_t{w} * n + d];
        c.append(sc.c_mask[w], w * kMaskBits, link_port, load);
      }
      c.restart();
    }
    assert(c.size() > 0 && "a reachable destination has a next hop");
    if (c.size() == 0) continue;

    if (c.size() == 1) {
      for (uint32_t e = dest_first; e < dest_end; ++e) {
        std::memset(lft + dests[e].lid, c.port(0), dests[e].count);
        c.load(0) += dests[e].count;
      }
      c.restart();
      continue;
    }
    for (uint32_t e = dest_first; e < dest_end; ++e) {
      if (dests[e].count == 1)
        lft[dests[e].lid] = c.port(c.take());
      else
        assign_group(dests[e], c, sc.c_used.data(), lft);
    }
  }
}

}  // namespace

void fill_forwarding_tables(const SwitchGraph& g, uint16_t max_lid, const std::vector<Dist>& dist,
                            NextHopRule rule, const std::vector<uint8_t>& link_down,
                            RoutingOutput& out) {
  const uint32_t n = g.n;
  out.lft.assign(n, std::vector<uint8_t>(std::size_t{max_lid} + 1, kNoRoute));
  out.hops.assign(std::size_t{n} * n, kUnreachable);

  Scratch sc;
  const std::size_t words = (g.max_degree + kMaskBits - 1) / kMaskBits;
  sc.masks.resize(words * n);
  sc.load.resize(g.max_degree);
  sc.c_mask.resize(words);
  sc.c_load.resize(g.max_degree);
  sc.c_port.resize(g.max_degree);
  sc.c_slot.resize(g.max_degree);
  sc.c_used.resize(g.max_degree);
  for (uint32_t s = 0; s < n; ++s) {
    if (rule == NextHopRule::MinHop)
      fill_switch<NextHopRule::MinHop>(g, s, dist, link_down, sc, out);
    else
      fill_switch<NextHopRule::UpDown>(g, s, dist, link_down, sc, out);
  }
}

}  // namespace ibfab::sm
