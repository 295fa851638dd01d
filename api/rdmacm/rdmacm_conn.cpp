// Connections. A UD id's "connection" is IB CM's SIDR: rdma_connect sends
// the request, rdma_accept and rdma_reject answer it, and the active side's
// ESTABLISHED (or UNREACHABLE) event carries the peer's QP number, Q_Key
// and address handle; there is no disconnection handshake, and notifying
// an id that has an IB CM id only accepts a LID change. An RC, UC or XRC
// id connects with IB CM's REQ/REP/RTU and disconnects with DREQ/DREP, as
// rdma-core drives the kernel: the QP goes to RTR and RTS with
// rdma_init_qp_attr's attributes before the REP is sent (rdma_accept) or
// the RTU (on CONNECT_RESPONSE, rdmacm_events.cpp), and to the error state
// on rdma_disconnect.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

// Whether the kernel would have an IB CM id behind a UD id: a connection
// sent or received, or a listen on a device.
bool has_cm_id(const Id& id) { return id.state == State::Connect || id.state == State::Listen; }

bool connected(const rdma_cm_id& id) { return id.qp_type != IBV_QPT_UD; }

// The connection's request body: the id's connect data (rdma_create_ep's),
// then the application's private data, and the offer (rdma-core's
// ucma_copy_conn_param_to_kern). False (EINVAL) when the data is longer
// than any CM message carries.
bool make_connect(Id& id, const rdma_conn_param* p, uint32_t qp_num, bool srq, api::CmConnect& req) {
  const std::size_t len = p && p->private_data ? p->private_data_len : 0;
  const std::size_t total = id.connect_data.size() + len;
  if (total > sizeof req.private_data) {
    errno = EINVAL;
    return false;
  }
  req.id = id.handle;
  req.qp_num = qp_num;
  if (!id.connect_data.empty()) std::memcpy(req.private_data, id.connect_data.data(), id.connect_data.size());
  if (len) std::memcpy(req.private_data + id.connect_data.size(), p->private_data, len);
  req.private_data_len = static_cast<uint32_t>(total);
  req.param.responder_resources = id.responder_resources;
  req.param.initiator_depth = id.initiator_depth;
  req.param.srq = srq;
  req.param.flow_control = p ? p->flow_control : 0;
  req.param.retry_count = p ? p->retry_count : 7;
  req.param.rnr_retry_count = p ? p->rnr_retry_count : 7;
  return true;
}

// rdma-core's ucma_valid_param: a TCP-space id needs parameters unless it
// has a QP, and depths within the device's (0xFF: the device's own).
bool valid_param(const Id& id, const rdma_conn_param* p) {
  if (id.id.ps != RDMA_PS_TCP) return true;
  if (!p) return id.id.qp != nullptr;
  const CmDevice* d = id.device;
  return (p->responder_resources == RDMA_MAX_RESP_RES || !d || p->responder_resources <= d->max_responder_resources) &&
         (p->initiator_depth == RDMA_MAX_INIT_DEPTH || !d || p->initiator_depth <= d->max_initiator_depth);
}

uint8_t device_max(const Id& id, uint8_t CmDevice::*field) { return id.device ? id.device->*field : 0; }

int send_connect(api::MsgType type, Id& id, const rdma_conn_param* p, uint32_t qp_num, bool srq) {
  api::CmConnect req;
  if (!make_connect(id, p, qp_num, srq, req)) return -1;
  return status_of(request(type, &req, sizeof req).value);
}

// The QP number and SRQ flag a connection offers: the id's QP's, else the
// parameters' (a QP the application made itself).
uint32_t qp_num_of(const rdma_cm_id& id, const rdma_conn_param* p) { return id.qp ? id.qp->qp_num : p ? p->qp_num : 0; }

}  // namespace
}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT int rdma_listen(rdma_cm_id* id, int backlog) {
  if (init() != 0) return -1;
  if (!id) return fail(EINVAL);
  Id& i = *Id::from(id);
  const api::CmIdRequest req{i.handle, static_cast<uint32_t>(backlog)};
  if (status_of(request(api::MsgType::CmListen, &req, sizeof req).value) != 0) return -1;
  i.state = State::Listen;
  return query(i, false);
}

IBFAB_RDMACM_EXPORT int rdma_connect(rdma_cm_id* id, rdma_conn_param* conn_param) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);  // the kernel: no device bound yet
  Id& i = *Id::from(id);
  if (!valid_param(i, conn_param)) return fail(EINVAL);
  const rdma_conn_param* p = conn_param;
  i.initiator_depth = p && p->initiator_depth != RDMA_MAX_INIT_DEPTH ? p->initiator_depth
                                                                      : device_max(i, &CmDevice::max_initiator_depth);
  i.responder_resources = p && p->responder_resources != RDMA_MAX_RESP_RES
                              ? p->responder_resources
                              : device_max(i, &CmDevice::max_responder_resources);
  const bool srq = id->qp ? id->qp->srq != nullptr : p && p->srq;
  if (send_connect(api::MsgType::CmConnect, i, p, qp_num_of(*id, p), srq) != 0) return -1;
  i.connect_data.clear();
  i.state = State::Connect;
  return complete(i);
}

