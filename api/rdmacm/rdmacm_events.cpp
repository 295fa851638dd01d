// Events: reading the engine's api::CmEvent from a channel and making the
// rdma_cm_event the application sees, with the work rdma-core's
// rdma_get_cm_event does on the way (asking the engine about an id whose
// address or route was resolved, making a connection request's new id,
// attaching the QP to a joined group); acking; and the wait of the calls
// made on an id with its own channel.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "api/client/cm_link.h"
#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

// The event's private data, kept in the Event; its length.
uint8_t copy_private_data(Event& ev, const api::CmEvent& e, const void*& data) {
  const auto len = static_cast<uint8_t>(std::min<uint32_t>(e.private_data_len, api::kCmPrivateData));
  if (len) {
    std::memcpy(ev.private_data, e.private_data, len);
    data = ev.private_data;
  }
  return len;
}

// param.ud for a UD id, param.conn for the others (rdma-core's
// ucma_copy_ud_event, ucma_copy_conn_event).
void copy_param(Event& ev, const Id& id, const api::CmEvent& e) {
  if (id.id.qp_type == IBV_QPT_UD) {
    rdma_ud_param& ud = ev.event.param.ud;
    ud.private_data_len = copy_private_data(ev, e, ud.private_data);
    copy_ah(ud.ah_attr, e.ah);
    ud.qp_num = e.qp_num;
    ud.qkey = e.qkey;
  } else {
    rdma_conn_param& conn = ev.event.param.conn;
    conn.private_data_len = copy_private_data(ev, e, conn.private_data);
    conn.responder_resources = e.param.responder_resources;
    conn.initiator_depth = e.param.initiator_depth;
    conn.flow_control = e.param.flow_control;
    conn.retry_count = e.param.retry_count;
    conn.rnr_retry_count = e.param.rnr_retry_count;
    conn.srq = e.param.srq;
    conn.qp_num = e.qp_num;
  }
}

// rdma-core's ucma_process_conn_resp: the QP to RTR and RTS with the
// connection's attributes, then the RTU. 0, or -errno (the QP in error).
int process_response(Id& id) {
  int ret = qp_to_rtr(id.id, RDMA_MAX_RESP_RES);
  if (ret == 0) ret = qp_to_rts(id.id, RDMA_MAX_INIT_DEPTH);
  if (ret == 0) {
    api::CmConnect rtu;
    rtu.id = id.handle;
    ret = status_of(request(api::MsgType::CmAccept, &rtu, sizeof rtu).value);
  }
  if (ret == 0) return 0;
  const int e = errno;
  qp_to_error(id.id);
  return -e;
}

// A connection request's new id (rdma-core's ucma_process_conn_req): on
// the listener's channel (its own, if the listener has its own), asked
// about its addresses and path. False, the request dropped, if it fails.
bool process_request(Event& ev, Id& listener, const api::CmEvent& e) {
  Id* id = adopt_id(e.id, listener);
  ev.event.listen_id = &listener.id;
  ev.event.id = &id->id;
  if (id->id.qp_type != IBV_QPT_UD) {
    id->initiator_depth = ev.event.param.conn.initiator_depth;
    id->responder_resources = ev.event.param.conn.responder_resources;
  }
  int ret = listener.sync ? rdma_migrate_id(&id->id, nullptr) : 0;
  if (ret == 0) ret = query(*id, true);
  if (ret != 0) {
    rdma_destroy_id(&id->id);
    complete_event(listener, nullptr);
    return false;
  }
  return true;
}

// Events of a join: its user context as private data (length 0), and on
// MULTICAST_JOIN the QP attached, or MULTICAST_ERROR with status -1.
bool dispatch_join(Event& ev, const api::CmEvent& e) {
  Join* j = claim_join(e.uid);
  if (!j) return false;  // a join left: dropped
  Id& id = *j->owner;
  ev.owner = &id;
  ev.join = j;
  ev.event.id = &id.id;
  if (e.event == RDMA_CM_EVENT_MULTICAST_JOIN) {
    copy_param(ev, id, e);
    ev.event.status = process_join(*j, id.id, e);
    if (ev.event.status) ev.event.event = RDMA_CM_EVENT_MULTICAST_ERROR;
  }
  ev.event.param.ud.private_data = j->context;
  ev.event.param.ud.private_data_len = 0;
  return true;
}

