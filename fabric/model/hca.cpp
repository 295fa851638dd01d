#include "fabric/model/hca.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fabric/mad/pkey_table.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/smi.h"
#include "fabric/model/fabric.h"
#include "fabric/model/mad_packet.h"
#include "fabric/model/rc/connected_qp.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/lrh.h"
#include "fabric/wire/mad_header.h"
#include "fabric/wire/packet_codec.h"

namespace ibfab::fabric {

using wire::load_be16;
using wire::load_be32;

namespace {

bool takes_method(const std::array<uint64_t, 2>& m, uint8_t method) {
  return method < 128 && (m[method / 64] >> (method % 64) & 1) != 0;
}

// The BTH transport (opcode bits 7:5) of a connected QP's packets.
uint8_t wire_transport(Transport t) {
  switch (t) {
    case Transport::kRc: return wire::opcode::kRc;
    case Transport::kUc: return wire::opcode::kUc;
    default: return wire::opcode::kXrc;
  }
}

bool is_smp_class(uint8_t c) {
  return c == wire::mgmt_class::kSubnLid || c == wire::mgmt_class::kSubnDirected;
}

}  // namespace

const char* to_string(PortEvent e) {
  switch (e) {
    case PortEvent::Active: return "port-active";
    case PortEvent::Error: return "port-error";
    case PortEvent::LidChange: return "lid-change";
    case PortEvent::PkeyChange: return "pkey-change";
    case PortEvent::SmChange: return "sm-change";
    case PortEvent::ClientReregister: return "client-reregister";
  }
  return "?";
}

Hca::Hca(Fabric& fabric, uint32_t index, const topo::NodeDesc& desc) : Node(fabric, index, desc) {
  for (uint8_t n = 1; n <= num_ports(); ++n) {
    Port& p = ports_[n];
    p.pkeys.assign(fabric.options().hca_pkey_entries, 0);
    p.pkeys[0] = 0xFFFF;
    p.capability_mask = mad::port_cap::kIsTrapSupported | mad::port_cap::kIsSystemImageGUIDSupported |
                        mad::port_cap::kIsCommunicationManagementSupported |
                        mad::port_cap::kIsVendorClassSupported |
                        mad::port_cap::kIsClientReregistrationSupported |
                        mad::port_cap::kIsCapabilityMask2Supported | mad::port_cap::kIsExtendedSpeedsSupported;
  }
}

Hca::~Hca() = default;

void Hca::port_event(Port& port, PortEvent event) {
  for (PortEventListener* l : listeners_) l->on_port_event(*this, port.number(), event);
}

void Hca::remove_listener(PortEventListener* l) {
  listeners_.erase(std::remove(listeners_.begin(), listeners_.end(), l), listeners_.end());
}

void Hca::set_is_sm(uint8_t port, bool on) {
  Port& p = ports_[port];
  p.capability_mask = on ? p.capability_mask | mad::port_cap::kIsSM
                         : p.capability_mask & ~mad::port_cap::kIsSM;
}

// --- MAD agents ---

uint32_t Hca::register_agent(const AgentSpec& spec, MadAgent* agent) {
  if (spec.port == 0 || spec.port > num_ports() || agent == nullptr) return 0;
  for (const auto& [id, a] : agents_) {
    if (a.spec.port == spec.port && a.spec.mgmt_class == spec.mgmt_class &&
        a.spec.class_version == spec.class_version &&
        ((a.spec.methods[0] & spec.methods[0]) | (a.spec.methods[1] & spec.methods[1])) != 0)
      return 0;
  }
  const uint32_t id = next_agent_++;
  agents_.emplace(id, Agent{spec, agent});
  return id;
}

bool Hca::unregister_agent(uint32_t id) { return agents_.erase(id) != 0; }

bool Hca::send_mad(uint32_t agent_id, const MadAddress& to, std::span<const uint8_t> mad, bool keep_tid) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || mad.size() < wire::kMadSize) return false;
  Port& port = ports_[it->second.spec.port];
  uint8_t buf[wire::kMadSize];
  std::memcpy(buf, mad.data(), wire::kMadSize);
  if (!keep_tid && !(buf[3] & wire::mad_method::kResponseBit)) wire::store_be32(&buf[8], agent_id);
  const uint8_t mgmt_class = buf[1];
  MadSend s;
  s.slid = port.lid;
  s.dlid = to.lid;
  s.sl = to.sl;
  s.pkey = port.pkeys.empty() ? 0xFFFF : port.pkeys[to.pkey_index < port.pkeys.size() ? to.pkey_index : 0];
  s.dest_qp = to.qpn;
  uint8_t out_port = port.number();
  if (is_smp_class(mgmt_class)) {
    s.vl15 = true;
    s.dest_qp = 0;
    s.src_qp = 0;
    s.qkey = 0;
    if (mgmt_class == wire::mgmt_class::kSubnDirected) {
      mad::SmpBuffer smp(buf, wire::kMadSize);
      const mad::SmiResult r = mad::smi_outgoing(smp, false, num_ports(), port.number());
      if (r.action == mad::SmiAction::Discard) return false;
      if (r.action == mad::SmiAction::Local) {
        // A zero-hop SMP to ourselves: loop it back through the SMI.
        s.dlid = wire::Lrh::kPermissiveLid;
      } else if (!r.lid_routed) {
        s.dlid = wire::Lrh::kPermissiveLid;
        s.slid = wire::Lrh::kPermissiveLid;
      }
    }
  } else {
    s.src_qp = 1;
    s.qkey = to.qkey;
    s.grh = &to;
    s.sgid = {};
    wire::store_be64(s.sgid.data(), port.gid_prefix);
    wire::store_be64(s.sgid.data() + 8, port.guid());
  }
  PacketRef pkt = make_mad_packet(fabric().packets(), s, std::span<const uint8_t>(buf, wire::kMadSize));
  const bool zero_hop = mgmt_class == wire::mgmt_class::kSubnDirected && buf[7] == 0 &&
                        s.dlid == wire::Lrh::kPermissiveLid;
  if (zero_hop) {
    loop_back(port, std::move(pkt), fabric().sim().now());
    return true;
  }
  send_management(port, std::move(pkt), out_port, fabric().sim().now());
  return true;
}

