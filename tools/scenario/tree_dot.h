#pragma once
// Pictures of multicast trees as the switches hold them: the switches and
// the member hosts (other hosts are left out), every cable between them in
// grey, and in colour the cables a packet to the MLID crosses (both switch
// ends' MFT entries name the cable) and the members.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace ibfab::fabric {
class Fabric;
class Port;
}

namespace ibfab::scenario {

// Writes one Graphviz graph for `mlid`, titled `title`; `members` are the
// member host ports (drawn filled).
void write_tree_dot(std::ostream& out, const fabric::Fabric& fabric, uint16_t mlid, const std::string& title,
                    const std::vector<const fabric::Port*>& members);

}  // namespace ibfab::scenario
