#pragma once
// Checks a fabric's unicast configuration as it stands, independent of the
// SM that made it: every cabled HCA port is Active with a LID, and from
// every switch that has hosts attached, following LFT entries hop by hop
// reaches the port owning each LID (a switch LID ends at that switch, port
// 0). Those are the walks every host's traffic takes. Switches without
// hosts are not sources: up/down routing, for one, legitimately cannot
// route one spine to another spine's own LID.
//
// Cost: each LID's forwarding is checked as one tree (a switch's verdict is
// that of the switch its entry leads to, found once), so a LID costs a
// visit per switch its routes touch, not a walk per source switch:
// 27,648 hosts check in a fraction of a second.
#include <cstddef>

namespace ibfab::fabric {
class Fabric;
}

namespace ibfab::scenario {

struct RouteCheck {
  std::size_t checked = 0;          // (switch with hosts, LID) pairs judged
  std::size_t broken = 0;           // pairs whose route drops, loops or ends elsewhere
  std::size_t ports_not_active = 0;  // cabled HCA ports not Active or without a LID
};

RouteCheck check_unicast_routes(const fabric::Fabric& fabric);

}  // namespace ibfab::scenario