void Hca::send_management(Port& in, PacketRef pkt, uint8_t out_port, sim::Time ready) {
  Port& out = out_port != 0 && out_port <= num_ports() ? ports_[out_port] : in;
  // A packet to this port's own LID never reaches the wire.
  if (out.owns_lid(wire::load_be16(&pkt.bytes()[wire::Lrh::kDlidOffset]))) {
    loop_back(out, std::move(pkt), ready);
    return;
  }
  fabric().transmit(out, std::move(pkt), ready);
}

bool Hca::deliver_to_agents(Port& in, PacketRef& pkt, const MadPacketLayout& l) {
  const std::span<const uint8_t> b = pkt.bytes();
  const std::span<const uint8_t> mad = b.subspan(l.mad, wire::kMadSize);
  const uint8_t mgmt_class = mad[1], version = mad[2], method = mad[3];
  const bool qp0 = (load_be32(&b[l.bth + 4]) & 0xFFFFFF) == 0;
  if (qp0 != is_smp_class(mgmt_class)) return false;  // SMP classes only on QP0
  MadAgent* target = nullptr;
  if (method & wire::mad_method::kResponseBit) {
    // Responses go to the agent whose id is in TID bits 63:32.
    auto it = agents_.find(load_be32(&mad[8]));
    if (it != agents_.end() && it->second.spec.port == in.number() &&
        it->second.spec.mgmt_class == mgmt_class)
      target = it->second.agent;
  } else {
    for (auto& [id, a] : agents_) {
      if (a.spec.port == in.number() && a.spec.mgmt_class == mgmt_class &&
          a.spec.class_version == version && takes_method(a.spec.methods, method)) {
        target = a.agent;
        break;
      }
    }
  }
  if (!target) {
    if (qp0) in.counters.vl15_dropped++;
    return false;
  }
  target->on_mad(in, mad_source(b, l), mad);
  return true;
}

