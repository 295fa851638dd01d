#include "fabric/mad/smi.h"

namespace ibfab::mad {

namespace {

using namespace dr_smp;

constexpr SmiResult discard() { return SmiResult{}; }
constexpr SmiResult local() { return SmiResult{SmiAction::Local, 0, false, 0}; }
constexpr SmiResult out_port(uint8_t port) { return SmiResult{SmiAction::Forward, port, false, 0}; }
constexpr SmiResult out_lid(uint16_t lid) { return SmiResult{SmiAction::Forward, 0, true, lid}; }

constexpr bool valid_port(uint8_t port, uint8_t num_ports) {
  return port >= 1 && port <= num_ports;
}

// The directed hop out of the sender: `port` must be a real port and, when
// the caller pinned the egress port, that port.
bool sender_may_use(uint8_t port, bool is_switch, uint8_t num_ports, uint8_t port_num) {
  if (!valid_port(port, num_ports)) return false;
  if (port_num == 0) return is_switch;
  return port == port_num;
}

}  // namespace

SmiResult smi_outgoing(SmpBuffer smp, bool is_switch, uint8_t num_ports, uint8_t port_num) {
  const uint8_t hc = hop_count(smp);
  const uint8_t hp = hop_pointer(smp);
  if (hc > kMaxHops) return discard();

  if (!direction(smp)) {
    if (hp != 0) return discard();
    // LID-routed first part: nothing changes until the start switch.
    if (dr_slid(smp) != kPermissiveLid) return out_lid(kLidFromAddress);
    if (hc == 0) {  // C14-9:3 with an empty path: this node is the target
      if (dr_dlid(smp) == kPermissiveLid) {
        set_hop_pointer(smp, 1);
        return local();
      }
      if (!is_switch) return discard();
      set_hop_pointer(smp, 1);
      return out_lid(dr_dlid(smp));
    }
    // C14-9:1: first directed hop.
    const uint8_t port = initial_path(smp, 1);
    if (!sender_may_use(port, is_switch, num_ports, port_num)) return discard();
    set_hop_pointer(smp, 1);
    return out_port(port);
  }

  if (hp != hc + 1) return discard();
  // LID-routed first part of the response, back to the switch at the end of
  // the request's directed part.
  if (dr_dlid(smp) != kPermissiveLid) return out_lid(kLidFromAddress);
  if (hc == 0) {  // C14-13:3 with an empty path: back to the originator
    if (dr_slid(smp) == kPermissiveLid) {
      set_hop_pointer(smp, 0);
      return local();
    }
    if (!is_switch) return discard();
    set_hop_pointer(smp, 0);
    return out_lid(dr_slid(smp));
  }
  // C14-13:1: first returning hop, out the port the request came in by.
  const uint8_t port = return_path(smp, hc);
  if (!sender_may_use(port, is_switch, num_ports, port_num)) return discard();
  set_hop_pointer(smp, hc);
  return out_port(port);
}

SmiResult smi_incoming(SmpBuffer smp, bool is_switch, uint8_t num_ports, uint8_t in_port) {
  const uint8_t hc = hop_count(smp);
  const uint8_t hp = hop_pointer(smp);
  if (hc > kMaxHops || !valid_port(in_port, num_ports)) return discard();

  if (!direction(smp)) {
    if (hp == 0 && hc != 0) {
      // End of the LID-routed first part: this switch starts the directed
      // part (C14-9:1 on its behalf). Anywhere else the sender should have
      // advanced the hop pointer.
      if (!is_switch || dr_slid(smp) == kPermissiveLid) return discard();
      const uint8_t port = initial_path(smp, 1);
      if (!valid_port(port, num_ports)) return discard();
      set_hop_pointer(smp, 1);
      return out_port(port);
    }
    if (hp != 0 && hp < hc) {  // C14-9:2: intermediate hop
      if (!is_switch) return discard();
      const uint8_t port = initial_path(smp, hp + 1u);
      if (!valid_port(port, num_ports)) return discard();
      set_return_path(smp, hp, in_port);
      set_hop_pointer(smp, static_cast<uint8_t>(hp + 1));
      return out_port(port);
    }
    if (hp == hc) {  // C14-9:3: end of the directed part
      const bool deliver = dr_dlid(smp) == kPermissiveLid;
      if (!deliver && !is_switch) return discard();
      if (hc != 0) set_return_path(smp, hp, in_port);
      set_hop_pointer(smp, static_cast<uint8_t>(hp + 1));
      return deliver ? local() : out_lid(dr_dlid(smp));
    }
    if (hp == hc + 1) return local();  // C14-9:4: end of the LID-routed last part
    return discard();                  // C14-9:5
  }

  if (hc != 0 && hp == hc + 1) {
    // End of the response's LID-routed first part, at the switch where the
    // request's directed part ended: C14-13:1 on its behalf.
    if (!is_switch || dr_dlid(smp) == kPermissiveLid) return discard();
    const uint8_t port = return_path(smp, hc);
    if (!valid_port(port, num_ports)) return discard();
    set_hop_pointer(smp, hc);
    return out_port(port);
  }
  if (hp >= 2 && hp <= hc) {  // C14-13:2: intermediate hop
    if (!is_switch) return discard();
    const uint8_t port = return_path(smp, hp - 1u);
    if (!valid_port(port, num_ports)) return discard();
    set_hop_pointer(smp, static_cast<uint8_t>(hp - 1));
    return out_port(port);
  }
  if (hp == 1) {  // C14-13:3: end of the directed part
    if (dr_slid(smp) == kPermissiveLid) {
      set_hop_pointer(smp, 0);
      return local();
    }
    if (!is_switch) return discard();
    set_hop_pointer(smp, 0);
    return out_lid(dr_slid(smp));
  }
  if (hp == 0) return local();  // C14-13:4: end of the LID-routed last part
  return discard();             // C14-13:5
}

void smi_make_response(SmpBuffer smp) {
  set_direction(smp, true);
  smp[kMethodOffset] = kMethodGetResp;
}

}  // namespace ibfab::mad
