#include "fabric/model/node.h"

#include "fabric/mad/smi.h"
#include "fabric/model/fabric.h"
#include "fabric/model/mad_packet.h"
#include "fabric/model/pma.h"
#include "fabric/model/sma.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/deth.h"
#include "fabric/wire/lrh.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::fabric {

using wire::load_be16;
using wire::load_be32;

namespace {
constexpr uint16_t kSmInfoAttribute = 0x0020;  // answered by an SM, not the SMA
}  // namespace

Node::Node(Fabric& fabric, uint32_t index, const topo::NodeDesc& d)
    : fabric_(&fabric),
      index_(index),
      type_(d.kind == topo::NodeKind::Switch ? NodeType::Switch : NodeType::Hca),
      name_(d.name),
      description_(d.description),
      guid_(d.node_guid),
      system_guid_(d.system_guid),
      vendor_id_(d.vendor_id),
      device_id_(d.device_id) {
  ports_.reserve(d.num_ports + 1u);
  for (unsigned n = 0; n <= d.num_ports; ++n) {
    const uint64_t g = is_switch() ? d.node_guid : (n < d.port_guids.size() ? d.port_guids[n] : 0);
    ports_.emplace_back(this, static_cast<uint8_t>(n), g);
  }
}

void Node::set_up(bool up) {
  if (up == up_) return;
  up_ = up;
  if (up) reset_configuration();
}

void Node::reset_configuration() {
  for (Port& p : ports_) {
    p.lid = 0;
    p.lmc = 0;
    p.master_sm_lid = 0;
    p.master_sm_sl = 0;
    p.gid_prefix = 0xfe80000000000000ull;
    p.m_key = 0;
    p.client_reregister = false;
    p.subnet_timeout = 0;
    p.set_state(PortState::Init);
    p.pkeys.assign(p.pkeys.size(), 0);
    if (!p.pkeys.empty()) p.pkeys[0] = 0xFFFF;
  }
}

bool Node::deliver_to_agents(Port& in, PacketRef& pkt, const MadPacketLayout& layout) {
  (void)pkt;
  (void)layout;
  in.counters.vl15_dropped++;
  return false;
}

