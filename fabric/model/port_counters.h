#pragma once
// What a port counts, as the PMA's PortCounters / PortCountersExtended
// report it. Kept 64-bit here; the PMA saturates them to the IBTA widths.
#include <cstdint>

namespace ibfab::fabric {

struct PortCounters {
  uint64_t xmit_data = 0;   // 32-bit words (octets / 4), LRH through VCRC
  uint64_t rcv_data = 0;
  uint64_t xmit_pkts = 0;
  uint64_t rcv_pkts = 0;
  uint64_t unicast_xmit_pkts = 0, unicast_rcv_pkts = 0;
  uint64_t multicast_xmit_pkts = 0, multicast_rcv_pkts = 0;
  uint64_t xmit_discards = 0;          // could not be sent: port down, buffer full
  uint64_t xmit_wait = 0;              // ticks a packet waited for the wire
  uint64_t rcv_errors = 0;             // malformed packets received
  uint64_t rcv_switch_relay_errors = 0;  // no route (LFT/MFT) for a received packet
  uint64_t rcv_constraint_errors = 0;  // P_Key or Q_Key rejects at the receiver
  uint64_t link_downed = 0;
  uint64_t vl15_dropped = 0;           // SMPs dropped (no agent, bad path)
  uint64_t symbol_errors = 0;
  uint64_t link_error_recovery = 0;
};

}  // namespace ibfab::fabric
