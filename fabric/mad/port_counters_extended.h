#pragma once
// PortCountersExtended (PerfMgt attribute 0x001D, IBTA 1.3 vol 1, 16.1.4.11):
// 184 bytes at the start of the PMA data area (byte 64 of the MAD).
//
//   0 reserved  1 PortSelect  2 CounterSelect(16)  4 CounterSelect2(32)
//   8 PortXmitData  16 PortRcvData  24 PortXmitPkts  32 PortRcvPkts
//  40 PortUnicastXmitPkts  48 PortUnicastRcvPkts
//  56 PortMulticastXmitPkts  64 PortMulticastRcvPkts
//  72 SymbolErrorCounter  80 LinkErrorRecoveryCounter  88 LinkDownedCounter
//  96 PortRcvErrors  104 PortRcvRemotePhysicalErrors  112 PortRcvSwitchRelayErrors
// 120 PortXmitDiscards  128 PortXmitConstraintErrors  136 PortRcvConstraintErrors
// 144 LocalLinkIntegrityErrors  152 ExcessiveBufferOverrunErrors
// 160 VL15Dropped  168 PortXmitWait  176 QP1Dropped
// All counters are 64 bits; the ones from byte 72 on are valid only when
// ClassPortInfo:CapabilityMask2 has kIsAdditionalPortCountersExtendedSupported.
// Data counters count 4-byte words.
#include <cstdint>
#include <span>

namespace ibfab::mad {

struct PortCountersExtended {
  static constexpr uint16_t kAttributeId = 0x001D;
  static constexpr std::size_t kSize = 184;

  uint8_t port_select = 0;
  uint16_t counter_select = 0;
  uint32_t counter_select2 = 0;
  uint64_t port_xmit_data = 0;
  uint64_t port_rcv_data = 0;
  uint64_t port_xmit_pkts = 0;
  uint64_t port_rcv_pkts = 0;
  uint64_t port_unicast_xmit_pkts = 0;
  uint64_t port_unicast_rcv_pkts = 0;
  uint64_t port_multicast_xmit_pkts = 0;
  uint64_t port_multicast_rcv_pkts = 0;
  uint64_t symbol_error_counter = 0;
  uint64_t link_error_recovery_counter = 0;
  uint64_t link_downed_counter = 0;
  uint64_t port_rcv_errors = 0;
  uint64_t port_rcv_remote_physical_errors = 0;
  uint64_t port_rcv_switch_relay_errors = 0;
  uint64_t port_xmit_discards = 0;
  uint64_t port_xmit_constraint_errors = 0;
  uint64_t port_rcv_constraint_errors = 0;
  uint64_t local_link_integrity_errors = 0;
  uint64_t excessive_buffer_overrun_errors = 0;
  uint64_t vl15_dropped = 0;
  uint64_t port_xmit_wait = 0;
  uint64_t qp1_dropped = 0;

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static PortCountersExtended unpack(std::span<const uint8_t> data);

  friend bool operator==(const PortCountersExtended&, const PortCountersExtended&) = default;
};

}  // namespace ibfab::mad