// --- UD data path ---

uint32_t Hca::create_ud_qp(uint8_t port, uint32_t qkey, uint16_t pkey_index, UdEndpoint* endpoint,
                           bool block_self_loopback) {
  const uint32_t qpn = next_qpn_++;
  qps_.emplace(qpn, Qp{port, qkey, pkey_index, block_self_loopback, endpoint});
  return qpn;
}

void Hca::destroy_qp(uint32_t qpn) {
  if (connected_.erase(qpn) != 0) {
    own_rqs_.erase(qpn);
    if (auto s = qp_srq_.find(qpn); s != qp_srq_.end()) {
      if (auto srq = srqs_.find(s->second); srq != srqs_.end()) --srq->second->users;
      qp_srq_.erase(s);
    }
    return;
  }
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return;
  for (McastGroup& g : groups(it->second.port))
    g.qpns.erase(std::remove(g.qpns.begin(), g.qpns.end(), qpn), g.qpns.end());
  auto& gs = groups(it->second.port);
  gs.erase(std::remove_if(gs.begin(), gs.end(), [](const McastGroup& g) { return g.qpns.empty(); }),
           gs.end());
  qps_.erase(it);
}

void Hca::set_qkey(uint32_t qpn, uint32_t qkey) {
  if (auto it = qps_.find(qpn); it != qps_.end()) it->second.qkey = qkey;
}

void Hca::set_qp_port(uint32_t qpn, uint8_t port, uint16_t pkey_index) {
  auto it = qps_.find(qpn);
  if (it == qps_.end() || port < 1 || port > num_ports()) return;
  Qp& qp = it->second;
  qp.pkey_index = pkey_index;
  if (qp.port == port) return;
  std::vector<McastGroup> moved;
  for (const McastGroup& g : groups(qp.port))
    if (std::find(g.qpns.begin(), g.qpns.end(), qpn) != g.qpns.end()) moved.push_back(g);
  for (const McastGroup& g : moved) detach_mcast(qpn, g.mgid, g.mlid);
  qp.port = port;
  for (const McastGroup& g : moved) attach_mcast(qpn, g.mgid, g.mlid);
}

void Hca::set_endpoint(uint32_t qpn, UdEndpoint* endpoint) {
  if (auto it = qps_.find(qpn); it != qps_.end()) it->second.endpoint = endpoint;
}

uint8_t Hca::qp_port(uint32_t qpn) const {
  auto it = qps_.find(qpn);
  return it == qps_.end() ? 0 : it->second.port;
}

uint16_t Hca::qp_pkey_index(uint32_t qpn) const {
  auto it = qps_.find(qpn);
  return it == qps_.end() ? 0 : it->second.pkey_index;
}

int Hca::attach_mcast(uint32_t qpn, const std::array<uint8_t, 16>& mgid, uint16_t mlid) {
  auto it = qps_.find(qpn);
  if (it == qps_.end() || mgid[0] != 0xFF) return EINVAL;
  auto& gs = groups(it->second.port);
  auto g = std::find_if(gs.begin(), gs.end(),
                        [&](const McastGroup& x) { return x.mgid == mgid; });
  if (g == gs.end()) {
    if (gs.size() >= kMaxMcastGroups) return ENOMEM;
    gs.push_back(McastGroup{mgid, mlid, {}});
    g = gs.end() - 1;
  }
  if (std::find(g->qpns.begin(), g->qpns.end(), qpn) != g->qpns.end()) return 0;
  if (g->qpns.size() >= kMaxQpsPerMcastGroup) return ENOMEM;
  g->qpns.push_back(qpn);
  return 0;
}

bool Hca::attached(uint32_t qpn) const {
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return false;
  const auto& gs = groups_[it->second.port - 1u];
  return std::any_of(gs.begin(), gs.end(), [&](const McastGroup& g) {
    return std::find(g.qpns.begin(), g.qpns.end(), qpn) != g.qpns.end();
  });
}

