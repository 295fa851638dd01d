#pragma once
// PortCounters (PerfMgt attribute 0x0012, IBTA 1.3 vol 1, 16.1.3.5): 44
// bytes at the start of the PMA data area (byte 64 of the MAD, see pma.h).
//
//   0 reserved  1 PortSelect  2 CounterSelect
//   4 SymbolErrorCounter(16)  6 LinkErrorRecoveryCounter(8)  7 LinkDownedCounter(8)
//   8 PortRcvErrors(16)  10 PortRcvRemotePhysicalErrors(16)
//  12 PortRcvSwitchRelayErrors(16)  14 PortXmitDiscards(16)
//  16 PortXmitConstraintErrors(8)  17 PortRcvConstraintErrors(8)
//  18 CounterSelect2(8)  19 LocalLinkIntegrityErrors 7:4 | ExcessiveBufferOverrunErrors 3:0
//  20 QP1Dropped(16)  22 VL15Dropped(16)
//  24 PortXmitData(32)  28 PortRcvData(32)  32 PortXmitPkts(32)
//  36 PortRcvPkts(32)  40 PortXmitWait(32)
// PortXmitData and PortRcvData count 4-byte words. Every counter saturates.
#include <cstdint>
#include <span>

namespace ibfab::mad {

// CounterSelect bits: in a Set, the counters to reset to zero.
namespace counter_select {
inline constexpr uint16_t kSymbolErrorCounter = 1u << 0;
inline constexpr uint16_t kLinkErrorRecoveryCounter = 1u << 1;
inline constexpr uint16_t kLinkDownedCounter = 1u << 2;
inline constexpr uint16_t kPortRcvErrors = 1u << 3;
inline constexpr uint16_t kPortRcvRemotePhysicalErrors = 1u << 4;
inline constexpr uint16_t kPortRcvSwitchRelayErrors = 1u << 5;
inline constexpr uint16_t kPortXmitDiscards = 1u << 6;
inline constexpr uint16_t kPortXmitConstraintErrors = 1u << 7;
inline constexpr uint16_t kPortRcvConstraintErrors = 1u << 8;
inline constexpr uint16_t kLocalLinkIntegrityErrors = 1u << 9;
inline constexpr uint16_t kExcessiveBufferOverrunErrors = 1u << 10;
inline constexpr uint16_t kVL15Dropped = 1u << 11;
inline constexpr uint16_t kPortXmitData = 1u << 12;
inline constexpr uint16_t kPortRcvData = 1u << 13;
inline constexpr uint16_t kPortXmitPkts = 1u << 14;
inline constexpr uint16_t kPortRcvPkts = 1u << 15;
}  // namespace counter_select

// CounterSelect2 bits.
namespace counter_select2 {
inline constexpr uint8_t kPortXmitWait = 1u << 0;
inline constexpr uint8_t kQP1Dropped = 1u << 1;
}  // namespace counter_select2

struct PortCounters {
  static constexpr uint16_t kAttributeId = 0x0012;
  static constexpr std::size_t kSize = 44;

  uint8_t port_select = 0;
  uint16_t counter_select = 0;
  uint16_t symbol_error_counter = 0;
  uint8_t link_error_recovery_counter = 0;
  uint8_t link_downed_counter = 0;
  uint16_t port_rcv_errors = 0;
  uint16_t port_rcv_remote_physical_errors = 0;
  uint16_t port_rcv_switch_relay_errors = 0;
  uint16_t port_xmit_discards = 0;
  uint8_t port_xmit_constraint_errors = 0;
  uint8_t port_rcv_constraint_errors = 0;
  uint8_t counter_select2 = 0;
  uint8_t local_link_integrity_errors = 0;      // 4 bits
  uint8_t excessive_buffer_overrun_errors = 0;  // 4 bits
  uint16_t qp1_dropped = 0;
  uint16_t vl15_dropped = 0;
  uint32_t port_xmit_data = 0;  // 4-byte words
  uint32_t port_rcv_data = 0;   // 4-byte words
  uint32_t port_xmit_pkts = 0;
  uint32_t port_rcv_pkts = 0;
  uint32_t port_xmit_wait = 0;

  // Saturating updates, each at its field's IBTA width.
  void count_xmit(uint64_t bytes, uint64_t packets = 1);  // data in words, rounded up
  void count_rcv(uint64_t bytes, uint64_t packets = 1);
  void add_local_link_integrity_errors(uint64_t n);
  void add_excessive_buffer_overrun_errors(uint64_t n);

  // Zeroes the counters whose bits are set (the effect of a PMA Set).
  void clear_selected(uint16_t select, uint8_t select2);

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static PortCounters unpack(std::span<const uint8_t> data);

  friend bool operator==(const PortCounters&, const PortCounters&) = default;
};

}  // namespace ibfab::mad