void Node::receive_management(Port& in, PacketRef pkt, const MadPacketLayout& l) {
  Fabric& f = fabric();
  Port& mgmt = management_port(in);
  const uint8_t* b = pkt.bytes().data();
  const uint32_t dest_qp = load_be32(&b[l.bth + 4]) & 0xFFFFFF;
  const uint8_t mgmt_class = b[l.mad + 1];
  const sim::Time reply_at = f.sim().now() + f.options().management_delay;

  if (dest_qp == 0) {
    if (mgmt_class != wire::mgmt_class::kSubnLid && mgmt_class != wire::mgmt_class::kSubnDirected) {
      in.counters.vl15_dropped++;
      return;
    }
    if (!pkt.unique()) pkt = f.packets().clone(pkt);
    std::span<uint8_t> bytes = pkt.mutable_bytes();
    mad::SmpBuffer smp(bytes.data() + l.mad, 256);
    const bool directed = mgmt_class == wire::mgmt_class::kSubnDirected;
    if (directed) {
      const mad::SmiResult r = mad::smi_incoming(smp, is_switch(), num_ports(), in.number());
      if (r.action == mad::SmiAction::Discard) {
        in.counters.vl15_dropped++;
        return;
      }
      if (r.action == mad::SmiAction::Forward) {
        if (r.lid_routed) {
          const uint16_t dlid = r.lid == mad::kLidFromAddress ? load_be16(&b[wire::Lrh::kSlidOffset]) : r.lid;
          wire::store_be16(&bytes[wire::Lrh::kDlidOffset], dlid);
        }
        reseal(pkt);
        send_management(in, std::move(pkt), r.lid_routed ? 0 : r.port, f.sim().now());
        return;
      }
    }
    const uint8_t method = smp[3];
    const uint16_t attr = load_be16(&smp[16]);
    const bool for_sma = !(method & wire::mad_method::kResponseBit) &&
                         method != wire::mad_method::kTrap && method != wire::mad_method::kTrapRepress &&
                         attr != kSmInfoAttribute;
    if (method == wire::mad_method::kTrapRepress && is_switch()) return;  // the switch SMA's trap, repressed
    if (for_sma) {
      Sma(*this).answer(in, smp);
    } else if (deliver_to_agents(in, pkt, l) || !answer_unmatched(smp)) {
      return;
    }
    if (!directed) {
      smp[3] = wire::mad_method::kGetResp;
      turn_into_response(pkt, l, mgmt.lid, 0);
      send_management(in, std::move(pkt), 0, reply_at);
      return;
    }
    mad::smi_make_response(smp);
    const mad::SmiResult r = mad::smi_outgoing(smp, is_switch(), num_ports(),
                                               is_switch() ? 0 : in.number());
    if (r.action == mad::SmiAction::Discard) {
      in.counters.vl15_dropped++;
      return;
    }
    if (r.action == mad::SmiAction::Local) {  // a zero-hop SMP from this node
      reseal(pkt);
      loop_back(in, std::move(pkt), reply_at);
      return;
    }
    if (r.lid_routed) {
      // The response's first part is LID-routed back to DrSLID's side.
      const uint16_t dlid = r.lid == mad::kLidFromAddress ? load_be16(&b[wire::Lrh::kSlidOffset]) : r.lid;
      wire::store_be16(&bytes[wire::Lrh::kDlidOffset], dlid);
      wire::store_be16(&bytes[wire::Lrh::kSlidOffset], mgmt.lid ? mgmt.lid : wire::Lrh::kPermissiveLid);
    }
    reseal(pkt);
    send_management(in, std::move(pkt), r.lid_routed ? 0 : r.port, reply_at);
    return;
  }

  // QP1: general services. The receiver checks the P_Key and the QP1 Q_Key.
  const uint16_t pkey = load_be16(&b[l.bth + 2]);
  if (mgmt.match_pkey(pkey) < 0) {
    mgmt.p_key_violations++;
    in.counters.rcv_constraint_errors++;
    return;
  }
  if (load_be32(&b[l.deth]) != wire::Deth::kQp1QKey) {
    mgmt.q_key_violations++;
    in.counters.rcv_constraint_errors++;
    return;
  }
  const uint8_t method = b[l.mad + 3];
  if (mgmt_class == wire::mgmt_class::kPerfMgt && !(method & wire::mad_method::kResponseBit)) {
    if (!pkt.unique()) pkt = f.packets().clone(pkt);
    std::span<uint8_t> bytes = pkt.mutable_bytes();
    Pma(*this).answer(mgmt, bytes.subspan(l.mad, wire::kMadSize));
    turn_into_response(pkt, l, mgmt.lid, 1);
    send_management(in, std::move(pkt), 0, reply_at);
    return;
  }
  if (deliver_to_agents(in, pkt, l)) return;
  if (!pkt.unique()) pkt = f.packets().clone(pkt);
  std::span<uint8_t> bytes = pkt.mutable_bytes();
  if (answer_unmatched(bytes.subspan(l.mad, wire::kMadSize))) {
    turn_into_response(pkt, l, mgmt.lid, 1);
    send_management(in, std::move(pkt), 0, reply_at);
  }
}

bool Node::answer_unmatched(std::span<uint8_t> mad) {
  const uint8_t method = mad[3];
  if (method != wire::mad_method::kGet && method != wire::mad_method::kSet) return false;
  mad[3] = wire::mad_method::kGetResp;
  const uint16_t d_bit = mad[1] == wire::mgmt_class::kSubnDirected ? (load_be16(&mad[4]) & 0x8000) : 0;
  wire::store_be16(&mad[4], static_cast<uint16_t>(d_bit | wire::mad_status::kMethodAttrUnsupported));
  return true;
}

void Node::loop_back(Port& port, PacketRef pkt, sim::Time at) {
  fabric().sim().schedule_at(at, [this, p = &port, pk = std::move(pkt)]() mutable {
    if (up()) receive(*p, std::move(pk));
  });
}

}  // namespace ibfab::fabric