// The group is found by its MGID alone, as the kernel finds it; the MLID
// is not compared.
int Hca::detach_mcast(uint32_t qpn, const std::array<uint8_t, 16>& mgid, uint16_t /*mlid*/) {
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return EINVAL;
  auto& gs = groups(it->second.port);
  auto g = std::find_if(gs.begin(), gs.end(),
                        [&](const McastGroup& x) { return x.mgid == mgid; });
  if (g == gs.end()) return EINVAL;
  auto q = std::find(g->qpns.begin(), g->qpns.end(), qpn);
  if (q == g->qpns.end()) return EINVAL;
  g->qpns.erase(q);
  if (g->qpns.empty()) gs.erase(g);
  return 0;
}

std::optional<sim::Time> Hca::send_ud(uint32_t qpn, const UdSend& s) {
  auto it = qps_.find(qpn);
  if (it == qps_.end()) return std::nullopt;
  const Qp& qp = it->second;
  Port& port = ports_[qp.port];
  if (port.state() != PortState::Active) return std::nullopt;
  wire::PacketSpec spec;
  spec.lrh.sl = s.sl;
  spec.lrh.dlid = s.dlid;
  spec.lrh.slid = static_cast<uint16_t>(port.lid | (s.src_path_bits & ((1u << port.lmc) - 1)));
  if (s.global) {
    wire::Grh g;
    g.tclass = s.traffic_class;
    g.flow_label = s.flow_label;
    g.hop_limit = s.hop_limit;
    g.sgid = wire::Gid::from(port.gid_prefix, port.guid());
    std::memcpy(g.dgid.raw.data(), s.dgid.data(), 16);
    spec.grh = g;
  }
  spec.bth.opcode = s.immediate ? wire::opcode::kUdSendOnlyWithImmediate : wire::opcode::kUdSendOnly;
  spec.bth.solicited_event = s.solicited;
  spec.bth.pkey = qp.pkey_index < port.pkeys.size() ? port.pkeys[qp.pkey_index] : 0xFFFF;
  spec.bth.dest_qp = s.dest_qp;
  spec.deth = wire::Deth{s.qkey, qpn};
  spec.immediate = s.immediate;
  spec.payload = s.payload;
  const std::size_t size = wire::packet_size(spec.grh.has_value(), wire::opcode_layout(spec.bth.opcode),
                                             s.payload.size());
  if (size > PacketPool::kMaxPacket) return std::nullopt;
  PacketRef pkt = fabric().packets().make(static_cast<uint32_t>(size));
  // The CRCs are computed only if the packet is ever observed (a capture).
  pkt.resize(static_cast<uint32_t>(wire::pack_packet_unsealed(pkt.mutable_bytes(), spec)));
  pkt.crcs_stale();
  const bool multicast = wire::is_multicast_lid(s.dlid);
  if (multicast || port.owns_lid(s.dlid)) {
    // Local loopback: multicast to the other QPs attached on this port,
    // unicast to a QP of our own; delivered in simulated time, off the wire.
    fabric().sim().schedule(sim::Time::zero(), [this, p = &port, pk = pkt, qpn]() {
      if (up()) receive_ud(*p, pk, true, qpn);
    });
    if (!multicast) return fabric().sim().now();
  }
  return fabric().transmit(port, std::move(pkt), fabric().sim().now());
}

