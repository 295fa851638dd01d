#include "tools/scenario/route_check.h"

#include <vector>

#include "fabric/model/fabric.h"

namespace ibfab::scenario {

RouteCheck check_unicast_routes(const fabric::Fabric& f) {
  RouteCheck c;
  struct Target {
    uint16_t lid;
    const fabric::Node* node;
  };
  std::vector<Target> targets;
  std::vector<const fabric::Switch*> switches;
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    const fabric::Node& n = f.node(i);
    if (!n.up()) continue;
    if (n.is_switch()) {
      bool has_hosts = false;
      for (uint8_t p = 1; p <= n.num_ports(); ++p) {
        const fabric::Port* peer = n.port(p).peer();
        has_hosts = has_hosts || (peer && n.port(p).link_up() && !peer->node().is_switch());
      }
      if (has_hosts) switches.push_back(static_cast<const fabric::Switch*>(&n));
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
  for (const fabric::Switch* s : switches) {
    for (const Target& t : targets) {
      ++c.checked;
      const fabric::Node* at = s;
      bool ok = false;
      for (int hop = 0; hop < 64; ++hop) {
        const auto& sw = static_cast<const fabric::Switch&>(*at);
        const uint8_t out = sw.lft(t.lid);
        if (out == 0) {
          ok = at == t.node;
          break;
        }
        if (out > sw.num_ports() || !sw.port(out).link_up()) break;
        const fabric::Port* peer = sw.port(out).peer();
        if (peer->node().is_switch()) {
          at = &peer->node();
          continue;
        }
        ok = &peer->node() == t.node && peer->owns_lid(t.lid);
        break;
      }
      if (!ok) ++c.broken;
    }
  }
  return c;
}

}  // namespace ibfab::scenario
