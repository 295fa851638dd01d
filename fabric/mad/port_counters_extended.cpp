#include "fabric/mad/port_counters_extended.h"

#include <array>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

namespace {

// The 64-bit counters in wire order, from byte 8.
constexpr std::array kCounters = {
    &PortCountersExtended::port_xmit_data,
    &PortCountersExtended::port_rcv_data,
    &PortCountersExtended::port_xmit_pkts,
    &PortCountersExtended::port_rcv_pkts,
    &PortCountersExtended::port_unicast_xmit_pkts,
    &PortCountersExtended::port_unicast_rcv_pkts,
    &PortCountersExtended::port_multicast_xmit_pkts,
    &PortCountersExtended::port_multicast_rcv_pkts,
    &PortCountersExtended::symbol_error_counter,
    &PortCountersExtended::link_error_recovery_counter,
    &PortCountersExtended::link_downed_counter,
    &PortCountersExtended::port_rcv_errors,
    &PortCountersExtended::port_rcv_remote_physical_errors,
    &PortCountersExtended::port_rcv_switch_relay_errors,
    &PortCountersExtended::port_xmit_discards,
    &PortCountersExtended::port_xmit_constraint_errors,
    &PortCountersExtended::port_rcv_constraint_errors,
    &PortCountersExtended::local_link_integrity_errors,
    &PortCountersExtended::excessive_buffer_overrun_errors,
    &PortCountersExtended::vl15_dropped,
    &PortCountersExtended::port_xmit_wait,
    &PortCountersExtended::qp1_dropped,
};
static_assert(8 + 8 * kCounters.size() == PortCountersExtended::kSize);

}  // namespace

void PortCountersExtended::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u8(0);
  w.u8(port_select);
  w.u16(counter_select);
  w.u32(counter_select2);
  for (auto field : kCounters) w.u64(this->*field);
}

PortCountersExtended PortCountersExtended::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  PortCountersExtended c;
  r.skip(1);
  c.port_select = r.u8();
  c.counter_select = r.u16();
  c.counter_select2 = r.u32();
  for (auto field : kCounters) c.*field = r.u64();
  return c;
}

}  // namespace ibfab::mad
