#pragma once
// Directed-route SMP processing at the SMI (IBTA 1.3 vol 1, 14.2.2), as pure
// functions over a 256-byte DR SMP (layout: dr_smp.h).
//
// A DR SMP travels up to three parts:
//   1. optional LID-routed first part, SM -> the switch where the directed
//      part starts (DrSLID != 0xFFFF; the SMP leaves the SM with
//      HopPointer 0 and the LRH DLID of that switch);
//   2. the directed part: outbound (D = 0) HopPointer counts up, the SMP
//      leaves each node by InitialPath[hp] and every node it enters records
//      ReturnPath[hp] = ingress port; returning (D = 1) HopPointer counts
//      down and the SMP leaves by ReturnPath[hp];
//   3. optional LID-routed last part, from the switch at the end of the
//      directed part to DrDLID (DrDLID != 0xFFFF).
// A response retraces the same parts backwards: LID-routed to the switch at
// the end of the directed part, along ReturnPath, then LID-routed to DrSLID.
//
// Who calls what:
//   smi_outgoing  at the node that originates the SMP (the SM's request, or
//                 the responder's reply after smi_make_response), once,
//                 before it leaves.
//   smi_incoming  at every node an SMP is addressed to (LRH DLID permissive
//                 or this node's own LID), on arrival. Switches that merely
//                 LID-route a DR SMP addressed to someone else do not call it.
// Both return what to do next:
//   Discard  drop the SMP; the buffer is left unchanged.
//   Local    hand it to this node's SMA (request) or SM (response).
//   Forward  send it on: out `port` (a directed hop), or, when lid_routed,
//            LID-routed to `lid`. lid == kLidFromAddress means the DLID is
//            not carried in the SMP: for a request's first part it is the
//            start switch's LID the sender chose; for a response's first
//            part it is the request's LRH SLID.
//
// Modelled on the facts of Linux drivers/infiniband/core/smi.c (the C14-9
// and C14-13 rules), with two additions the kernel does not need as a host
// stack: a switch that receives the LID-routed first part (D = 0, hp = 0,
// DrSLID != 0xFFFF) starts the directed part, and a switch that receives a
// response's LID-routed first part (D = 1, hp = HopCount + 1,
// DrDLID != 0xFFFF) starts walking ReturnPath.
//
// Discarded as malformed: HopCount > 63, a hop pointer outside the rule
// table, an intermediate hop at a non-switch, a path entry of 0 or
// > num_ports on the hop being taken, an ingress port of 0 or > num_ports,
// or (at the sender) a path whose first hop is not the port it leaves by.
#include <cstdint>

#include "fabric/mad/dr_smp.h"

namespace ibfab::mad {

enum class SmiAction : uint8_t { Discard, Local, Forward };

inline constexpr uint16_t kLidFromAddress = 0;

struct SmiResult {
  SmiAction action = SmiAction::Discard;
  uint8_t port = 0;         // Forward, !lid_routed: egress port
  bool lid_routed = false;  // Forward: route by LID (the switch's LFT) instead
  uint16_t lid = 0;         // Forward, lid_routed: DrDLID, DrSLID or kLidFromAddress

  friend bool operator==(const SmiResult&, const SmiResult&) = default;
};

// At the sender, before the SMP leaves. port_num: the port it leaves by;
// 0 on a switch's management port lets the path choose (then any port
// 1..num_ports is accepted). Outbound requests must have HopPointer 0;
// returning responses HopPointer = HopCount + 1 (as smi_incoming delivers
// them).
SmiResult smi_outgoing(SmpBuffer smp, bool is_switch, uint8_t num_ports, uint8_t port_num);

// At a node receiving the SMP on in_port (1..num_ports).
SmiResult smi_incoming(SmpBuffer smp, bool is_switch, uint8_t num_ports, uint8_t in_port);

// Turns a request the local SMA processed into its response: sets the D
// bit and method GetResp (0x81), keeping status, hop fields, paths and
// DrSLID/DrDLID so that smi_outgoing sends it back along ReturnPath.
void smi_make_response(SmpBuffer smp);

}  // namespace ibfab::mad