void Hca::receive(Port& in, PacketRef pkt) {
  const std::span<const uint8_t> b = pkt.bytes();
  const uint16_t dlid = load_be16(&b[wire::Lrh::kDlidOffset]);
  const bool vl15 = (b[0] >> 4) == wire::Lrh::kVlManagement;
  const bool multicast = wire::is_multicast_lid(dlid);
  if (!multicast && !in.owns_lid(dlid) && dlid != wire::Lrh::kPermissiveLid) {
    in.counters.rcv_errors++;  // not addressed to this port
    return;
  }
  if (vl15 || (b.size() > 28 && !multicast)) {
    if (auto l = locate_mad(b)) {
      const uint32_t dest_qp = load_be32(&b[l->bth + 4]) & 0xFFFFFF;
      if (vl15 || dest_qp <= 1) {
        receive_management(in, std::move(pkt), *l);
        return;
      }
    } else if (vl15) {
      in.counters.vl15_dropped++;
      return;
    }
  }
  if (in.state() != PortState::Active && in.state() != PortState::Armed) {
    in.counters.rcv_errors++;
    return;
  }
  // The transport is in BTH.OpCode bits 7:5.
  const std::size_t bth = wire::Lrh::kSize + ((b[1] & 3) == wire::Lrh::kLnhIbaGlobal ? wire::Grh::kSize : 0);
  const uint8_t transport = b.size() > bth ? (b[bth] & wire::opcode::kTransportMask) : wire::opcode::kUd;
  if (transport == wire::opcode::kRc || transport == wire::opcode::kUc || transport == wire::opcode::kXrc) {
    receive_connected(in, pkt);
    return;
  }
  receive_ud(in, pkt, false, 0);
}

void Hca::receive_ud(Port& in, const PacketRef& pkt, bool loopback, uint32_t sender_qpn) {
  const wire::ParsedPacket p = wire::parse_packet(pkt.bytes(), /*check_crcs=*/false);
  if (!p.ok() || !p.deth) {
    in.counters.rcv_errors++;
    return;
  }
  const int pkey_index = in.match_pkey(p.bth.pkey);
  if (pkey_index < 0) {
    in.p_key_violations++;
    in.counters.rcv_constraint_errors++;
    return;
  }
  UdMessage msg;
  msg.port = in.number();
  msg.src_qp = p.deth->src_qp;
  msg.slid = p.lrh.slid;
  msg.sl = p.lrh.sl;
  msg.dlid_path_bits = static_cast<uint8_t>(p.lrh.dlid & ((1u << in.lmc) - 1));
  msg.pkey_index = static_cast<uint16_t>(pkey_index);
  msg.immediate = p.immediate;
  msg.solicited = p.bth.solicited_event;
  msg.payload = p.payload;
  if (p.grh) msg.grh = std::span<const uint8_t, 40>(pkt.bytes().data() + p.grh_offset, 40);
  if (wire::is_multicast_lid(p.lrh.dlid)) {
    msg.multicast = true;
    if (!p.grh || p.bth.dest_qp != wire::Bth::kMaxQpn) {
      in.counters.rcv_errors++;
      return;
    }
    const auto& gs = groups(in.number());
    auto g = std::find_if(gs.begin(), gs.end(), [&](const McastGroup& x) {
      return std::memcmp(x.mgid.data(), p.grh->dgid.raw.data(), 16) == 0;
    });
    if (g == gs.end()) {
      ud_stats_.not_attached++;
      return;
    }
    // A receiver may detach (and so edit the list) while we deliver: walk a
    // copy, kept in a buffer reused across packets.
    mcast_scratch_.assign(g->qpns.begin(), g->qpns.end());
    for (uint32_t qpn : mcast_scratch_) {
      auto q = qps_.find(qpn);
      if (q == qps_.end()) continue;
      if (loopback && qpn == sender_qpn && q->second.block_self_loopback) continue;
      deliver(q->second, qpn, p.bth.pkey, p.deth->qkey, msg);
    }
    return;
  }
  auto q = qps_.find(p.bth.dest_qp);
  if (q == qps_.end() || q->second.port != in.number()) {
    ud_stats_.no_qp++;
    return;
  }
  deliver(q->second, p.bth.dest_qp, p.bth.pkey, p.deth->qkey, msg);
}

bool Hca::deliver(const Qp& qp, uint32_t qpn, uint16_t pkey, uint32_t qkey, UdMessage& msg) {
  Port& port = ports_[qp.port];
  const uint16_t mine = qp.pkey_index < port.pkeys.size() ? port.pkeys[qp.pkey_index] : 0;
  if (!mad::PKeyTable::matches(mine, pkey)) {
    port.p_key_violations++;
    port.counters.rcv_constraint_errors++;
    return false;
  }
  msg.pkey_index = qp.pkey_index;
  if (qkey != qp.qkey) {
    port.q_key_violations++;
    port.counters.rcv_constraint_errors++;
    return false;
  }
  msg.dest_qp = qpn;
  if (!qp.endpoint || !qp.endpoint->on_receive(msg)) {
    ud_stats_.no_receive++;
    return false;
  }
  ud_stats_.delivered++;
  return true;
}

