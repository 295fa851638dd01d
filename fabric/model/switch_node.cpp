#include "fabric/model/switch_node.h"

#include <algorithm>
#include <array>
#include <bit>

#include "fabric/model/fabric.h"
#include "fabric/mad/notice.h"
#include "fabric/mad/port_info.h"
#include "fabric/wire/smp.h"
#include "fabric/model/mad_packet.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/lrh.h"

namespace ibfab::fabric {

Switch::Switch(Fabric& fabric, uint32_t index, const topo::NodeDesc& desc)
    : Node(fabric, index, desc),
      mft_cap_(fabric.options().multicast_fdb_cap),
      positions_(static_cast<uint8_t>(desc.num_ports / 16 + 1)) {
  // Port 0 carries the switch's P_Key table; external ports' tables are
  // used only for partition enforcement, which is off.
  ports_[0].pkeys.assign(fabric.options().switch_pkey_entries, 0);
  ports_[0].pkeys[0] = 0xFFFF;
  // The extended speed fields (FDR and up) are valid on every port, and
  // SwitchInfo:MulticastFDBTop bounds the MFT (it starts at 0xBFFF, empty):
  // an SM keeps it up to date only when port 0 says so (OpenSM's use_mfttop).
  ports_[0].capability_mask =
      mad::port_cap::kIsExtendedSpeedsSupported | mad::port_cap::kIsMulticastFDBTopSupported;
}

void Switch::reset_configuration() {
  Node::reset_configuration();
  lft_.clear();
  mft_.clear();
  lft_top = 0;
  mft_top = 0xBFFF;
  port_state_change = false;
}

void Switch::note_port_state_change() {
  const bool was_set = port_state_change;
  port_state_change = true;
  Port& mgmt = ports_[0];
  if (was_set || mgmt.lid == 0 || mgmt.master_sm_lid == 0 || !fabric().options().switch_traps) return;
  std::array<uint8_t, wire::kMadSize> mad{};
  mad[0] = 1;  // BaseVersion
  mad[1] = wire::mgmt_class::kSubnLid;
  mad[2] = 1;  // ClassVersion
  mad[3] = wire::mad_method::kTrap;
  wire::store_be64(&mad[8], ++traps_sent);  // TID
  wire::store_be16(&mad[16], mad::Notice::kAttributeId);
  mad::Notice n;
  n.is_generic = true;
  n.type = mad::notice_type::kUrgent;
  n.producer_type = mad::producer_type::kSwitch;
  n.trap_number = mad::trap_number::kLinkStateChanged;
  n.issuer_lid = mgmt.lid;
  wire::store_be16(n.data_details.data(), mgmt.lid);  // LIDADDR: the switch
  wire::store_be64(&n.issuer_gid[0], mgmt.gid_prefix);
  wire::store_be64(&n.issuer_gid[8], mgmt.guid());
  n.pack(std::span<uint8_t>(mad).subspan(wire::SmpLayout::kDataOffset));
  MadSend send;
  send.slid = mgmt.lid;
  send.dlid = mgmt.master_sm_lid;
  send.vl15 = true;
  send_management(mgmt, make_mad_packet(fabric().packets(), send, mad),
                  0, fabric().sim().now() + fabric().options().management_delay);
}

void Switch::set_lft(uint16_t lid, uint8_t port) {
  if (lid >= kLinearFdbCap) return;
  if (lid >= lft_.size()) lft_.resize((lid / 64 + 1) * 64u, kNoRoute);
  lft_[lid] = port;
}

void Switch::set_lft_block(uint16_t first, std::span<const uint8_t, 64> ports) {
  if (first >= kLinearFdbCap) return;
  if (first + ports.size() > lft_.size()) lft_.resize(first + ports.size(), kNoRoute);
  std::copy(ports.begin(), ports.end(), lft_.begin() + first);
}

void Switch::lft_block(uint16_t first, std::span<uint8_t, 64> ports) const {
  const std::size_t have = first < lft_.size() ? std::min(lft_.size() - first, ports.size()) : 0;
  std::copy_n(lft_.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(first, lft_.size())), have, ports.begin());
  std::fill(ports.begin() + static_cast<std::ptrdiff_t>(have), ports.end(), kNoRoute);
}

