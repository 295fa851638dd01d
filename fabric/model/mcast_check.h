#pragma once
// Multicast invariant checker for tests: follows a multicast LID through
// the real switches' MFTs (the fabric, not any SM's view) and says whether
// every member reaches exactly the other members.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fabric/model/fabric.h"

namespace ibfab::fabric {

struct McastCheck {
  bool ok = true;
  std::string problem;           // the first problem found, naming ports as "H1[1]"; empty when ok
  std::size_t ports_reached = 0; // member ports reached, summed over every member's flood
};

// From every member port (an HCA port, or a switch's port 0), floods a
// packet for `mlid` along the MFTs, as the switches forward it: entering
// switch X on port p it leaves by every port in X's MFT entry except p;
// bit 0 means X's own port 0 is reached (and the flood goes no further
// there); an HCA port that is reached stops the flood. Ports whose link is
// not up carry nothing. A switch-port-0 member starts its flood inside its
// switch, as if entering on port 0.
//
// ok when, for every member, the ports reached are exactly the other
// members, each once; no switch is entered twice in one flood (a loop, or
// two paths); no non-member port is reached. Otherwise `problem` names the
// first failure (also: a member port of another fabric). Members flood in
// the order given; repeats count once.
// O(members * switch-hops of the flood * ports).
McastCheck check_multicast(const Fabric& fabric, uint16_t mlid, const std::vector<const Port*>& member_ports);

}  // namespace ibfab::fabric