// --- Connected transports ---

uint32_t Hca::alloc_pd() {
  pds_.push_back(next_pd_);
  return next_pd_++;
}

int Hca::dealloc_pd(uint32_t pd) {
  auto it = std::find(pds_.begin(), pds_.end(), pd);
  if (it == pds_.end()) return EINVAL;
  for (const auto& [qpn, qp] : connected_)
    if (qp->pd() == pd) return EBUSY;
  for (const auto& [srqn, srq] : srqs_)
    if (srq->pd == pd) return EBUSY;
  pds_.erase(it);
  return 0;
}

uint32_t Hca::create_connected_qp(Transport t, uint32_t pd, const QpCaps& caps, uint32_t srqn, QpEndpoint* ep,
                                  bool sq_sig_all) {
  if (t == Transport::kXrcRecv || (t == Transport::kXrcSend && srqn != 0)) return 0;
  if (std::find(pds_.begin(), pds_.end(), pd) == pds_.end()) return 0;
  Srq* srq = nullptr;
  if (srqn != 0) {
    auto it = srqs_.find(srqn);
    if (it == srqs_.end() || it->second->xrcd != 0) return 0;
    srq = it->second.get();
  }
  const uint32_t qpn = next_qpn_++;
  ReceiveQueue* rq = nullptr;
  if (srq) {
    rq = &srq->rq;
    ++srq->users;
    qp_srq_.emplace(qpn, srqn);
  } else if (t != Transport::kXrcSend) {
    rq = own_rqs_.emplace(qpn, std::make_unique<ReceiveQueue>(std::max(caps.max_recv_wr, 1u), caps.max_recv_sge))
             .first->second.get();
  }
  connected_.emplace(qpn, std::make_unique<rc::ConnectedQp>(*this, qpn, t, pd, caps, sq_sig_all, rq, srq != nullptr,
                                                            srq ? srq->pd : pd, srq ? srq->ep : nullptr, ep));
  return qpn;
}

int Hca::modify_qp(uint32_t qpn, const QpAttr& attr, uint32_t mask) {
  auto it = connected_.find(qpn);
  return it == connected_.end() ? EINVAL : it->second->modify(attr, mask);
}

QpState Hca::qp_state(uint32_t qpn) const {
  auto it = connected_.find(qpn);
  return it == connected_.end() ? QpState::kReset : it->second->state();
}

int Hca::post_send(uint32_t qpn, const SendWr& wr) {
  auto it = connected_.find(qpn);
  return it == connected_.end() ? EINVAL : it->second->post_send(wr);
}

int Hca::post_recv(uint32_t qpn, const RecvWr& wr) {
  auto it = connected_.find(qpn);
  return it == connected_.end() ? EINVAL : it->second->post_recv(wr);
}

uint32_t Hca::create_srq(uint32_t pd, uint32_t depth, uint32_t max_sge, QpEndpoint* ep) {
  if (std::find(pds_.begin(), pds_.end(), pd) == pds_.end()) return 0;
  const uint32_t srqn = next_srqn_++;
  srqs_.emplace(srqn, std::make_unique<Srq>(Srq{pd, ReceiveQueue(std::max(depth, 1u), max_sge), ep}));
  return srqn;
}

// --- XRC ---

uint32_t Hca::alloc_xrcd() {
  xrcds_.push_back(next_xrcd_);
  return next_xrcd_++;
}

