#include "api/server/kernel/ib_cm_connection.h"

#include <algorithm>

#include "fabric/wire/byte_cursor.h"
#include "sim/rng.h"

namespace ibfab::api {

sim::Time cm_time(uint8_t iba_time) { return sim::Time::ms(int64_t{1} << std::max(int{iba_time} - 8, 0)); }

uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time) {
  int ack = packet_life_time + 1;
  if (ack >= ca_ack_delay) ack += (ca_ack_delay >= ack - 1);
  else ack = ca_ack_delay + (ack >= ca_ack_delay - 1);
  return static_cast<uint8_t>(std::min(31, ack));
}

namespace {

template <std::size_t N>
void copy_in(std::array<uint8_t, N>& to, std::span<const uint8_t> from) {
  std::copy_n(from.begin(), std::min(from.size(), N), to.begin());
}

// The QP a REP names: an XRC target's in LocalEECN, any other in LocalQPN
// (cm.c's cm_rep_get_qpn).
uint32_t rep_qpn(const mad::CmRep& rep, bool xrc) { return xrc ? rep.local_eecn : rep.local_qpn; }

}  // namespace

struct CmConnections::Conn {
  fabric::Hca* hca = nullptr;
  uint8_t port = 0;
  fabric::MadAddress peer;
  CmState state = CmState::kIdle;
  CmId local_id = 0;
  CmId remote_id = 0;
  uint64_t remote_ca_guid = 0;
  uint32_t remote_qpn = 0;
  uint32_t local_qpn = 0;
  bool xrc = false;             // an XRC connection: the REP names the target QP by its LocalEECN
  CmConnectionUser* user = nullptr;
  uint64_t context = 0;
  uint64_t tid = 0;             // the handshake's (the REQ's)
  sim::Time timeout;            // this side's wait for an answer (cm.c's timeout_ms)
  sim::Time try_time;           // the request's current wait: timeout, or an MRA's
  uint8_t max_retries = 0;
  uint8_t av_timeout = 0;       // the path's ACK timeout exponent: TIMEWAIT's length
  uint8_t packet_life_time = 0;
  bool destroyed = false;       // no user any more: leaves at TIMEWAIT's end
  bool indexed = false;         // in by_remote_id_ / by_remote_qpn_
  // The request awaiting its answer.
  mad::CmMad request{};
  CmTimedOut request_kind = CmTimedOut::kReq;
  unsigned tries = 0;
  sim::EventHandle timer;
  // The last response, for repeats (MRA, RTU, DREP).
  mad::CmMad response{};
};

CmConnections::CmConnections(sim::Simulator& sim, CmSender& sender) : sim_(sim), sender_(sender) {}

CmConnections::~CmConnections() {
  for (auto& [key, c] : conns_) sim_.cancel(c->timer);
}

bool CmConnections::listen(uint64_t service_id, CmConnectionUser& user, uint64_t context) {
  return listeners_.emplace(service_id, Listener{&user, context}).second;
}

void CmConnections::unlisten(uint64_t service_id) { listeners_.erase(service_id); }

CmConnections::Conn* CmConnections::find(const fabric::Hca& hca, CmId id) const {
  auto it = conns_.find({hca.index(), id});
  return it == conns_.end() || it->second->destroyed ? nullptr : it->second.get();
}

CmConnections::Conn* CmConnections::find(const fabric::Hca& hca, CmId local, CmId remote) const {
  auto it = conns_.find({hca.index(), local});
  if (it == conns_.end()) return nullptr;
  Conn* c = it->second.get();
  return remote == 0 || c->remote_id == 0 || c->remote_id == remote ? c : nullptr;
}

CmState CmConnections::state(const fabric::Hca& hca, CmId id) const {
  const Conn* c = find(hca, id);
  return c ? c->state : CmState::kIdle;
}

