#include "fabric/model/pma.h"

#include <algorithm>

#include "fabric/mad/class_port_info.h"
#include "fabric/mad/pma.h"
#include "fabric/mad/port_counters.h"
#include "fabric/mad/port_counters_extended.h"
#include "fabric/mad/saturating.h"
#include "fabric/model/node.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::fabric {
namespace {

namespace st = wire::mad_status;
namespace cs = mad::counter_select;

constexpr uint16_t kPmaCapabilities = mad::pma_cap::kAllPortSelect |
                                      mad::pma_cap::kIsExtendedWidthSupported |
                                      mad::pma_cap::kIsPortCountersXmitWaitSupported;

// Zeroes the counters of `c` that `select` names (PortCounters bits).
void clear(PortCounters& c, uint16_t select, bool xmit_wait) {
  if (select & cs::kSymbolErrorCounter) c.symbol_errors = 0;
  if (select & cs::kLinkErrorRecoveryCounter) c.link_error_recovery = 0;
  if (select & cs::kLinkDownedCounter) c.link_downed = 0;
  if (select & cs::kPortRcvErrors) c.rcv_errors = 0;
  if (select & cs::kPortRcvSwitchRelayErrors) c.rcv_switch_relay_errors = 0;
  if (select & cs::kPortXmitDiscards) c.xmit_discards = 0;
  if (select & cs::kPortRcvConstraintErrors) c.rcv_constraint_errors = 0;
  if (select & cs::kVL15Dropped) c.vl15_dropped = 0;
  if (select & cs::kPortXmitData) c.xmit_data = 0;
  if (select & cs::kPortRcvData) c.rcv_data = 0;
  if (select & cs::kPortXmitPkts) c.xmit_pkts = 0;
  if (select & cs::kPortRcvPkts) c.rcv_pkts = 0;
  if (xmit_wait) c.xmit_wait = 0;
}

void add(PortCounters& sum, const PortCounters& c) {
  sum.xmit_data += c.xmit_data;
  sum.rcv_data += c.rcv_data;
  sum.xmit_pkts += c.xmit_pkts;
  sum.rcv_pkts += c.rcv_pkts;
  sum.unicast_xmit_pkts += c.unicast_xmit_pkts;
  sum.unicast_rcv_pkts += c.unicast_rcv_pkts;
  sum.multicast_xmit_pkts += c.multicast_xmit_pkts;
  sum.multicast_rcv_pkts += c.multicast_rcv_pkts;
  sum.xmit_discards += c.xmit_discards;
  sum.xmit_wait += c.xmit_wait;
  sum.rcv_errors += c.rcv_errors;
  sum.rcv_switch_relay_errors += c.rcv_switch_relay_errors;
  sum.rcv_constraint_errors += c.rcv_constraint_errors;
  sum.link_downed += c.link_downed;
  sum.vl15_dropped += c.vl15_dropped;
  sum.symbol_errors += c.symbol_errors;
  sum.link_error_recovery += c.link_error_recovery;
}

}  // namespace

template <class F>
bool Pma::for_selected(Port& mgmt, uint8_t select, F&& f) {
  if (select == mad::kAllPortsSelect) {
    for (uint8_t n = 1; n <= node_.num_ports(); ++n) f(node_.port(n));
    return true;
  }
  if (select > node_.num_ports()) return false;
  // A CA's PortSelect 0 means the port the MAD arrived on.
  f(select == 0 && !node_.is_switch() ? mgmt : node_.port(select));
  return true;
}

void Pma::answer(Port& mgmt, std::span<uint8_t> mad) {
  uint8_t* data = mad.data() + mad::kPmaDataOffset;
  const uint8_t method = mad[3];
  const uint16_t attr = wire::load_be16(&mad[16]);
  const bool set = method == wire::mad_method::kSet;
  uint16_t status = st::kOk;
  if (mad[0] != 1 || mad[2] != 1) {
    status = st::kBadVersion;
  } else if (method != wire::mad_method::kGet && !set) {
    status = st::kMethodUnsupported;
  } else if (attr == mad::ClassPortInfo::kAttributeId) {
    if (set) {
      status = st::kMethodAttrUnsupported;
    } else {
      mad::ClassPortInfo cpi;
      cpi.base_version = 1;
      cpi.class_version = 1;
      cpi.capability_mask = kPmaCapabilities;
      cpi.resp_time_value = 18;
      cpi.pack(std::span<uint8_t>(data, mad::kPmaDataSize));
    }
  } else if (attr == mad::PortCounters::kAttributeId) {
    status = port_counters(mgmt, set, data);
  } else if (attr == mad::PortCountersExtended::kAttributeId) {
    status = port_counters_ext(mgmt, set, data);
  } else {
    status = st::kMethodAttrUnsupported;
  }
  mad[3] = wire::mad_method::kGetResp;
  wire::store_be16(&mad[4], status);
}

