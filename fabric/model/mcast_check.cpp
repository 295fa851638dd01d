#include "fabric/model/mcast_check.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "fabric/mad/forwarding_tables.h"

namespace ibfab::fabric {

namespace {

std::string name_of(const Port& p) { return p.node().name() + "[" + std::to_string(p.number()) + "]"; }

// One flood from `origin`; returns false with `problem` set on the first
// failure. `reached` gets every delivery, in flood order, repeats included.
bool flood(const Port& origin, uint16_t mlid, std::vector<const Port*>& reached, std::string& problem) {
  struct Entry {
    const Switch* sw;
    uint8_t in_port;
  };
  std::vector<Entry> todo;
  std::vector<const Switch*> entered;
  const std::string from = " flooding from " + name_of(origin);
  const auto arrive_at = [&](const Port& out) {
    // `out` is an egress port with an up link: where does the packet land?
    const Port* peer = out.peer();
    if (!peer) return;
    if (peer->node().is_switch()) todo.push_back({static_cast<const Switch*>(&peer->node()), peer->number()});
    else reached.push_back(peer);
  };
  if (origin.node().is_switch()) {
    todo.push_back({static_cast<const Switch*>(&origin.node()), 0});
  } else if (origin.link_up()) {
    arrive_at(origin);
  }
  while (!todo.empty()) {
    const Entry e = todo.back();
    todo.pop_back();
    if (std::find(entered.begin(), entered.end(), e.sw) != entered.end()) {
      problem = "switch " + e.sw->name() + " entered twice (loop or second path)" + from;
      return false;
    }
    entered.push_back(e.sw);
    for (uint8_t pos = 0; pos < e.sw->mft_positions(); ++pos) {
      const uint16_t mask = e.sw->mft(mlid, pos);
      for (unsigned bit = 0; bit < 16; ++bit) {
        if (!(mask & (1u << bit))) continue;
        const unsigned port = pos * 16u + bit;
        if (port == e.in_port || port > e.sw->num_ports()) continue;
        const Port& out = e.sw->port(static_cast<uint8_t>(port));
        if (port == 0) reached.push_back(&out);
        else if (out.link_up()) arrive_at(out);
      }
    }
  }
  return true;
}

}  // namespace

McastCheck check_multicast(const Fabric& fabric, uint16_t mlid, const std::vector<const Port*>& member_ports) {
  McastCheck result;
  std::vector<const Port*> order;  // floods in the caller's order, repeats dropped
  for (const Port* m : member_ports)
    if (std::find(order.begin(), order.end(), m) == order.end()) order.push_back(m);
  std::vector<const Port*> members = order;  // sorted, for lookups
  std::sort(members.begin(), members.end(), std::less<>());
  const auto fail = [&result](std::string why) {
    result.ok = false;
    result.problem = std::move(why);
    return result;
  };
  for (const Port* m : members)
    if (!m || &m->node().fabric() != &fabric) return fail("a member port is not in this fabric");
  for (const Port* origin : order) {
    std::vector<const Port*> reached;
    std::string problem;
    if (!flood(*origin, mlid, reached, problem)) return fail(problem);
    const std::string from = " flooding from " + name_of(*origin);
    for (std::size_t i = 0; i < reached.size(); ++i) {
      const Port* port = reached[i];
      if (port == origin) return fail(name_of(*port) + " got its own packet back" + from);
      if (!std::binary_search(members.begin(), members.end(), port, std::less<>()))
        return fail(name_of(*port) + " (not a member) reached" + from);
      if (std::find(reached.begin(), reached.begin() + static_cast<std::ptrdiff_t>(i), port) !=
          reached.begin() + static_cast<std::ptrdiff_t>(i))
        return fail(name_of(*port) + " reached more than once" + from);
      ++result.ports_reached;
    }
    for (const Port* m : order)
      if (m != origin && std::find(reached.begin(), reached.end(), m) == reached.end())
        return fail(name_of(*m) + " not reached" + from);
  }
  return result;
}

}  // namespace ibfab::fabric
