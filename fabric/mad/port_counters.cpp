#include "fabric/mad/port_counters.h"

#include <cassert>

#include "fabric/mad/bit_field.h"
#include "fabric/mad/saturating.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

namespace {
constexpr uint64_t words_of(uint64_t bytes) { return bytes / 4 + (bytes % 4 != 0); }
}  // namespace

void PortCounters::count_xmit(uint64_t bytes, uint64_t packets) {
  add_saturating(port_xmit_data, words_of(bytes));
  add_saturating(port_xmit_pkts, packets);
}

void PortCounters::count_rcv(uint64_t bytes, uint64_t packets) {
  add_saturating(port_rcv_data, words_of(bytes));
  add_saturating(port_rcv_pkts, packets);
}

void PortCounters::add_local_link_integrity_errors(uint64_t n) {
  add_saturating(local_link_integrity_errors, n, 4);
}

void PortCounters::add_excessive_buffer_overrun_errors(uint64_t n) {
  add_saturating(excessive_buffer_overrun_errors, n, 4);
}

void PortCounters::clear_selected(uint16_t select, uint8_t select2) {
  namespace cs = counter_select;
  if (select & cs::kSymbolErrorCounter) symbol_error_counter = 0;
  if (select & cs::kLinkErrorRecoveryCounter) link_error_recovery_counter = 0;
  if (select & cs::kLinkDownedCounter) link_downed_counter = 0;
  if (select & cs::kPortRcvErrors) port_rcv_errors = 0;
  if (select & cs::kPortRcvRemotePhysicalErrors) port_rcv_remote_physical_errors = 0;
  if (select & cs::kPortRcvSwitchRelayErrors) port_rcv_switch_relay_errors = 0;
  if (select & cs::kPortXmitDiscards) port_xmit_discards = 0;
  if (select & cs::kPortXmitConstraintErrors) port_xmit_constraint_errors = 0;
  if (select & cs::kPortRcvConstraintErrors) port_rcv_constraint_errors = 0;
  if (select & cs::kLocalLinkIntegrityErrors) local_link_integrity_errors = 0;
  if (select & cs::kExcessiveBufferOverrunErrors) excessive_buffer_overrun_errors = 0;
  if (select & cs::kVL15Dropped) vl15_dropped = 0;
  if (select & cs::kPortXmitData) port_xmit_data = 0;
  if (select & cs::kPortRcvData) port_rcv_data = 0;
  if (select & cs::kPortXmitPkts) port_xmit_pkts = 0;
  if (select & cs::kPortRcvPkts) port_rcv_pkts = 0;
  if (select2 & counter_select2::kPortXmitWait) port_xmit_wait = 0;
  if (select2 & counter_select2::kQP1Dropped) qp1_dropped = 0;
}

void PortCounters::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u8(0);
  w.u8(port_select);
  w.u16(counter_select);
  w.u16(symbol_error_counter);
  w.u8(link_error_recovery_counter);
  w.u8(link_downed_counter);
  w.u16(port_rcv_errors);
  w.u16(port_rcv_remote_physical_errors);
  w.u16(port_rcv_switch_relay_errors);
  w.u16(port_xmit_discards);
  w.u8(port_xmit_constraint_errors);
  w.u8(port_rcv_constraint_errors);
  w.u8(counter_select2);
  w.u8(to_u8(put_bits(local_link_integrity_errors, 4, 4) |
             put_bits(excessive_buffer_overrun_errors, 4, 0)));
  w.u16(qp1_dropped);
  w.u16(vl15_dropped);
  w.u32(port_xmit_data);
  w.u32(port_rcv_data);
  w.u32(port_xmit_pkts);
  w.u32(port_rcv_pkts);
  w.u32(port_xmit_wait);
}

PortCounters PortCounters::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PortCounters c;
  r.skip(1);
  c.port_select = r.u8();
  c.counter_select = r.u16();
  c.symbol_error_counter = r.u16();
  c.link_error_recovery_counter = r.u8();
  c.link_downed_counter = r.u8();
  c.port_rcv_errors = r.u16();
  c.port_rcv_remote_physical_errors = r.u16();
  c.port_rcv_switch_relay_errors = r.u16();
  c.port_xmit_discards = r.u16();
  c.port_xmit_constraint_errors = r.u8();
  c.port_rcv_constraint_errors = r.u8();
  c.counter_select2 = r.u8();
  const uint8_t b = r.u8();
  c.local_link_integrity_errors = get_bits(b, 4, 4);
  c.excessive_buffer_overrun_errors = get_bits(b, 4, 0);
  c.qp1_dropped = r.u16();
  c.vl15_dropped = r.u16();
  c.port_xmit_data = r.u32();
  c.port_rcv_data = r.u32();
  c.port_xmit_pkts = r.u32();
  c.port_rcv_pkts = r.u32();
  c.port_xmit_wait = r.u32();
  return c;
}

}  // namespace ibfab::mad