uint16_t Pma::port_counters(Port& mgmt, bool set, uint8_t* data) {
  const auto req = mad::PortCounters::unpack(std::span<const uint8_t>(data, mad::kPmaDataSize));
  PortCounters sum;
  const bool ok = for_selected(mgmt, req.port_select, [&](Port& p) {
    if (set) clear(p.counters, req.counter_select, req.counter_select2 & mad::counter_select2::kPortXmitWait);
    add(sum, p.counters);
  });
  if (!ok) return st::kInvalidAttrValue;
  mad::PortCounters pc;
  pc.port_select = req.port_select;
  pc.counter_select = req.counter_select;
  using mad::add_saturating;
  add_saturating(pc.symbol_error_counter, sum.symbol_errors);
  add_saturating(pc.link_error_recovery_counter, sum.link_error_recovery);
  add_saturating(pc.link_downed_counter, sum.link_downed);
  add_saturating(pc.port_rcv_errors, sum.rcv_errors);
  add_saturating(pc.port_rcv_switch_relay_errors, sum.rcv_switch_relay_errors);
  add_saturating(pc.port_xmit_discards, sum.xmit_discards);
  add_saturating(pc.port_rcv_constraint_errors, sum.rcv_constraint_errors);
  add_saturating(pc.vl15_dropped, sum.vl15_dropped);
  add_saturating(pc.port_xmit_data, sum.xmit_data);
  add_saturating(pc.port_rcv_data, sum.rcv_data);
  add_saturating(pc.port_xmit_pkts, sum.xmit_pkts);
  add_saturating(pc.port_rcv_pkts, sum.rcv_pkts);
  add_saturating(pc.port_xmit_wait, sum.xmit_wait);
  std::fill(data, data + mad::kPmaDataSize, 0);
  pc.pack(std::span<uint8_t>(data, mad::kPmaDataSize));
  return st::kOk;
}

uint16_t Pma::port_counters_ext(Port& mgmt, bool set, uint8_t* data) {
  const auto req = mad::PortCountersExtended::unpack(std::span<const uint8_t>(data, mad::kPmaDataSize));
  PortCounters sum;
  // PortCountersExtended CounterSelect: bits 0-7 name XmitData, RcvData,
  // XmitPkts, RcvPkts, Unicast Xmit/Rcv, Multicast Xmit/Rcv.
  const bool ok = for_selected(mgmt, req.port_select, [&](Port& p) {
    if (set) {
      const uint16_t s = req.counter_select;
      if (s & 0x01) p.counters.xmit_data = 0;
      if (s & 0x02) p.counters.rcv_data = 0;
      if (s & 0x04) p.counters.xmit_pkts = 0;
      if (s & 0x08) p.counters.rcv_pkts = 0;
      if (s & 0x10) p.counters.unicast_xmit_pkts = 0;
      if (s & 0x20) p.counters.unicast_rcv_pkts = 0;
      if (s & 0x40) p.counters.multicast_xmit_pkts = 0;
      if (s & 0x80) p.counters.multicast_rcv_pkts = 0;
    }
    add(sum, p.counters);
  });
  if (!ok) return st::kInvalidAttrValue;
  mad::PortCountersExtended e;
  e.port_select = req.port_select;
  e.counter_select = req.counter_select;
  e.port_xmit_data = sum.xmit_data;
  e.port_rcv_data = sum.rcv_data;
  e.port_xmit_pkts = sum.xmit_pkts;
  e.port_rcv_pkts = sum.rcv_pkts;
  e.port_unicast_xmit_pkts = sum.unicast_xmit_pkts;
  e.port_unicast_rcv_pkts = sum.unicast_rcv_pkts;
  e.port_multicast_xmit_pkts = sum.multicast_xmit_pkts;
  e.port_multicast_rcv_pkts = sum.multicast_rcv_pkts;
  std::fill(data, data + mad::kPmaDataSize, 0);
  e.pack(std::span<uint8_t>(data, mad::kPmaDataSize));
  return st::kOk;
}

}  // namespace ibfab::fabric