int Hca::dealloc_xrcd(uint32_t xrcd) {
  auto it = std::find(xrcds_.begin(), xrcds_.end(), xrcd);
  if (it == xrcds_.end()) return EINVAL;
  for (const auto& [srqn, srq] : srqs_)
    if (srq->xrcd == xrcd) return EBUSY;
  for (const auto& [qpn, qp] : connected_)
    if (qp->xrcd() == xrcd) return EBUSY;
  xrcds_.erase(it);
  return 0;
}

uint32_t Hca::create_xrc_srq(uint32_t xrcd, uint32_t pd, uint32_t depth, uint32_t max_sge, QpEndpoint* ep,
                             QpEndpoint* cq) {
  if (std::find(xrcds_.begin(), xrcds_.end(), xrcd) == xrcds_.end()) return 0;
  const uint32_t srqn = create_srq(pd, depth, max_sge, ep);
  if (srqn == 0) return 0;
  Srq& srq = *srqs_.at(srqn);
  srq.xrcd = xrcd;
  srq.cq = cq;
  return srqn;
}

uint32_t Hca::create_xrc_target_qp(uint32_t xrcd, QpEndpoint* ep) {
  if (std::find(xrcds_.begin(), xrcds_.end(), xrcd) == xrcds_.end()) return 0;
  const uint32_t qpn = next_qpn_++;
  auto qp = std::make_unique<rc::ConnectedQp>(*this, qpn, Transport::kXrcRecv, 0, QpCaps{0, 0, 0, 0, 0}, false,
                                              nullptr, true, 0, nullptr, ep);
  qp->set_xrcd(xrcd);
  connected_.emplace(qpn, std::move(qp));
  return qpn;
}

Hca::Srq* Hca::xrc_srq(uint32_t srqn, uint32_t xrcd) {
  auto it = srqs_.find(srqn);
  return it == srqs_.end() || it->second->xrcd == 0 || it->second->xrcd != xrcd ? nullptr : it->second.get();
}

int Hca::post_srq_recv(uint32_t srqn, const RecvWr& wr) {
  auto it = srqs_.find(srqn);
  return it == srqs_.end() ? EINVAL : it->second->rq.post(wr);
}

int Hca::arm_srq_limit(uint32_t srqn, uint32_t limit) {
  auto it = srqs_.find(srqn);
  return it == srqs_.end() ? EINVAL : it->second->rq.arm_limit(limit);
}

int Hca::destroy_srq(uint32_t srqn) {
  auto it = srqs_.find(srqn);
  if (it == srqs_.end()) return EINVAL;
  if (it->second->users != 0) return EBUSY;
  srqs_.erase(it);
  return 0;
}

sim::Time Hca::transmit_connected(Port& port, PacketRef pkt) {
  const sim::Time now = fabric().sim().now();
  if (port.owns_lid(load_be16(&pkt.bytes()[wire::Lrh::kDlidOffset]))) {
    // To a QP of this port: off the wire, in simulated time.
    if (port.state() != PortState::Active) return now;
    loop_back(port, std::move(pkt), now);
    return now;
  }
  return fabric().transmit(port, std::move(pkt), now);
}

void Hca::receive_connected(Port& in, const PacketRef& pkt) {
  const wire::ParsedPacket p = wire::parse_packet(pkt.bytes(), /*check_crcs=*/false);
  if (!p.ok()) {
    in.counters.rcv_errors++;
    return;
  }
  auto it = connected_.find(p.bth.dest_qp);
  if (it == connected_.end() || it->second->port_number() != in.number() ||
      wire_transport(it->second->transport()) != (p.bth.opcode & wire::opcode::kTransportMask)) {
    connected_stats_.no_qp++;
    return;
  }
  rc::ConnectedQp& qp = *it->second;
  // IBTA 9.6.1.1: the packet's P_Key must match the QP's.
  const uint16_t pkey_index = qp.attr().pkey_index;
  const uint16_t mine = pkey_index < in.pkeys.size() ? in.pkeys[pkey_index] : 0;
  if (!mad::PKeyTable::matches(mine, p.bth.pkey)) {
    in.p_key_violations++;
    in.counters.rcv_constraint_errors++;
    return;
  }
  qp.receive(p);
}

}  // namespace ibfab::fabric
