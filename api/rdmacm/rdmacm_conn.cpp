// Connections. On a UD id (the only kind the engine connects) "connect" is
// IB CM's SIDR: rdma_connect sends the request, rdma_accept and
// rdma_reject answer it, and the active side's ESTABLISHED (or
// UNREACHABLE) event carries the peer's QP number, Q_Key and address
// handle. What the other calls do to a UD id is what the kernel's rdma_cm
// does: there is no disconnection handshake, and notifying an id that has
// an IB CM id only accepts a LID change.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

// Whether the kernel would have an IB CM id behind `id`: a connection sent
// or received, or a listen on a device.
bool has_cm_id(const Id& id) { return id.state == State::Connect || id.state == State::Listen; }

// The connection's request body: the id's connect data (rdma_create_ep's),
// then the application's private data. False (EINVAL) when it is longer
// than any SIDR message carries.
bool make_connect(Id& id, const void* data, std::size_t len, uint32_t qp_num, api::CmConnect& req) {
  if (!data) len = 0;
  const std::size_t total = id.connect_data.size() + len;
  if (total > sizeof req.private_data) {
    errno = EINVAL;
    return false;
  }
  req.id = id.handle;
  req.qp_num = qp_num;
  if (!id.connect_data.empty()) std::memcpy(req.private_data, id.connect_data.data(), id.connect_data.size());
  if (len) std::memcpy(req.private_data + id.connect_data.size(), data, len);
  req.private_data_len = static_cast<uint32_t>(total);
  return true;
}

// rdma-core's ucma_valid_param: only a TCP-space id without a QP needs them.
bool valid_param(const Id& id, const rdma_conn_param* p) { return id.id.ps != RDMA_PS_TCP || id.id.qp || p; }

int send_connect(api::MsgType type, Id& id, const void* data, std::size_t len, uint32_t qp_num) {
  api::CmConnect req;
  if (!make_connect(id, data, len, qp_num, req)) return -1;
  return status_of(request(type, &req, sizeof req).value);
}

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
  const uint32_t qp_num = id->qp ? id->qp->qp_num : conn_param ? conn_param->qp_num : 0;
  const void* data = conn_param ? conn_param->private_data : nullptr;
  if (send_connect(api::MsgType::CmConnect, i, data, conn_param ? conn_param->private_data_len : 0, qp_num) != 0)
    return -1;
  i.connect_data.clear();
  i.state = State::Connect;
  return complete(i);
}

// A UD id's answer goes at once; rdma-core does not wait for an event.
IBFAB_RDMACM_EXPORT int rdma_accept(rdma_cm_id* id, rdma_conn_param* conn_param) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);
  Id& i = *Id::from(id);
  if (!valid_param(i, conn_param)) return fail(EINVAL);
  const uint32_t qp_num = id->qp ? id->qp->qp_num : conn_param ? conn_param->qp_num : 0;
  const void* data = conn_param ? conn_param->private_data : nullptr;
  if (send_connect(api::MsgType::CmAccept, i, data, conn_param ? conn_param->private_data_len : 0, qp_num) != 0) {
    const int e = errno;
    qp_to_error(*id);
    return fail(e);
  }
  return id->qp_type == IBV_QPT_UD ? 0 : complete(i);
}

IBFAB_RDMACM_EXPORT int rdma_reject(rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  if (init() != 0) return -1;
  if (!id) return fail(EINVAL);
  return send_connect(api::MsgType::CmReject, *Id::from(id), private_data, private_data_len, 0);
}

// The reason (vendor option not supported) only exists for connected
// modes: a UD id's SIDR answer has a status, not a reason.
IBFAB_RDMACM_EXPORT int rdma_reject_ece(rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  return rdma_reject(id, private_data, private_data_len);
}

// The active side's third step of a connected handshake; a UD id gets what
// the kernel's rdma_accept without parameters gives it.
IBFAB_RDMACM_EXPORT int rdma_establish(rdma_cm_id* id) {
  if (init() != 0) return -1;
  if (!id || id->qp || !id->verbs) return fail(EINVAL);
  return send_connect(api::MsgType::CmAccept, *Id::from(id), nullptr, 0, 0);
}

IBFAB_RDMACM_EXPORT int rdma_notify(rdma_cm_id* id, ibv_event_type event) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);
  if (!has_cm_id(*Id::from(id))) return 0;
  // IB CM: a communication-established notice needs a REP sent, which a
  // SIDR exchange never leaves; a LID change is noted; nothing else is known.
  return event == IBV_EVENT_LID_CHANGE ? 0 : fail(EINVAL);
}

// The QP goes to the error state; the kernel then finds no connected IB CM
// state to send a DREQ from and answers 0 (or EINVAL without a CM id). No
// event follows on a UD id, so unlike rdma-core an id with its own channel
// does not wait for one (it would wait forever).
IBFAB_RDMACM_EXPORT int rdma_disconnect(rdma_cm_id* id) {
  if (init() != 0) return -1;
  if (!id || !id->verbs) return fail(EINVAL);
  if (qp_to_error(*id) != 0) return -1;
  Id& i = *Id::from(id);
  if (!has_cm_id(i)) return fail(EINVAL);
  return id->qp_type == IBV_QPT_UD ? 0 : complete(i);
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
