// The synchronous endpoint calls: rdma_create_ep makes an id with its own
// channel from rdma_getaddrinfo's answer and takes it as far as the answer
// says (bound for a passive end; address and route resolved, QP made, for
// an active one), each step waiting for its event; rdma_get_request waits
// for a listener's next connection request.
#include <rdma/rdma_verbs.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

int passive_ep(rdma_cm_id* id, rdma_addrinfo* res, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr) {
  if (rdma_bind_addr(id, res->ai_src_addr) != 0) return -1;
  if (pd) id->pd = pd;
  if (qp_init_attr) {
    auto attr = std::make_unique<ibv_qp_init_attr>(*qp_init_attr);
    attr->qp_type = static_cast<ibv_qp_type>(res->ai_qp_type);
    Id::from(id)->qp_init_attr = std::move(attr);
  }
  return 0;
}

int active_ep(rdma_cm_id* id, rdma_addrinfo* res, ibv_pd* pd, ibv_qp_init_attr* qp_init_attr) {
  if (rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, 2000) != 0) return -1;
  if (res->ai_route_len) {
    if (rdma_set_option(id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, res->ai_route, res->ai_route_len) != 0) return -1;
    if (complete(*Id::from(id)) != 0) return -1;
  } else if (rdma_resolve_route(id, 2000) != 0) {
    return -1;
  }
  if (qp_init_attr) {
    qp_init_attr->qp_type = static_cast<ibv_qp_type>(res->ai_qp_type);
    if (rdma_create_qp(id, pd, qp_init_attr) != 0) return -1;
  }
  if (res->ai_connect_len) {
    const auto* data = static_cast<const uint8_t*>(res->ai_connect);
    Id::from(id)->connect_data.assign(data, data + res->ai_connect_len);
  }
  return 0;
}

}  // namespace
}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT int rdma_create_ep(rdma_cm_id** id, rdma_addrinfo* res, ibv_pd* pd,
                                       ibv_qp_init_attr* qp_init_attr) {
  if (init() != 0) return -1;
  if (!id || !res) return fail(EINVAL);
  Id* made = create_id(nullptr, nullptr, static_cast<rdma_port_space>(res->ai_port_space),
                       static_cast<ibv_qp_type>(res->ai_qp_type));
  if (!made) return -1;
  const int ret = res->ai_flags & RAI_PASSIVE ? passive_ep(&made->id, res, pd, qp_init_attr)
                                              : active_ep(&made->id, res, pd, qp_init_attr);
  if (ret != 0) {
    const int e = errno;
    rdma_destroy_ep(&made->id);
    return fail(e);
  }
  *id = &made->id;
  return 0;
}

IBFAB_RDMACM_EXPORT void rdma_destroy_ep(rdma_cm_id* id) {
  if (!id) return;
  if (id->qp) rdma_destroy_qp(id);
  if (id->srq) rdma_destroy_srq(id);
  Id::from(id)->qp_init_attr.reset();
  rdma_destroy_id(id);
}

IBFAB_RDMACM_EXPORT int rdma_get_request(rdma_cm_id* listen, rdma_cm_id** id) {
  if (init() != 0) return -1;
  if (!listen || !id || !Id::from(listen)->sync) return fail(EINVAL);
  if (listen->event) {
    rdma_ack_cm_event(listen->event);
    listen->event = nullptr;
  }
  rdma_cm_event* event = nullptr;
  if (rdma_get_cm_event(listen->channel, &event) != 0) return -1;
  int ret = 0;
  if (event->event == RDMA_CM_EVENT_REJECTED) {
    ret = fail(ECONNREFUSED);
  } else if (event->status) {
    ret = fail(event->status < 0 ? -event->status : event->status);
  } else if (event->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
    ret = fail(EINVAL);
  } else if (const ibv_qp_init_attr* wanted = Id::from(listen)->qp_init_attr.get()) {
    ibv_qp_init_attr attr = *wanted;
    ret = rdma_create_qp(event->id, listen->pd, &attr);
  }
  if (ret != 0) {
    listen->event = event;
    return ret;
  }
  *id = event->id;
  (*id)->event = event;
  return 0;
}
