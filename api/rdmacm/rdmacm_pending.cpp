// Placeholders for the connection manager calls of librdmacm.so.1, until the
// connection manager lands (issue 6). Each fails as rdma-core 44 fails on a
// host without the kernel's rdma_cm: no device, no event channel, no id.
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include <cerrno>
#include <cstdint>

#include "api/rdmacm/export.h"

namespace ibfab::rdmacm {
namespace {

// errno = ENODEV and -1, as a call fails without the kernel's rdma_cm.
int no_device() {
  errno = ENODEV;
  return -1;
}

}  // namespace
}  // namespace ibfab::rdmacm

using ibfab::rdmacm::no_device;

// --- Devices and event channels ---------------------------------------------

IBFAB_RDMACM_EXPORT ibv_context** rdma_get_devices(int* num_devices) {
  if (num_devices != nullptr) *num_devices = 0;
  errno = ENODEV;
  return nullptr;
}

// No list is ever handed out, so there is nothing to free.
IBFAB_RDMACM_EXPORT void rdma_free_devices(ibv_context** /*list*/) {}

IBFAB_RDMACM_EXPORT rdma_event_channel* rdma_create_event_channel() {
  errno = ENODEV;
  return nullptr;
}

// No channel is ever handed out, so there is nothing to close.
IBFAB_RDMACM_EXPORT void rdma_destroy_event_channel(rdma_event_channel* /*channel*/) {}

IBFAB_RDMACM_EXPORT int rdma_get_cm_event(rdma_event_channel* /*channel*/, rdma_cm_event** /*event*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_ack_cm_event(rdma_cm_event* event) {
  if (event == nullptr) {
    errno = EINVAL;
    return -1;
  }
  return no_device();
}

// --- Identifiers -----------------------------------------------------------

IBFAB_RDMACM_EXPORT int rdma_create_id(rdma_event_channel* /*channel*/, rdma_cm_id** /*id*/, void* /*context*/,
                                       rdma_port_space /*ps*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_create_ep(rdma_cm_id** /*id*/, rdma_addrinfo* /*res*/, ibv_pd* /*pd*/,
                                       ibv_qp_init_attr* /*qp_init_attr*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT void rdma_destroy_ep(rdma_cm_id* /*id*/) {}

IBFAB_RDMACM_EXPORT int rdma_destroy_id(rdma_cm_id* /*id*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_migrate_id(rdma_cm_id* /*id*/, rdma_event_channel* /*channel*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_set_option(rdma_cm_id* /*id*/, int /*level*/, int /*optname*/, void* /*optval*/,
                                        size_t /*optlen*/) {
  return no_device();
}

// No id exists, so no port is bound: 0.
IBFAB_RDMACM_EXPORT __be16 rdma_get_src_port(rdma_cm_id* /*id*/) { return 0; }

IBFAB_RDMACM_EXPORT __be16 rdma_get_dst_port(rdma_cm_id* /*id*/) { return 0; }

// --- Addresses and routes --------------------------------------------------

IBFAB_RDMACM_EXPORT int rdma_getaddrinfo(const char* /*node*/, const char* /*service*/, const rdma_addrinfo* /*hints*/,
                                         rdma_addrinfo** /*res*/) {
  return no_device();
}

// No list is ever handed out, so there is nothing to free.
IBFAB_RDMACM_EXPORT void rdma_freeaddrinfo(rdma_addrinfo* /*res*/) {}

IBFAB_RDMACM_EXPORT int rdma_bind_addr(rdma_cm_id* /*id*/, sockaddr* /*addr*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_resolve_addr(rdma_cm_id* /*id*/, sockaddr* /*src_addr*/, sockaddr* /*dst_addr*/,
                                          int /*timeout_ms*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_resolve_route(rdma_cm_id* /*id*/, int /*timeout_ms*/) { return no_device(); }

// --- Queue pairs and shared receive queues ---------------------------------

IBFAB_RDMACM_EXPORT int rdma_create_qp(rdma_cm_id* /*id*/, ibv_pd* /*pd*/, ibv_qp_init_attr* /*qp_init_attr*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_create_qp_ex(rdma_cm_id* /*id*/, ibv_qp_init_attr_ex* /*qp_init_attr*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT void rdma_destroy_qp(rdma_cm_id* /*id*/) {}

IBFAB_RDMACM_EXPORT int rdma_init_qp_attr(rdma_cm_id* /*id*/, ibv_qp_attr* /*qp_attr*/, int* /*qp_attr_mask*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_create_srq(rdma_cm_id* /*id*/, ibv_pd* /*pd*/, ibv_srq_init_attr* /*attr*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_create_srq_ex(rdma_cm_id* /*id*/, ibv_srq_init_attr_ex* /*attr*/) { return no_device(); }

IBFAB_RDMACM_EXPORT void rdma_destroy_srq(rdma_cm_id* /*id*/) {}

// --- Connections -----------------------------------------------------------

IBFAB_RDMACM_EXPORT int rdma_connect(rdma_cm_id* /*id*/, rdma_conn_param* /*conn_param*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_establish(rdma_cm_id* /*id*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_listen(rdma_cm_id* /*id*/, int /*backlog*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_get_request(rdma_cm_id* /*listen*/, rdma_cm_id** /*id*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_accept(rdma_cm_id* /*id*/, rdma_conn_param* /*conn_param*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_reject(rdma_cm_id* /*id*/, const void* /*private_data*/,
                                    std::uint8_t /*private_data_len*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_reject_ece(rdma_cm_id* /*id*/, const void* /*private_data*/,
                                        std::uint8_t /*private_data_len*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_notify(rdma_cm_id* /*id*/, ibv_event_type /*event*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_disconnect(rdma_cm_id* /*id*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_set_local_ece(rdma_cm_id* /*id*/, ibv_ece* /*ece*/) { return no_device(); }

IBFAB_RDMACM_EXPORT int rdma_get_remote_ece(rdma_cm_id* /*id*/, ibv_ece* /*ece*/) { return no_device(); }

// --- Multicast -------------------------------------------------------------

IBFAB_RDMACM_EXPORT int rdma_join_multicast(rdma_cm_id* /*id*/, sockaddr* /*addr*/, void* /*context*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_join_multicast_ex(rdma_cm_id* /*id*/, rdma_cm_join_mc_attr_ex* /*mc_join_attr*/,
                                               void* /*context*/) {
  return no_device();
}

IBFAB_RDMACM_EXPORT int rdma_leave_multicast(rdma_cm_id* /*id*/, sockaddr* /*addr*/) { return no_device(); }
