// rdma_cm's connected ids (RC, UC, XRC): their connections through ib_cm's
// REQ/REP/RTU, REJ and DREQ/DREP (cma.c's cma_connect_ib, cma_accept_ib,
// cma_ib_req_handler, cma_ib_handler, rdma_disconnect, rdma_notify), and
// the QP attributes rdma_init_qp_attr gives them (cm.c's
// ib_cm_init_qp_attr, with cma.c's own INIT before a connection exists).
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/server/kernel/rdma_cm.h"

namespace ibfab::api {
namespace {

using State = RdmaCmState;

constexpr uint8_t kCmResponseTimeout = 20;  // CMA_CM_RESPONSE_TIMEOUT: 4.096 us * 2^20, about 4.3 s
constexpr uint8_t kMaxCmRetries = 15;       // CMA_MAX_CM_RETRIES
// The HCA's ACK delay (ibv_device_attr.local_ca_ack_delay, as
// api/verbs gives it): the REQ's LocalACKTimeout and the REP's
// TargetACKDelay come from it, as cm.c takes them from the device.
constexpr uint8_t kCaAckDelay = 16;

mad::CmPath cm_path_of(const mad::PathRecord& p) {
  mad::CmPath c;
  c.local_lid = p.slid;
  c.remote_lid = p.dlid;
  c.local_gid = p.sgid.raw;
  c.remote_gid = p.dgid.raw;
  c.flow_label = p.flow_label;
  c.packet_rate = p.rate;
  c.traffic_class = p.tclass;
  c.hop_limit = p.hop_limit;
  c.sl = p.sl;
  c.subnet_local = p.hop_limit <= 1;
  c.local_ack_timeout = cm_ack_timeout(kCaAckDelay, p.packet_life_time);
  return c;
}

// The passive side's route: the REQ's primary path seen from here (cm.c's
// cm_format_paths_from_req).
mad::PathRecord path_from_req(const mad::CmReq& req) {
  const mad::CmPath& c = req.primary_path;
  mad::PathRecord p;
  p.slid = c.remote_lid;
  p.dlid = c.local_lid;
  p.sgid.raw = c.remote_gid;
  p.dgid.raw = c.local_gid;
  p.flow_label = c.flow_label;
  p.hop_limit = c.hop_limit;
  p.tclass = c.traffic_class;
  p.reversible = true;
  p.numb_path = 1;
  p.p_key = req.partition_key;
  p.sl = c.sl;
  p.mtu = req.path_mtu;
  p.rate = c.packet_rate;
  p.packet_life_time = static_cast<uint8_t>(c.local_ack_timeout - (c.local_ack_timeout > 0));
  return p;
}

// rdma_cm's header, then the user's private data, in `out`; false when it
// does not fit.
bool pack_private_data(const RdmaCmId& id, const CmConnect& req, std::span<uint8_t> out) {
  if (req.private_data_len > std::min<std::size_t>(out.size() - cm::kHeaderSize, kCmPrivateData)) return false;
  cm::pack_header(out.first<cm::kHeaderSize>(), id.src, id.dst);
  std::copy_n(req.private_data, req.private_data_len, out.begin() + cm::kHeaderSize);
  return true;
}

std::span<const uint8_t> user_data(const CmConnect& req) {
  return {req.private_data, std::min<std::size_t>(req.private_data_len, kCmPrivateData)};
}

template <std::size_t N>
void copy_private_data(CmEvent& ev, const std::array<uint8_t, N>& data, std::size_t from = 0) {
  ev.private_data_len = static_cast<uint32_t>(N - from);
  std::copy(data.begin() + static_cast<std::ptrdiff_t>(from), data.end(), ev.private_data);
}

// REQ:TransportServiceType, and ExtendedTransportType, for an id's QP
// type (cm.c's cm_req_set_qp_type).
void set_transport(mad::CmReq& r, uint8_t qp_type) {
  r.transport_service_type = qp_type == IBV_QPT_UC         ? mad::cm_transport::kUc
                             : qp_type == IBV_QPT_XRC_SEND ? mad::cm_transport::kExtended
                                                           : mad::cm_transport::kRc;
  if (qp_type == IBV_QPT_XRC_SEND) r.extended_transport_type = mad::cm_ext_transport::kXrc;
}

// The QP type a REQ asks the passive side for (cm.c's cm_req_get_qp_type:
// an XRC initiator's peer is a target); 0 for any other transport.
uint8_t req_qp_type(const mad::CmReq& req) {
  switch (req.transport_service_type) {
    case mad::cm_transport::kRc: return IBV_QPT_RC;
    case mad::cm_transport::kUc: return IBV_QPT_UC;
    default: return req.requests_xrc() ? IBV_QPT_XRC_RECV : 0;
  }
}

}  // namespace

bool RdmaCm::connected_type(const RdmaCmId& id) {
  return id.qp_type == IBV_QPT_RC || id.qp_type == IBV_QPT_UC || id.qp_type == IBV_QPT_XRC_SEND ||
         id.qp_type == IBV_QPT_XRC_RECV;
}

void RdmaCm::listen_connected(const RdmaCmId& id, bool on) {
  const uint64_t sid = cm::service_id(id.ps, cm::port_of(id.src));
  CmConnections& conns = ib_cm_.connections();
  if (on) {
    if (connected_listens_[sid]++ == 0) conns.listen(sid, *this, 0);
    return;
  }
  auto it = connected_listens_.find(sid);
  if (it == connected_listens_.end() || --it->second > 0) return;
  connected_listens_.erase(it);
  conns.unlisten(sid);
}

RdmaCmId* RdmaCm::connection_owner(uint64_t context, CmId cm) {
  RdmaCmId* id = find(static_cast<uint32_t>(context));
  return id && id->conn.cm == cm ? id : nullptr;
}

void RdmaCm::drop_connection(RdmaCmId& id) {
  if (!id.conn.cm) return;
  ib_cm_.connections().destroy(*id.hca, id.conn.cm);
  id.conn.cm = 0;
}

// --- Active side -----------------------------------------------------------------

int64_t RdmaCm::connect_connected(RdmaCmId& id, const CmConnect& req) {
  if (id.state != State::RouteResolved || !id.path) return -EINVAL;
  if (id.src.ss_family == cm::kAfIb) return -EOPNOTSUPP;
  const mad::PathRecord& p = *id.path;
  CmConnectParams params;
  params.to.lid = p.dlid;
  params.to.sl = p.sl;
  params.to.qpn = 1;
  params.to.pkey_index = id.pkey_index;
  params.packet_life_time = p.packet_life_time;
  mad::CmReq& r = params.req;
  if (!pack_private_data(id, req, r.private_data)) return -EINVAL;
  r.service_id = cm::service_id(id.ps, cm::port_of(id.dst));
  const uint8_t retry_count = std::min<uint8_t>(req.param.retry_count, 7);
  r.local_qpn = req.qp_num & 0xFFFFFF;
  r.initiator_depth = req.param.initiator_depth;
  r.remote_cm_response_timeout = kCmResponseTimeout;
  r.local_cm_response_timeout = kCmResponseTimeout;
  set_transport(r, id.qp_type);
  r.end_to_end_flow_control = req.param.flow_control != 0;
  r.starting_psn = id.seq_num;
  r.partition_key = id.pkey;
  r.path_mtu = p.mtu;
  r.max_cm_retries = kMaxCmRetries;
  r.primary_path = cm_path_of(p);
  if (id.qp_type != IBV_QPT_XRC_SEND) {  // an XRC initiator's REQ leaves these out (cm.c's cm_format_req)
    r.responder_resources = req.param.responder_resources;
    r.retry_count = retry_count;
    r.rnr_retry_count = std::min<uint8_t>(req.param.rnr_retry_count, 7);
    r.srq = req.param.srq != 0;
  }
  id.conn = RdmaCmConnection{};
  id.conn.active = true;
  id.conn.retry_count = retry_count;
  id.conn.path_mtu = p.mtu;
  id.state = State::Connect;
  id.conn.cm = ib_cm_.connections().connect(*id.hca, id.port, params, *this, id.handle);
  return 0;
}

void RdmaCm::on_cm_rep(CmId cm, uint64_t context, const mad::CmRep& rep) {
  RdmaCmId* found = connection_owner(context, cm);
  if (!found || found->state != State::Connect) return;
  RdmaCmId& id = *found;
  RdmaCmConnection& c = id.conn;
  c.remote_qpn = id.qp_type == IBV_QPT_XRC_SEND ? rep.local_eecn : rep.local_qpn;  // cm.c's cm_rep_get_qpn
  c.remote_psn = rep.starting_psn;
  c.responder_resources = rep.initiator_depth;
  c.initiator_depth = rep.responder_resources;
  c.rnr_retry_count = rep.rnr_retry_count;
  c.ack_timeout = cm_ack_timeout(rep.target_ack_delay, id.path->packet_life_time);
  c.peer_known = true;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_CONNECT_RESPONSE;
  ev.qp_num = c.remote_qpn;
  ev.param.responder_resources = rep.responder_resources;
  ev.param.initiator_depth = rep.initiator_depth;
  ev.param.flow_control = rep.end_to_end_flow_control;
  ev.param.rnr_retry_count = rep.rnr_retry_count;
  ev.param.srq = rep.srq;
  copy_private_data(ev, rep.private_data);
  emit(id, ev);
}

// --- Passive side ----------------------------------------------------------------

void RdmaCm::on_cm_req(CmId cm, uint64_t, const CmPeer& peer, const mad::CmReq& req) {
  CmConnections& conns = ib_cm_.connections();
  RdmaCmId* listener = listener_of(*peer.hca, req.service_id);
  if (!listener || !connected_type(*listener) || req_qp_type(req) != listener->qp_type) {
    conns.reject(*peer.hca, cm, mad::CmRejReason::kInvalidServiceId, {}, {});
    return;
  }
  const auto header = cm::unpack_header(std::span<const uint8_t, cm::kHeaderSize>(req.private_data.data(), cm::kHeaderSize));
  RdmaCmId* made = header ? make_request_id(*listener, *peer.hca, peer.port, req.partition_key, req.service_id, *header)
                          : nullptr;
  if (!made) {  // a header rdma_cm cannot read, or the listener's backlog is full
    conns.reject(*peer.hca, cm, mad::CmRejReason::kConsumerReject, {}, {});
    return;
  }
  RdmaCmId& id = *made;
  conns.set_context(*peer.hca, cm, id.handle);
  id.path = path_from_req(req);
  RdmaCmConnection& c = id.conn;
  c.cm = cm;
  c.peer_known = true;
  c.remote_qpn = req.local_qpn;
  c.remote_psn = req.starting_psn;
  c.responder_resources = req.initiator_depth;
  c.initiator_depth = req.responder_resources;
  c.retry_count = req.retry_count;
  c.rnr_retry_count = req.rnr_retry_count;
  c.path_mtu = req.path_mtu;
  c.ack_timeout = req.primary_path.local_ack_timeout;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_CONNECT_REQUEST;
  ev.listen_id = listener->handle;
  ev.qp_num = req.local_qpn;
  ev.param.responder_resources = c.responder_resources;
  ev.param.initiator_depth = c.initiator_depth;
  ev.param.flow_control = req.end_to_end_flow_control;
  ev.param.retry_count = req.retry_count;
  ev.param.rnr_retry_count = req.rnr_retry_count;
  ev.param.srq = req.srq;
  copy_private_data(ev, req.private_data, cm::kHeaderSize);
  emit(id, ev);
}

int64_t RdmaCm::answer_connected(RdmaCmId& id, const CmConnect& req, bool accept) {
  CmConnections& conns = ib_cm_.connections();
  RdmaCmConnection& c = id.conn;
  if (!c.cm) return -EINVAL;
  // A REJ (from either side while the connection is being made) leaves the
  // id where it is, as in cma.c: only a new id connects again.
  if (!accept) return conns.reject(*id.hca, c.cm, mad::CmRejReason::kConsumerReject, {}, user_data(req)) ? 0 : -EINVAL;
  if (c.active) {  // the REP came: the RTU
    if (id.state != State::Connect || !c.peer_known || !conns.send_rtu(*id.hca, c.cm, {})) return -EINVAL;
    id.state = State::Connected;
    return 0;
  }
  if (id.state != State::ConnectRequest) return -EINVAL;
  if (req.private_data_len > mad::CmRep::kPrivateDataSize) return -EINVAL;
  mad::CmRep rep;
  rep.starting_psn = id.seq_num;
  rep.responder_resources = req.param.responder_resources;
  rep.target_ack_delay = kCaAckDelay;
  rep.failover_accepted = mad::cm_failover::kAccepted;
  rep.rnr_retry_count = std::min<uint8_t>(req.param.rnr_retry_count, 7);
  if (id.qp_type == IBV_QPT_XRC_RECV) {  // a target: its QP as LocalEECN, with an SRQ (cm.c's cm_format_rep)
    rep.local_eecn = req.qp_num & 0xFFFFFF;
    rep.srq = true;
  } else {
    rep.local_qpn = req.qp_num & 0xFFFFFF;
    rep.initiator_depth = req.param.initiator_depth;
    rep.end_to_end_flow_control = req.param.flow_control != 0;
    rep.srq = req.param.srq != 0;
  }
  std::copy_n(req.private_data, req.private_data_len, rep.private_data.begin());
  if (!conns.accept(*id.hca, c.cm, rep)) return -EINVAL;
  c.responder_resources = req.param.responder_resources;
  c.initiator_depth = req.param.initiator_depth;
  id.state = State::Connect;
  return 0;
}

void RdmaCm::on_cm_established(CmId cm, uint64_t context, const mad::CmRtu&) {
  RdmaCmId* id = connection_owner(context, cm);
  if (!id || id->state != State::Connect) return;
  id->state = State::Connected;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_ESTABLISHED;
  emit(*id, ev);
}

int64_t RdmaCm::notify(RdmaCmId& id, uint32_t event) {
  if (!id.hca) return -EINVAL;
  if (!id.conn.cm) return 0;  // no IB CM id: nothing to tell
  if (event != IBV_EVENT_COMM_EST) return event == IBV_EVENT_LID_CHANGE ? 0 : -EINVAL;
  if (id.state != State::Connect || id.conn.active) return -EINVAL;
  if (!ib_cm_.connections().establish(*id.hca, id.conn.cm)) return -EINVAL;
  id.state = State::Connected;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_ESTABLISHED;
  emit(id, ev);
  return 0;
}

// --- REJ, timeouts, disconnection --------------------------------------------------

void RdmaCm::on_cm_rej(CmId cm, uint64_t context, const mad::CmRej& rej) {
  RdmaCmId* found = connection_owner(context, cm);
  if (!found || found->state == State::Disconnect) return;
  RdmaCmId& id = *found;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_REJECTED;
  ev.status = static_cast<int32_t>(rej.reason);
  copy_private_data(ev, rej.private_data);
  emit(id, ev);
}

void RdmaCm::on_cm_mra(CmId, uint64_t, const mad::CmMra&) {}  // cma.c ignores it: ib_cm waits longer

void RdmaCm::on_cm_timeout(CmId cm, uint64_t context, CmTimedOut what) {
  RdmaCmId* found = connection_owner(context, cm);
  if (!found) return;
  RdmaCmId& id = *found;
  CmEvent ev;
  ev.status = -ETIMEDOUT;
  if (what == CmTimedOut::kDreq) {
    if (id.state != State::Connect && id.state != State::Connected) return;
    id.state = State::Disconnect;
    ev.event = RDMA_CM_EVENT_DISCONNECTED;
  } else {
    if (id.state != State::Connect) return;
    ev.event = RDMA_CM_EVENT_UNREACHABLE;
  }
  emit(id, ev);
}

// DISCONNECTED carries no private data (cma.c passes none on).
void RdmaCm::disconnected(CmId cm, uint64_t context) {
  RdmaCmId* id = connection_owner(context, cm);
  if (!id || (id->state != State::Connect && id->state != State::Connected)) return;
  id->state = State::Disconnect;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_DISCONNECTED;
  emit(*id, ev);
}

void RdmaCm::on_cm_dreq(CmId cm, uint64_t context, const mad::CmDreq&) { disconnected(cm, context); }

void RdmaCm::on_cm_drep(CmId cm, uint64_t context, const mad::CmDrep&) { disconnected(cm, context); }

void RdmaCm::on_cm_timewait_exit(CmId cm, uint64_t context) {
  RdmaCmId* id = connection_owner(context, cm);
  if (!id || id->state != State::Disconnect) return;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_TIMEWAIT_EXIT;
  emit(*id, ev);
}

int64_t RdmaCm::disconnect(RdmaCmId& id) {
  if (!id.hca || !connected_type(id) || !id.conn.cm) return -EINVAL;
  CmConnections& conns = ib_cm_.connections();
  if (!conns.disconnect(*id.hca, id.conn.cm, {})) conns.send_drep(*id.hca, id.conn.cm, {});
  return 0;
}

// --- QP attributes -----------------------------------------------------------------

int64_t RdmaCm::init_connected_qp_attr(RdmaCmId& id, uint32_t state, CmIdInfo& info) {
  const RdmaCmConnection& c = id.conn;
  info.qp_state = static_cast<uint8_t>(state);
  // What each transport's QP takes (cm.c's cm_init_qp_rtr_attr and
  // cm_init_qp_rts_attr): RC's responder (and an XRC target) its reads
  // and RNR timer, RC's requester (and an XRC initiator) its retries and
  // reads; every transport but UC an ACK timeout.
  const bool responder = id.qp_type == IBV_QPT_RC || id.qp_type == IBV_QPT_XRC_RECV;
  const bool requester = id.qp_type == IBV_QPT_RC || id.qp_type == IBV_QPT_XRC_SEND;
  switch (state) {
    case IBV_QPS_INIT:
      info.qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
      info.pkey_index = id.pkey_index;
      info.port = id.port;
      // Before a connection exists cma.c gives no access; ib_cm gives
      // remote write, and read and atomics when this side takes reads.
      info.qp_access_flags = 0;
      if (c.cm) {
        info.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
        if (c.responder_resources) info.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
      }
      return 0;
    case IBV_QPS_RTR:
      if (!c.cm || !c.peer_known) return -EINVAL;
      info.qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
      ah_of(id, info.ah);
      info.path_mtu = c.path_mtu;
      info.dest_qp_num = c.remote_qpn;
      info.rq_psn = c.remote_psn;
      if (responder) {
        info.qp_attr_mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        info.max_dest_rd_atomic = c.responder_resources;
        info.min_rnr_timer = 0;
      }
      return 0;
    case IBV_QPS_RTS:
      if (!c.cm || !c.peer_known) return -EINVAL;
      info.qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
      info.sq_psn = id.seq_num;
      if (id.qp_type != IBV_QPT_UC) {
        info.qp_attr_mask |= IBV_QP_TIMEOUT;
        info.timeout = c.ack_timeout;
      }
      if (requester) {
        info.qp_attr_mask |= IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
        info.retry_cnt = c.retry_count;
        info.rnr_retry = c.rnr_retry_count;
        info.max_rd_atomic = c.initiator_depth;
      }
      return 0;
    default:
      return -EINVAL;
  }
}

}  // namespace ibfab::api
