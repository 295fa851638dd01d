#pragma once
// The Subnet Management Agent of a node: answers SMP Get and Set for the
// attributes an SM needs, with the IBTA's MAD status for everything else.
//
// answer() rewrites the SMP in place: attribute data and status (the
// caller turns it into a GetResp and routes it). Never throws: a malformed
// or unsupported request gets a status, not an exception.
//   0x0004  bad base or class version
//   0x0008  method other than Get/Set
//   0x000C  attribute unsupported by this node, or read-only on Set
//   0x001C  attribute modifier or a Set value out of range; nothing applied
#include <cstdint>

#include "fabric/mad/dr_smp.h"

namespace ibfab::fabric {

class Node;
class Port;

class Sma {
 public:
  explicit Sma(Node& node) : node_(node) {}

  // `in` is the port the SMP arrived on.
  void answer(Port& in, mad::SmpBuffer smp);

 private:
  uint16_t node_info(Port& in, uint8_t* data);
  uint16_t port_info(Port& in, uint32_t mod, bool set, uint8_t* data);
  uint16_t switch_info(bool set, uint8_t* data);
  uint16_t lft(uint32_t mod, bool set, uint8_t* data);
  uint16_t mft(uint32_t mod, bool set, uint8_t* data);
  uint16_t pkey_table(Port& in, uint32_t mod, bool set, uint8_t* data);
  uint16_t guid_info(Port& in, uint32_t mod, bool set, uint8_t* data);
  uint16_t sl_to_vl(Port& in, uint32_t mod, bool set, uint8_t* data);
  uint16_t vl_arbitration(Port& in, uint32_t mod, bool set, uint8_t* data);
  Port* port_for(Port& in, uint32_t mod);

  Node& node_;
};

}  // namespace ibfab::fabric