// A UD id's answer goes at once; rdma-core does not wait for an event. A
// connected id's QP is ready (RTS) before its REP goes; the call then waits
// for ESTABLISHED on an id with its own channel.
IBFAB_RDMACM_EXPORT int rdma_accept(rdma_cm_id* id, rdma_conn_param* conn_param) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);
  Id& i = *Id::from(id);
  if (!valid_param(i, conn_param)) return fail(EINVAL);
  const rdma_conn_param* p = conn_param;
  if (!p || p->initiator_depth == RDMA_MAX_INIT_DEPTH)
    i.initiator_depth = std::min(i.initiator_depth, device_max(i, &CmDevice::max_initiator_depth));
  else
    i.initiator_depth = p->initiator_depth;
  if (!p || p->responder_resources == RDMA_MAX_RESP_RES)
    i.responder_resources = std::min(i.responder_resources, device_max(i, &CmDevice::max_responder_resources));
  else
    i.responder_resources = p->responder_resources;
  if (connected(*id) && (qp_to_rtr(*id, i.responder_resources) != 0 || qp_to_rts(*id, i.initiator_depth) != 0))
    return -1;
  const bool srq = id->srq || (id->qp && id->qp->srq);
  if (send_connect(api::MsgType::CmAccept, i, p, qp_num_of(*id, p), srq) != 0) {
    const int e = errno;
    qp_to_error(*id);
    return fail(e);
  }
  return connected(*id) ? complete(i) : 0;
}

IBFAB_RDMACM_EXPORT int rdma_reject(rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  if (init() != 0) return -1;
  if (!id) return fail(EINVAL);
  rdma_conn_param p{};
  p.private_data = private_data;
  p.private_data_len = private_data_len;
  return send_connect(api::MsgType::CmReject, *Id::from(id), &p, 0, false);
}

// The reason (vendor option not supported) only exists for connected
// modes: a UD id's SIDR answer has a status, not a reason.
IBFAB_RDMACM_EXPORT int rdma_reject_ece(rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  return rdma_reject(id, private_data, private_data_len);
}

// The active side's third step of a connected handshake (the RTU), for an
// id whose QP the application moves itself after CONNECT_RESPONSE; a UD id
// gets what the kernel's rdma_accept without parameters gives it.
IBFAB_RDMACM_EXPORT int rdma_establish(rdma_cm_id* id) {
  if (init() != 0) return -1;
  if (!id || id->qp || !id->verbs) return fail(EINVAL);
  return send_connect(api::MsgType::CmAccept, *Id::from(id), nullptr, 0, false);
}

// A connected id: COMM_EST makes a connection whose RTU has not come
// ESTABLISHED (the event follows); a LID change is noted. A UD id: a
// communication-established notice needs a REP sent, which a SIDR exchange
// never leaves; a LID change is noted; nothing else is known.
IBFAB_RDMACM_EXPORT int rdma_notify(rdma_cm_id* id, ibv_event_type event) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);
  Id& i = *Id::from(id);
  if (connected(*id)) {
    const api::CmIdRequest req{i.handle, static_cast<uint32_t>(event)};
    return status_of(request(api::MsgType::CmNotify, &req, sizeof req).value);
  }
  if (!has_cm_id(i)) return 0;
  return event == IBV_EVENT_LID_CHANGE ? 0 : fail(EINVAL);
}

// The QP goes to the error state first. A connected id sends a DREQ, or
// the DREP to the peer's; on an id with its own channel the call then
// waits for DISCONNECTED (the DREP, or the DREQ's timeout), as rdma-core
// does. A UD id: the kernel finds no connected IB CM state to send a DREQ
// from and answers 0 (or EINVAL without a CM id); no event follows, so
// unlike rdma-core an id with its own channel does not wait for one (it
// would wait for ever).
IBFAB_RDMACM_EXPORT int rdma_disconnect(rdma_cm_id* id) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);
  if (qp_to_error(*id) != 0) return -1;
  Id& i = *Id::from(id);
  if (connected(*id)) {
    const api::CmIdRequest req{i.handle, 0};
    if (status_of(request(api::MsgType::CmDisconnect, &req, sizeof req).value) != 0) return -1;
    return complete(i);
  }
  return has_cm_id(i) ? 0 : fail(EINVAL);
}

IBFAB_RDMACM_EXPORT int rdma_set_local_ece(rdma_cm_id* id, ibv_ece* ece) {
  if (init() != 0) return -1;
  if (!id || id->qp || !ece || !ece->vendor_id || ece->comp_mask) return fail(EINVAL);
  Id::from(id)->local_ece.vendor_id = ece->vendor_id;
  Id::from(id)->local_ece.options = ece->options;
  return 0;
}

IBFAB_RDMACM_EXPORT int rdma_get_remote_ece(rdma_cm_id* id, ibv_ece* ece) {
  if (init() != 0) return -1;
  if (!id || id->qp || !ece) return fail(EINVAL);
  ece->vendor_id = Id::from(id)->remote_ece.vendor_id;
  ece->options = Id::from(id)->remote_ece.options;
  ece->comp_mask = 0;
  return 0;
}
