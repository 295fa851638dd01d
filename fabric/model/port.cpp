#include "fabric/model/port.h"

#include "fabric/model/link.h"
#include "fabric/model/node.h"

namespace ibfab::fabric {

const char* to_string(PortState s) {
  switch (s) {
    case PortState::NoChange: return "NoChange";
    case PortState::Down: return "Down";
    case PortState::Init: return "Init";
    case PortState::Armed: return "Armed";
    case PortState::Active: return "Active";
  }
  return "?";
}

Port* Port::peer() const { return link_ ? link_->peer_of(this) : nullptr; }

void Port::refresh_phys() {
  phys_up_ = number_ == 0 ||  // a switch's management port has no cable
             (link_ && link_->up() && node_->up() && link_->peer_of(this)->node().up());
}

int Port::match_pkey(uint16_t pkey) const {
  const uint16_t base = pkey & 0x7FFF;
  if (base == 0) return -1;  // the invalid P_Key matches nothing
  for (std::size_t i = 0; i < pkeys.size(); ++i) {
    const uint16_t mine = pkeys[i];
    if ((mine & 0x7FFF) != base) continue;
    if (!(mine & 0x8000) && !(pkey & 0x8000)) continue;  // two limited members
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace ibfab::fabric