// Fills `ev` from the engine's event; false if the event is dropped (its id
// or join is gone, or a request's new id could not be made).
bool dispatch(Event& ev, const api::CmEvent& e) {
  ev.event.event = static_cast<rdma_cm_event_type>(e.event);
  ev.event.status = e.status;
  if (e.event == RDMA_CM_EVENT_MULTICAST_JOIN || e.event == RDMA_CM_EVENT_MULTICAST_ERROR) return dispatch_join(ev, e);
  if (e.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
    Id* listener = claim_id(e.listen_id);
    if (!listener) {
      // The listener is gone: so is the request, as the kernel drops it.
      const api::CmIdRequest req{e.id, 0};
      request(api::MsgType::CmDestroyId, &req, sizeof req);
      return false;
    }
    ev.owner = listener;
    ev.event.id = &listener->id;
    copy_param(ev, *listener, e);
    return process_request(ev, *listener, e);
  }
  Id* id = claim_id(e.id);
  if (!id) return false;
  ev.owner = id;
  ev.event.id = &id->id;
  switch (e.event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (query(*id, false) != 0) {
        ev.event.event = RDMA_CM_EVENT_ADDR_ERROR;
        ev.event.status = -1;
      }
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      if (query(*id, true) != 0) {
        ev.event.event = RDMA_CM_EVENT_ROUTE_ERROR;
        ev.event.status = -1;
      }
      break;
    case RDMA_CM_EVENT_REJECTED:
      copy_param(ev, *id, e);
      qp_to_error(id->id);
      break;
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
      copy_param(ev, *id, e);
      if (id->id.qp) {  // librdmacm finishes the handshake itself
        ev.event.status = process_response(*id);
        ev.event.event = ev.event.status ? RDMA_CM_EVENT_CONNECT_ERROR : RDMA_CM_EVENT_ESTABLISHED;
      }
      break;
    default:
      copy_param(ev, *id, e);
      break;
  }
  return true;
}

}  // namespace

int complete(Id& id) {
  if (!id.sync) return 0;
  if (id.id.event) {
    rdma_ack_cm_event(id.id.event);
    id.id.event = nullptr;
  }
  if (rdma_get_cm_event(id.id.channel, &id.id.event) != 0) return -1;
  const rdma_cm_event& ev = *id.id.event;
  if (!ev.status) return 0;
  if (ev.event == RDMA_CM_EVENT_REJECTED) return fail(ECONNREFUSED);
  return fail(ev.status < 0 ? -ev.status : ev.status);
}

}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

// Blocks until an event comes unless the application made channel->fd
// non-blocking (then -1 with EAGAIN while there is none).
IBFAB_RDMACM_EXPORT int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event) {
  if (init() != 0) return -1;
  if (!channel || !event) return fail(EINVAL);
  for (;;) {
    api::CmEvent e;
    const ssize_t n = ::recv(channel->fd, &e, sizeof e, 0);
    if (n < 0) return -1;
    if (n == 0) {
      // No one holds the other end any more: the application destroyed the
      // channel under this call, which then waits for ever, as a read of
      // the kernel's rdma_cm file would; or the engine is gone (ENODEV).
      client::CmLink* link = client::CmLink::get();
      if (!link || !link->alive()) return fail(ENODEV);
      for (;;) ::pause();
    }
    if (n != static_cast<ssize_t>(sizeof e)) continue;
    auto ev = std::make_unique<Event>();
    if (dispatch(*ev, e)) {
      *event = &ev.release()->event;
      return 0;
    }
  }
}

IBFAB_RDMACM_EXPORT int rdma_ack_cm_event(rdma_cm_event* event) {
  if (!event) return fail(EINVAL);
  Event* ev = Event::from(event);
  complete_event(*ev->owner, ev->join);
  delete ev;
  return 0;
}