// cm.c: a cyclic counter XORed with an operand drawn once.
CmId CmConnections::allocate_id(const fabric::Hca& hca) {
  const uint32_t operand = static_cast<uint32_t>(sim::mix64(hca.guid(), 0x636d'6964));
  uint32_t& next = next_id_[hca.index()];
  while (conns_.contains({hca.index(), next ^ operand})) ++next;
  return next++ ^ operand;
}

void CmConnections::set_context(fabric::Hca& hca, CmId id, uint64_t context) {
  if (Conn* c = find(hca, id)) c->context = context;
}

// --- Requests and their retries ----------------------------------------------

void CmConnections::send_request(Conn& c, const mad::CmMad& mad, CmTimedOut kind) {
  sim_.cancel(c.timer);
  c.request = mad;
  c.request_kind = kind;
  c.tries = 0;
  c.try_time = c.timeout;
  sender_.send_cm(*c.hca, c.port, c.peer, c.request);
  arm(c);
}

void CmConnections::arm(Conn& c) {
  c.timer = sim_.schedule(c.try_time, [this, &c] { on_request_timeout(c); });
}

void CmConnections::on_request_timeout(Conn& c) {
  if (++c.tries <= c.max_retries) {
    sender_.send_cm(*c.hca, c.port, c.peer, c.request);
    return arm(c);
  }
  const CmTimedOut kind = c.request_kind;
  if (kind == CmTimedOut::kDreq) to_timewait(c);
  else to_idle(c);
  if (!c.destroyed) c.user->on_cm_timeout(c.local_id, c.context, kind);
}

void CmConnections::stop_request(Conn& c) { sim_.cancel(c.timer); }

void CmConnections::send_response(Conn& c, const mad::CmMad& mad) {
  c.response = mad;
  sender_.send_cm(*c.hca, c.port, c.peer, c.response);
}

// --- Leaving the handshake ---------------------------------------------------

void CmConnections::forget_remote(Conn& c) {
  if (!c.indexed) return;
  const uint32_t h = c.hca->index();
  by_remote_id_.erase({h, c.remote_id, c.remote_ca_guid});
  by_remote_qpn_.erase({h, c.remote_qpn, c.remote_ca_guid});
  c.indexed = false;
}

void CmConnections::to_idle(Conn& c) {
  stop_request(c);
  forget_remote(c);
  c.state = CmState::kIdle;
}

void CmConnections::to_timewait(Conn& c) {
  stop_request(c);
  c.state = CmState::kTimewait;
  c.timer = sim_.schedule(cm_time(c.av_timeout), [this, &c] {
    forget_remote(c);
    c.state = CmState::kIdle;
    if (c.destroyed) return erase(c);
    c.user->on_cm_timewait_exit(c.local_id, c.context);
  });
}

void CmConnections::erase(Conn& c) {
  sim_.cancel(c.timer);
  forget_remote(c);
  conns_.erase({c.hca->index(), c.local_id});
}

// --- Active side -------------------------------------------------------------

CmId CmConnections::connect(fabric::Hca& hca, uint8_t port, const CmConnectParams& params, CmConnectionUser& user,
                            uint64_t context) {
  const CmId id = allocate_id(hca);
  auto owned = std::make_unique<Conn>();
  Conn& c = *owned;
  conns_.emplace(Key{hca.index(), id}, std::move(owned));
  c.hca = &hca;
  c.port = port;
  c.peer = params.to;
  c.local_id = id;
  c.user = &user;
  c.context = context;
  c.local_qpn = params.req.local_qpn;
  c.xrc = params.req.requests_xrc();
  c.packet_life_time = params.packet_life_time;
  c.timeout = cm_time(params.packet_life_time) + cm_time(params.packet_life_time) +
              cm_time(params.req.remote_cm_response_timeout);
  c.max_retries = params.req.max_cm_retries;
  c.av_timeout = static_cast<uint8_t>(params.packet_life_time + 1);
  c.tid = sender_.new_tid(hca, port);
  mad::CmReq req = params.req;
  req.local_comm_id = id;
  req.local_ca_guid = hca.guid();
  c.state = CmState::kReqSent;
  send_request(c, mad::make_cm_mad(c.tid, req), CmTimedOut::kReq);
  return id;
}

void CmConnections::recv_rep(fabric::Hca& hca, const mad::CmRep& rep) {
  Conn* c = find(hca, rep.remote_comm_id, rep.local_comm_id);
  if (!c) return;
  if (c->state == CmState::kReqSent || c->state == CmState::kMraReqRcvd) {
    stop_request(*c);
    c->remote_id = rep.local_comm_id;
    c->remote_qpn = rep_qpn(rep, c->xrc);
    c->remote_ca_guid = rep.local_ca_guid;
    c->av_timeout = cm_ack_timeout(rep.target_ack_delay, c->packet_life_time);
    c->state = CmState::kRepRcvd;
    if (!c->destroyed) c->user->on_cm_rep(c->local_id, c->context, rep);
    return;
  }
  // A repeat: the RTU or the MRA again.
  if (c->remote_id != rep.local_comm_id) return;
  if (c->state == CmState::kEstablished || c->state == CmState::kMraRepSent)
    sender_.send_cm(*c->hca, c->port, c->peer, c->response);
}

bool CmConnections::send_rtu(fabric::Hca& hca, CmId id, std::span<const uint8_t> private_data) {
  Conn* c = find(hca, id);
  if (!c || (c->state != CmState::kRepRcvd && c->state != CmState::kMraRepSent)) return false;
  mad::CmRtu rtu;
  rtu.local_comm_id = c->local_id;
  rtu.remote_comm_id = c->remote_id;
  copy_in(rtu.private_data, private_data);
  c->state = CmState::kEstablished;
  send_response(*c, mad::make_cm_mad(c->tid, rtu));
  return true;
}

// --- Passive side ------------------------------------------------------------

void CmConnections::recv_req(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, uint64_t tid,
                             const mad::CmReq& req) {
  const uint32_t h = hca.index();
  auto refuse = [&](mad::CmRejReason reason) {
    mad::CmRej rej;
    rej.remote_comm_id = req.local_comm_id;
    rej.message_rejected = mad::cm_rej_msg::kReq;
    rej.reason = reason;
    sender_.send_cm(hca, port, from, mad::make_cm_mad(tid, rej));
  };
  // A repeat of a REQ already taken.
  if (auto it = by_remote_id_.find({h, req.local_comm_id, req.local_ca_guid}); it != by_remote_id_.end()) {
    Conn& c = *it->second;
    if (c.state == CmState::kMraReqSent) sender_.send_cm(hca, port, from, c.response);
    else if (c.state == CmState::kTimewait) send_rej(c, mad::CmRejReason::kStaleConnection, {}, {});
    return;
  }
  // The requester's QP still belongs to a connection here.
  if (auto it = by_remote_qpn_.find({h, req.local_qpn, req.local_ca_guid}); it != by_remote_qpn_.end()) {
    Conn& stale = *it->second;
    refuse(mad::CmRejReason::kStaleConnection);
    if (stale.state == CmState::kEstablished) send_dreq(stale, {});
    return;
  }
  auto listener = listeners_.find(req.service_id);
  if (listener == listeners_.end()) return refuse(mad::CmRejReason::kInvalidServiceId);

  const CmId id = allocate_id(hca);
  auto owned = std::make_unique<Conn>();
  Conn& c = *owned;
  conns_.emplace(Key{h, id}, std::move(owned));
  c.hca = &hca;
  c.port = port;
  c.peer = from;
  c.local_id = id;
  c.remote_id = req.local_comm_id;
  c.remote_ca_guid = req.local_ca_guid;
  c.remote_qpn = req.local_qpn;
  c.xrc = req.requests_xrc();
  c.user = listener->second.user;
  c.context = listener->second.context;
  c.tid = tid;
  c.timeout = cm_time(req.local_cm_response_timeout);
  c.max_retries = req.max_cm_retries;
  c.av_timeout = req.primary_path.local_ack_timeout;
  c.packet_life_time = static_cast<uint8_t>(c.av_timeout - (c.av_timeout > 0));
  c.state = CmState::kReqRcvd;
  c.indexed = true;
  by_remote_id_[{h, c.remote_id, c.remote_ca_guid}] = &c;
  by_remote_qpn_[{h, c.remote_qpn, c.remote_ca_guid}] = &c;
  CmPeer peer{&hca, port, from};
  c.user->on_cm_req(id, c.context, peer, req);
}

bool CmConnections::accept(fabric::Hca& hca, CmId id, const mad::CmRep& rep_in) {
  Conn* c = find(hca, id);
  if (!c || (c->state != CmState::kReqRcvd && c->state != CmState::kMraReqSent)) return false;
  mad::CmRep rep = rep_in;
  rep.local_comm_id = c->local_id;
  rep.remote_comm_id = c->remote_id;
  rep.local_ca_guid = hca.guid();
  c->local_qpn = rep_qpn(rep, c->xrc);
  c->state = CmState::kRepSent;
  send_request(*c, mad::make_cm_mad(c->tid, rep), CmTimedOut::kRep);
  return true;
}

void CmConnections::recv_rtu(fabric::Hca& hca, const mad::CmRtu& rtu) {
  Conn* c = find(hca, rtu.remote_comm_id, rtu.local_comm_id);
  if (!c || (c->state != CmState::kRepSent && c->state != CmState::kMraRepRcvd)) return;
  stop_request(*c);
  c->state = CmState::kEstablished;
  if (!c->destroyed) c->user->on_cm_established(c->local_id, c->context, rtu);
}

bool CmConnections::establish(fabric::Hca& hca, CmId id) {
  Conn* c = find(hca, id);
  if (!c || (c->state != CmState::kRepSent && c->state != CmState::kMraRepRcvd)) return false;
  stop_request(*c);
  c->state = CmState::kEstablished;
  return true;
}

// --- REJ and MRA -------------------------------------------------------------

void CmConnections::send_rej(Conn& c, mad::CmRejReason reason, std::span<const uint8_t> ari,
                             std::span<const uint8_t> private_data) {
  mad::CmRej rej;
  rej.local_comm_id = c.state == CmState::kReqRcvd ? 0 : c.local_id;
  rej.remote_comm_id = c.remote_id;
  switch (c.state) {
    case CmState::kReqRcvd:
    case CmState::kMraReqSent: rej.message_rejected = mad::cm_rej_msg::kReq; break;
    case CmState::kRepRcvd:
    case CmState::kMraRepSent: rej.message_rejected = mad::cm_rej_msg::kRep; break;
    default: rej.message_rejected = mad::cm_rej_msg::kOther; break;
  }
  rej.reason = reason;
  rej.reject_info_length = static_cast<uint8_t>(std::min(ari.size(), rej.ari.size()));
  copy_in(rej.ari, ari);
  copy_in(rej.private_data, private_data);
  sender_.send_cm(*c.hca, c.port, c.peer, mad::make_cm_mad(c.tid, rej));
}

bool CmConnections::reject(fabric::Hca& hca, CmId id, mad::CmRejReason reason, std::span<const uint8_t> ari,
                           std::span<const uint8_t> private_data) {
  Conn* c = find(hca, id);
  if (!c) return false;
  switch (c->state) {
    case CmState::kReqSent:
    case CmState::kMraReqRcvd:
    case CmState::kReqRcvd:
    case CmState::kMraReqSent:
    case CmState::kRepSent:
    case CmState::kMraRepRcvd:
      send_rej(*c, reason, ari, private_data);
      to_idle(*c);
      return true;
    case CmState::kRepRcvd:
    case CmState::kMraRepSent:
      send_rej(*c, reason, ari, private_data);
      to_timewait(*c);
      return true;
    default: return false;
  }
}

// The connection a REJ is for, found as cm.c finds it: a timeout REJ (a
// requester that gave up before it knew our CommID) by its sender's CommID
// and CA GUID (the ARI); a REJ of a REQ by our CommID alone; any other by
// both.
CmConnections::Conn* CmConnections::rejected(const fabric::Hca& hca, const mad::CmRej& rej) const {
  if (rej.reason == mad::CmRejReason::kTimeout) {
    if (rej.reject_info_length < 8) return nullptr;
    auto it = by_remote_id_.find({hca.index(), rej.local_comm_id, wire::load_be64(rej.ari.data())});
    return it == by_remote_id_.end() ? nullptr : it->second;
  }
  return rej.message_rejected == mad::cm_rej_msg::kReq ? find(hca, rej.remote_comm_id, 0)
                                                       : find(hca, rej.remote_comm_id, rej.local_comm_id);
}

void CmConnections::recv_rej(fabric::Hca& hca, const mad::CmRej& rej) {
  Conn* c = rejected(hca, rej);
  if (!c) return;
  switch (c->state) {
    case CmState::kReqSent:
    case CmState::kMraReqRcvd:
    case CmState::kRepSent:
    case CmState::kMraRepRcvd:
    case CmState::kReqRcvd:
    case CmState::kMraReqSent:
      if (rej.reason == mad::CmRejReason::kStaleConnection) to_timewait(*c);
      else to_idle(*c);
      break;
    case CmState::kDreqSent:
    case CmState::kRepRcvd:
    case CmState::kMraRepSent: to_timewait(*c); break;
    default: return;
  }
  if (!c->destroyed) c->user->on_cm_rej(c->local_id, c->context, rej);
}

bool CmConnections::send_mra(fabric::Hca& hca, CmId id, uint8_t service_timeout,
                             std::span<const uint8_t> private_data) {
  Conn* c = find(hca, id);
  if (!c || (c->state != CmState::kReqRcvd && c->state != CmState::kRepRcvd)) return false;
  mad::CmMra mra;
  mra.local_comm_id = c->local_id;
  mra.remote_comm_id = c->remote_id;
  mra.message_mraed = c->state == CmState::kReqRcvd ? mad::cm_mra_msg::kReq : mad::cm_mra_msg::kRep;
  mra.service_timeout = service_timeout;
  copy_in(mra.private_data, private_data);
  c->state = c->state == CmState::kReqRcvd ? CmState::kMraReqSent : CmState::kMraRepSent;
  send_response(*c, mad::make_cm_mad(c->tid, mra));
  return true;
}

void CmConnections::recv_mra(fabric::Hca& hca, const mad::CmMra& mra) {
  Conn* c = find(hca, mra.remote_comm_id, mra.local_comm_id);
  if (!c) return;
  if (c->state == CmState::kReqSent && mra.message_mraed == mad::cm_mra_msg::kReq) {
    c->state = CmState::kMraReqRcvd;
    c->remote_id = mra.local_comm_id;
  } else if (c->state == CmState::kRepSent && mra.message_mraed == mad::cm_mra_msg::kRep) {
    c->state = CmState::kMraRepRcvd;
  } else {
    return;
  }
  // The wait for the answer starts again, longer.
  stop_request(*c);
  c->try_time = cm_time(mra.service_timeout) + cm_time(static_cast<uint8_t>(c->packet_life_time + 1));
  arm(*c);
  if (!c->destroyed) c->user->on_cm_mra(c->local_id, c->context, mra);
}

// --- Disconnection -----------------------------------------------------------

void CmConnections::send_dreq(Conn& c, std::span<const uint8_t> private_data) {
  mad::CmDreq dreq;
  dreq.local_comm_id = c.local_id;
  dreq.remote_comm_id = c.remote_id;
  dreq.remote_qpn_eecn = c.remote_qpn;
  copy_in(dreq.private_data, private_data);
  c.state = CmState::kDreqSent;
  send_request(c, mad::make_cm_mad(sender_.new_tid(*c.hca, c.port), dreq), CmTimedOut::kDreq);
}

bool CmConnections::disconnect(fabric::Hca& hca, CmId id, std::span<const uint8_t> private_data) {
  Conn* c = find(hca, id);
  if (!c || c->state != CmState::kEstablished) return false;
  send_dreq(*c, private_data);
  return true;
}

void CmConnections::send_drep(Conn& c, std::span<const uint8_t> private_data) {
  mad::CmDrep drep;
  drep.local_comm_id = c.local_id;
  drep.remote_comm_id = c.remote_id;
  copy_in(drep.private_data, private_data);
  // The DREP answers the DREQ: its TID is the DREQ's (kept in c.tid's place
  // by recv_dreq).
  send_response(c, mad::make_cm_mad(c.tid, drep));
  to_timewait(c);
}

bool CmConnections::send_drep(fabric::Hca& hca, CmId id, std::span<const uint8_t> private_data) {
  Conn* c = find(hca, id);
  if (!c || c->state != CmState::kDreqRcvd) return false;
  send_drep(*c, private_data);
  return true;
}

void CmConnections::recv_dreq(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, uint64_t tid,
                              const mad::CmDreq& dreq) {
  Conn* c = find(hca, dreq.remote_comm_id, dreq.local_comm_id);
  if (!c || c->remote_id != dreq.local_comm_id) {
    // No such connection: a DREP all the same, so the peer stops asking.
    mad::CmDrep drep;
    drep.local_comm_id = dreq.remote_comm_id;
    drep.remote_comm_id = dreq.local_comm_id;
    sender_.send_cm(hca, port, from, mad::make_cm_mad(tid, drep));
    return;
  }
  if (dreq.remote_qpn_eecn != c->local_qpn) return;  // not for this connection's QP
  switch (c->state) {
    case CmState::kRepSent:
    case CmState::kMraRepRcvd:
    case CmState::kEstablished:
    case CmState::kDreqSent: break;
    case CmState::kTimewait: {  // the DREP again (or a first one, if this side sent the DREQ)
      mad::CmDrep drep;
      if (auto last = mad::cm_message<mad::CmDrep>(c->response)) drep = *last;
      drep.local_comm_id = c->local_id;
      drep.remote_comm_id = c->remote_id;
      sender_.send_cm(*c->hca, c->port, c->peer, mad::make_cm_mad(tid, drep));
      return;
    }
    default: return;
  }
  stop_request(*c);
  c->tid = tid;
  c->state = CmState::kDreqRcvd;
  if (c->destroyed) return send_drep(*c, {});
  c->user->on_cm_dreq(c->local_id, c->context, dreq);
}

void CmConnections::recv_drep(fabric::Hca& hca, const mad::CmDrep& drep) {
  Conn* c = find(hca, drep.remote_comm_id, drep.local_comm_id);
  if (!c || (c->state != CmState::kDreqSent && c->state != CmState::kDreqRcvd)) return;
  to_timewait(*c);
  if (!c->destroyed) c->user->on_cm_drep(c->local_id, c->context, drep);
}

// --- Destruction -------------------------------------------------------------

void CmConnections::destroy(fabric::Hca& hca, CmId id) {
  Conn* c = find(hca, id);
  if (!c) return;
  c->destroyed = true;
  switch (c->state) {
    case CmState::kReqSent:
    case CmState::kMraReqRcvd: {
      uint8_t guid[8];
      wire::store_be64(guid, hca.guid());
      send_rej(*c, mad::CmRejReason::kTimeout, guid, {});
      return erase(*c);
    }
    case CmState::kReqRcvd:
    case CmState::kMraReqSent:
    case CmState::kRepSent:
    case CmState::kMraRepRcvd:
      send_rej(*c, mad::CmRejReason::kConsumerReject, {}, {});
      return erase(*c);
    case CmState::kRepRcvd:
    case CmState::kMraRepSent:
      send_rej(*c, mad::CmRejReason::kConsumerReject, {}, {});
      return to_timewait(*c);
    case CmState::kEstablished: return send_dreq(*c, {});
    case CmState::kDreqRcvd: return send_drep(*c, {});
    case CmState::kDreqSent:
    case CmState::kTimewait: return;
    case CmState::kIdle: return erase(*c);
  }
}

// --- Dispatch ----------------------------------------------------------------

void CmConnections::on_mad(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from,
                           std::span<const uint8_t> mad) {
  const std::optional<wire::MadHeader> h = mad::cm_header(mad);
  if (!h) return;
  switch (h->attr_id) {
    case mad::cm_attr::kReq: return recv_req(hca, port, from, h->tid, *mad::cm_message<mad::CmReq>(mad));
    case mad::cm_attr::kRep: return recv_rep(hca, *mad::cm_message<mad::CmRep>(mad));
    case mad::cm_attr::kRtu: return recv_rtu(hca, *mad::cm_message<mad::CmRtu>(mad));
    case mad::cm_attr::kRej: return recv_rej(hca, *mad::cm_message<mad::CmRej>(mad));
    case mad::cm_attr::kMra: return recv_mra(hca, *mad::cm_message<mad::CmMra>(mad));
    case mad::cm_attr::kDreq: return recv_dreq(hca, port, from, h->tid, *mad::cm_message<mad::CmDreq>(mad));
    case mad::cm_attr::kDrep: return recv_drep(hca, *mad::cm_message<mad::CmDrep>(mad));
    default: return;
  }
}

}  // namespace ibfab::api
