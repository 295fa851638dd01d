#include "fabric/model/port.h"

#include "fabric/mad/pkey_table.h"
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
  for (std::size_t i = 0; i < pkeys.size(); ++i)
    if (mad::PKeyTable::matches(pkeys[i], pkey)) return static_cast<int>(i);
  return -1;
}

int Port::find_pkey(uint16_t pkey) const {
  int limited = -1;
  for (std::size_t i = 0; i < pkeys.size(); ++i) {
    if ((pkeys[i] & 0x7FFF) != (pkey & 0x7FFF)) continue;
    if (pkeys[i] & 0x8000) return static_cast<int>(i);
    if (limited < 0) limited = static_cast<int>(i);
  }
  return limited;
}

}  // namespace ibfab::fabric
