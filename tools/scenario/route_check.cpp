#include "tools/scenario/route_check.h"

#include <cstdint>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/model/switch_node.h"

namespace ibfab::scenario {
namespace {

// Where a switch's port leads, fixed for the whole check: another switch
// (its slot), an end port, or nowhere (not cabled, down, or beyond the
// switch's ports).
struct Hop {
  static constexpr int32_t kNowhere = -1;
  static constexpr int32_t kEndPort = -2;
  int32_t next = kNowhere;  // a switch slot, or kNowhere / kEndPort
  const fabric::Port* end_port = nullptr;
};

// The fabric's switches as a graph of slots, built once: the walks then
// read only LFT bytes and this table.
struct SwitchGraph {
  // By slot: the switch, its LFT as written, where its ports' Hops start.
  struct Slot {
    const fabric::Switch* sw;
    const uint8_t* lft;
    uint32_t lft_size;
    uint32_t first_hop;
    uint8_t num_ports;
  };
  std::vector<Slot> switches;
  std::vector<Hop> hops;                        // ports 0..num_ports of each switch
  std::vector<uint32_t> sources;                // slots of the switches with hosts attached

  // Entry `lid` of slot `s`'s LFT (kNoRoute past what was written).
  uint8_t out_port(const Slot& s, uint16_t lid) const { return lid < s.lft_size ? s.lft[lid] : fabric::Switch::kNoRoute; }

  explicit SwitchGraph(const fabric::Fabric& f) {
    std::vector<int32_t> slot_of(f.node_count(), Hop::kNowhere);
    for (uint32_t i = 0; i < f.node_count(); ++i) {
      const fabric::Node& n = f.node(i);
      if (!n.up() || !n.is_switch()) continue;
      slot_of[i] = static_cast<int32_t>(switches.size());
      const auto& sw = static_cast<const fabric::Switch&>(n);
      switches.push_back(Slot{&sw, sw.lft_entries().data(), static_cast<uint32_t>(sw.lft_entries().size()), 0,
                              sw.num_ports()});
    }
    for (uint32_t s = 0; s < switches.size(); ++s) {
      const fabric::Switch& sw = *switches[s].sw;
      switches[s].first_hop = static_cast<uint32_t>(hops.size());
      hops.emplace_back();  // port 0: the walk ends at this switch
      bool has_hosts = false;
      for (uint8_t p = 1; p <= sw.num_ports(); ++p) {
        Hop h;
        const fabric::Port* peer = sw.port(p).peer();
        if (peer && sw.port(p).link_up()) {
          if (peer->node().is_switch()) {
            h.next = slot_of[peer->node().index()];
          } else {
            h.next = Hop::kEndPort;
            h.end_port = peer;
            has_hosts = true;
          }
        }
        hops.push_back(h);
      }
      if (has_hosts) sources.push_back(s);
    }
  }
};

}  // namespace

RouteCheck check_unicast_routes(const fabric::Fabric& f) {
  RouteCheck c;
  struct Target {
    uint16_t lid;
    const fabric::Node* node;
  };
  std::vector<Target> targets;
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    const fabric::Node& n = f.node(i);
    if (!n.up()) continue;
    if (n.is_switch()) {
      if (n.port(0).lid) targets.push_back({n.port(0).lid, &n});
      continue;
    }
    for (uint8_t p = 1; p <= n.num_ports(); ++p) {
      const fabric::Port& port = n.port(p);
      if (!port.link_up()) continue;
      if (port.state() != fabric::PortState::Active || port.lid == 0) {
        ++c.ports_not_active;
        continue;
      }
      targets.push_back({port.lid, &n});
    }
  }
  sim::Progress& progress = f.sim().progress();
  progress.begin("route check", "LIDs", targets.size());
  const SwitchGraph g(f);
  // Each destination's forwarding is a graph with one edge out of every
  // switch, so a switch's verdict for a LID is the verdict of the switch
  // its entry leads to. Walks stop at a switch already judged for this LID
  // (stamp == the LID's round), so each LID costs one visit per switch its
  // routes touch, not one walk per source; reaching a switch still on the
  // current walk is a loop.
  enum : uint8_t { kOnWalk, kDelivers, kBroken };
  std::vector<uint32_t> stamp(g.switches.size(), 0);
  std::vector<uint8_t> verdict(g.switches.size(), kBroken);
  std::vector<uint32_t> walk;
  uint32_t round = 0;
  for (const Target& t : targets) {
    ++round;
    progress.advance();
    for (const uint32_t source : g.sources) {
      ++c.checked;
      walk.clear();
      uint32_t at = source;
      uint8_t result = kBroken;
      for (;;) {
        if (stamp[at] == round) {
          result = verdict[at] == kDelivers ? kDelivers : kBroken;  // kOnWalk: a loop
          break;
        }
        stamp[at] = round;
        verdict[at] = kOnWalk;
        walk.push_back(at);
        const SwitchGraph::Slot& sw = g.switches[at];
        const uint8_t out = g.out_port(sw, t.lid);
        if (out > sw.num_ports) break;
        const Hop& h = g.hops[sw.first_hop + out];
        if (out == 0) {
          result = sw.sw == t.node ? kDelivers : kBroken;
          break;
        }
        if (h.next >= 0) {
          at = static_cast<uint32_t>(h.next);
          continue;
        }
        if (h.next == Hop::kEndPort && &h.end_port->node() == t.node && h.end_port->owns_lid(t.lid))
          result = kDelivers;
        break;
      }
      for (const uint32_t s : walk) verdict[s] = result;
      if (result != kDelivers) ++c.broken;
    }
  }
  return c;
}

}  // namespace ibfab::scenario