uint16_t Switch::mft(uint16_t mlid, uint8_t position) const {
  const std::size_t i = static_cast<std::size_t>(mlid - wire::Lrh::kMulticastLidBase) * positions_ + position;
  return mlid >= wire::Lrh::kMulticastLidBase && position < positions_ && i < mft_.size() ? mft_[i] : 0;
}

void Switch::set_mft(uint16_t mlid, uint8_t position, uint16_t mask) {
  if (mlid < wire::Lrh::kMulticastLidBase || position >= positions_) return;
  const std::size_t entry = mlid - wire::Lrh::kMulticastLidBase;
  if (entry >= mft_cap_) return;
  const std::size_t i = entry * positions_ + position;
  if (i >= mft_.size()) mft_.resize((entry / 32 + 1) * 32u * positions_, 0);
  mft_[i] = mask;
}

void Switch::receive(Port& in, PacketRef pkt) {
  const uint8_t* b = pkt.bytes().data();
  const uint16_t dlid = wire::load_be16(&b[wire::Lrh::kDlidOffset]);
  const bool vl15 = (b[0] >> 4) == wire::Lrh::kVlManagement;
  Port& mgmt = ports_[0];
  if (vl15 ? dlid == wire::Lrh::kPermissiveLid || mgmt.owns_lid(dlid) : mgmt.owns_lid(dlid)) {
    if (auto layout = locate_mad(pkt.bytes())) {
      receive_management(in, std::move(pkt), *layout);
    } else {
      in.counters.rcv_errors++;
    }
    return;
  }
  const sim::Time ready = fabric().sim().now() + fabric().options().switch_latency;
  if (wire::is_multicast_lid(dlid)) {
    forward_multicast(in, pkt, dlid, ready);
  } else if (dlid == wire::Lrh::kPermissiveLid) {
    in.counters.rcv_switch_relay_errors++;
  } else {
    forward_unicast(in, std::move(pkt), dlid, ready);
  }
}

void Switch::forward_unicast(Port& in, PacketRef pkt, uint16_t dlid, sim::Time ready) {
  const uint8_t out = lft(dlid);
  if (out == 0 || out > num_ports()) {
    // No route (0xFF), or a route to port 0 for a LID port 0 does not own.
    in.counters.rcv_switch_relay_errors++;
    fabric().count_drop(DropReason::NoRoute);
    return;
  }
  fabric().transmit(ports_[out], std::move(pkt), ready);
}

void Switch::forward_multicast(Port& in, const PacketRef& pkt, uint16_t mlid, sim::Time ready) {
  const std::size_t entry = mlid - wire::Lrh::kMulticastLidBase;
  const std::size_t base = entry * positions_;
  bool listed = false;  // the MLID has an MFT entry at all
  if (base < mft_.size()) {
    for (uint8_t pos = 0; pos < positions_; ++pos) {
      uint32_t mask = mft_[base + pos];
      listed = listed || mask != 0;
      while (mask) {
        const unsigned bit = static_cast<unsigned>(std::countr_zero(mask));
        mask &= mask - 1;
        const unsigned port = pos * 16u + bit;
        // Never back out of the ingress port; port 0 (the switch itself as a
        // member) has no multicast consumer here.
        if (port == in.number() || port == 0 || port > num_ports()) continue;
        fabric().transmit(ports_[port], pkt, ready);  // shares the payload
      }
    }
  }
  if (!listed) {
    in.counters.rcv_switch_relay_errors++;
    fabric().count_drop(DropReason::NoRoute);
  }
}

void Switch::send_management(Port& in, PacketRef pkt, uint8_t out_port, sim::Time ready) {
  (void)in;
  if (out_port != 0) {
    if (out_port <= num_ports()) fabric().transmit(ports_[out_port], std::move(pkt), ready);
    return;
  }
  const uint16_t dlid = wire::load_be16(&pkt.bytes()[wire::Lrh::kDlidOffset]);
  forward_unicast(ports_[0], std::move(pkt), dlid, ready);
}

}  // namespace ibfab::fabric
