// IBVERBS_PRIVATE_34: the interface between libibverbs and its providers,
// all 71 names rdma-core 44 exports there except ibv_query_gid_type (the
// device code's). ibfab drives no provider, but the real libmlx5.so.1 and
// libefa.so.1 are loaded by ib_send_bw/ib_send_lat and linked BIND_NOW, so
// each name they import must resolve, and their constructors call
// verbs_register_driver_34().
//
// Contract:
// - verbs_register_driver_34 accepts the provider and ignores it: no device
//   is ever handed to a provider, so none of the calls below is reached
//   through ibfab's own objects.
// - A kernel command (ibv_cmd_*, execute_ioctl) fails as rdma-core's do when
//   the kernel lacks the command: an int result of EOPNOTSUPP, or NULL with
//   errno EOPNOTSUPP for verbs_open_device and _verbs_init_and_alloc_context.
// - The helpers do the least that keeps a caller consistent: verbs_init_cq
//   initialises the CQ as rdma-core does; __verbs_log, verbs_set_ops and
//   verbs_uninit_context do nothing; ibv_read_ibdev_sysfs_file finds no file.
//
// Prototypes: rdma-core keeps driver.h, cmd_ioctl.h and kern-abi.h private
// (Debian's libibverbs-dev does not install them), so there is no header to
// check these against. Each signature below follows rdma-core 44's
// declaration; its own structures (verbs_mr, the ibv_* command buffers, ...)
// are declared incomplete here, the kernel's answers come from the installed
// <rdma/ib_user_verbs.h>. Under C linkage only the shape matters: every
// argument is a pointer, an integer or an enum.
#include <infiniband/verbs.h>
#include <pthread.h>
#include <rdma/ib_user_verbs.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "api/verbs/export.h"

// rdma-core's private structures, never looked into.
struct ibv_command_buffer;
struct verbs_counters;
struct verbs_context_ops;
struct verbs_cq;
struct verbs_device_ops;
struct verbs_dm;
struct verbs_flow_action;
struct verbs_mr;
struct verbs_qp;
struct verbs_srq;
struct verbs_sysfs_dev;
struct verbs_xrcd;
// Its command buffers (kern-abi.h), one per kernel write() command.
struct ibv_alloc_mw;
struct ibv_alloc_pd;
struct ibv_create_cq;
struct ibv_create_cq_ex;
struct ibv_create_qp;
struct ibv_create_qp_ex;
struct ibv_create_srq;
struct ibv_create_wq;
struct ibv_create_xsrq;
struct ibv_get_context;
struct ibv_modify_cq;
struct ibv_modify_qp;
struct ibv_modify_qp_ex;
struct ibv_modify_srq;
struct ibv_modify_wq;
struct ibv_open_qp;
struct ibv_open_xrcd;
struct ibv_query_port;
struct ibv_query_qp;
struct ibv_query_srq;
struct ibv_reg_mr;
struct ibv_rereg_mr;
struct ibv_resize_cq;

namespace ibfab::verbs {
namespace {

// What a kernel command without kernel support returns.
constexpr int kNoCommand = EOPNOTSUPP;

}  // namespace
}  // namespace ibfab::verbs

using ibfab::verbs::kNoCommand;

// --- Provider registration and library helpers ----------------------------

IBFAB_VERBS_EXPORT void verbs_register_driver_34(const verbs_device_ops* /*ops*/) {}

// rdma-core's destroy paths treat EIO as success when this is set (a device
// gone from under its objects). Data, one byte, false.
IBFAB_VERBS_EXPORT bool verbs_allow_disassociate_destroy = false;

IBFAB_VERBS_EXPORT void __verbs_log(verbs_context* /*ctx*/, std::uint32_t /*level*/, const char* /*fmt*/, ...) {}

IBFAB_VERBS_EXPORT void verbs_set_ops(verbs_context* /*vctx*/, const verbs_context_ops* /*ops*/) {}

IBFAB_VERBS_EXPORT void verbs_uninit_context(verbs_context* /*context*/) {}

// As rdma-core: the CQ's context, channel (whose refcnt counts it, under the
// context's mutex), user context, zeroed event counters, mutex and condition.
IBFAB_VERBS_EXPORT void verbs_init_cq(ibv_cq* cq, ibv_context* context, ibv_comp_channel* channel,
                                      void* cq_context) {
  cq->context = context;
  cq->channel = channel;
  if (channel != nullptr) {
    pthread_mutex_lock(&context->mutex);
    ++channel->refcnt;
    pthread_mutex_unlock(&context->mutex);
  }
  cq->cq_context = cq_context;
  cq->comp_events_completed = 0;
  cq->async_events_completed = 0;
  pthread_mutex_init(&cq->mutex, nullptr);
  pthread_cond_init(&cq->cond, nullptr);
}

IBFAB_VERBS_EXPORT ibv_context* verbs_open_device(ibv_device* /*device*/, void* /*private_data*/) {
  errno = EOPNOTSUPP;
  return nullptr;
}

IBFAB_VERBS_EXPORT void* _verbs_init_and_alloc_context(ibv_device* /*device*/, int /*cmd_fd*/,
                                                       std::size_t /*alloc_size*/,
                                                       verbs_context* /*context_offset*/,
                                                       std::uint32_t /*driver_id*/) {
  errno = EOPNOTSUPP;
  return nullptr;
}

// -1 with errno ENOENT, as for a sysfs file that is not there.
IBFAB_VERBS_EXPORT int ibv_read_ibdev_sysfs_file(char* /*buf*/, std::size_t /*size*/,
                                                 verbs_sysfs_dev* /*sysfs_dev*/, const char* /*fnfmt*/, ...) {
  errno = ENOENT;
  return -1;
}

// --- The ioctl() command path (cmd_ioctl.h) --------------------------------

// The attribute count of a command buffer: num_attrs, as no buffer is ever
// linked to another here.
IBFAB_VERBS_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, ibv_command_buffer* /*link*/) {
  return num_attrs;
}

IBFAB_VERBS_EXPORT int execute_ioctl(ibv_context* /*context*/, ibv_command_buffer* /*cmd*/) { return kNoCommand; }

// --- Kernel commands: context, device, port --------------------------------

IBFAB_VERBS_EXPORT int ibv_cmd_get_context(verbs_context*, ibv_get_context*, std::size_t,
                                           ib_uverbs_get_context_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_query_context(ibv_context*, ibv_command_buffer*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_query_device_any(ibv_context*, const ibv_query_device_ex_input*,
                                                ibv_device_attr_ex*, std::size_t,
                                                ib_uverbs_ex_query_device_resp*, std::size_t*) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_query_port(ibv_context*, std::uint8_t, ibv_port_attr*, struct ibv_query_port*,
                                          std::size_t) {
  return kNoCommand;
}

// --- PD, XRCD, MR, MW, DM ----------------------------------------------------

IBFAB_VERBS_EXPORT int ibv_cmd_alloc_pd(ibv_context*, ibv_pd*, struct ibv_alloc_pd*, std::size_t,
                                        ib_uverbs_alloc_pd_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_dealloc_pd(ibv_pd*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_open_xrcd(ibv_context*, verbs_xrcd*, int, ibv_xrcd_init_attr*,
                                         struct ibv_open_xrcd*, std::size_t, ib_uverbs_open_xrcd_resp*,
                                         std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_close_xrcd(verbs_xrcd*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_reg_mr(ibv_pd*, void*, std::size_t, std::uint64_t, int, verbs_mr*,
                                      struct ibv_reg_mr*, std::size_t, ib_uverbs_reg_mr_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_rereg_mr(verbs_mr*, std::uint32_t, void*, std::size_t, std::uint64_t, int,
                                        ibv_pd*, struct ibv_rereg_mr*, std::size_t, ib_uverbs_rereg_mr_resp*,
                                        std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_dereg_mr(verbs_mr*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_query_mr(ibv_pd*, verbs_mr*, std::uint32_t) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_advise_mr(ibv_pd*, ibv_advise_mr_advice, std::uint32_t, ibv_sge*, std::uint32_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_reg_dmabuf_mr(ibv_pd*, std::uint64_t, std::size_t, std::uint64_t, int, int,
                                             verbs_mr*) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_alloc_mw(ibv_pd*, ibv_mw_type, ibv_mw*, struct ibv_alloc_mw*, std::size_t,
                                        ib_uverbs_alloc_mw_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_dealloc_mw(ibv_mw*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_alloc_dm(ibv_context*, const ibv_alloc_dm_attr*, verbs_dm*, ibv_command_buffer*) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_free_dm(verbs_dm*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_reg_dm_mr(ibv_pd*, verbs_dm*, std::uint64_t, std::size_t, unsigned int, verbs_mr*,
                                         ibv_command_buffer*) {
  return kNoCommand;
}

// --- CQ ---------------------------------------------------------------------

IBFAB_VERBS_EXPORT int ibv_cmd_create_cq(ibv_context*, int, ibv_comp_channel*, int, ibv_cq*,
                                         struct ibv_create_cq*, std::size_t, ib_uverbs_create_cq_resp*,
                                         std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_create_cq_ex(ibv_context*, const ibv_cq_init_attr_ex*, verbs_cq*,
                                            struct ibv_create_cq_ex*, std::size_t,
                                            ib_uverbs_ex_create_cq_resp*, std::size_t, std::uint32_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_poll_cq(ibv_cq*, int, ibv_wc*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_req_notify_cq(ibv_cq*, int) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_resize_cq(ibv_cq*, int, struct ibv_resize_cq*, std::size_t,
                                         ib_uverbs_resize_cq_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_cq(ibv_cq*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_modify_cq(ibv_cq*, ibv_modify_cq_attr*, struct ibv_modify_cq*, std::size_t) {
  return kNoCommand;
}

// --- SRQ --------------------------------------------------------------------

IBFAB_VERBS_EXPORT int ibv_cmd_create_srq(ibv_pd*, ibv_srq*, ibv_srq_init_attr*, struct ibv_create_srq*,
                                          std::size_t, ib_uverbs_create_srq_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_create_srq_ex(ibv_context*, verbs_srq*, ibv_srq_init_attr_ex*,
                                             struct ibv_create_xsrq*, std::size_t, ib_uverbs_create_srq_resp*,
                                             std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_modify_srq(ibv_srq*, ibv_srq_attr*, int, struct ibv_modify_srq*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_query_srq(ibv_srq*, ibv_srq_attr*, struct ibv_query_srq*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_srq(ibv_srq*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_post_srq_recv(ibv_srq*, ibv_recv_wr*, ibv_recv_wr**) { return kNoCommand; }

// --- QP ---------------------------------------------------------------------

IBFAB_VERBS_EXPORT int ibv_cmd_create_qp(ibv_pd*, ibv_qp*, ibv_qp_init_attr*, struct ibv_create_qp*,
                                         std::size_t, ib_uverbs_create_qp_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_create_qp_ex(ibv_context*, verbs_qp*, ibv_qp_init_attr_ex*, struct ibv_create_qp*,
                                            std::size_t, ib_uverbs_create_qp_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_create_qp_ex2(ibv_context*, verbs_qp*, ibv_qp_init_attr_ex*,
                                             struct ibv_create_qp_ex*, std::size_t, ib_uverbs_ex_create_qp_resp*,
                                             std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_open_qp(ibv_context*, verbs_qp*, int, ibv_qp_open_attr*, struct ibv_open_qp*,
                                       std::size_t, ib_uverbs_create_qp_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_query_qp(ibv_qp*, ibv_qp_attr*, int, ibv_qp_init_attr*, struct ibv_query_qp*,
                                        std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_modify_qp(ibv_qp*, ibv_qp_attr*, int, struct ibv_modify_qp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_modify_qp_ex(ibv_qp*, ibv_qp_attr*, int, struct ibv_modify_qp_ex*, std::size_t,
                                            ib_uverbs_ex_modify_qp_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_qp(ibv_qp*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_post_send(ibv_qp*, ibv_send_wr*, ibv_send_wr**) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_post_recv(ibv_qp*, ibv_recv_wr*, ibv_recv_wr**) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_attach_mcast(ibv_qp*, const ibv_gid*, std::uint16_t) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_detach_mcast(ibv_qp*, const ibv_gid*, std::uint16_t) { return kNoCommand; }

// --- AH -----------------------------------------------------------------------

IBFAB_VERBS_EXPORT int ibv_cmd_create_ah(ibv_pd*, ibv_ah*, ibv_ah_attr*, ib_uverbs_create_ah_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_ah(ibv_ah*) { return kNoCommand; }

// --- WQ, RSS indirection table, flow steering, flow actions, counters --------

IBFAB_VERBS_EXPORT int ibv_cmd_create_wq(ibv_context*, ibv_wq_init_attr*, ibv_wq*, struct ibv_create_wq*,
                                         std::size_t, ib_uverbs_ex_create_wq_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_modify_wq(ibv_wq*, ibv_wq_attr*, struct ibv_modify_wq*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_wq(ibv_wq*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_create_rwq_ind_table(ibv_context*, ibv_rwq_ind_table_init_attr*, ibv_rwq_ind_table*,
                                                    ib_uverbs_ex_create_rwq_ind_table_resp*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_rwq_ind_table(ibv_rwq_ind_table*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_create_flow(ibv_qp*, ibv_flow*, ibv_flow_attr*, void*, std::size_t) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_flow(ibv_flow*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_create_flow_action_esp(ibv_context*, ibv_flow_action_esp_attr*, verbs_flow_action*,
                                                      ibv_command_buffer*) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_modify_flow_action_esp(verbs_flow_action*, ibv_flow_action_esp_attr*,
                                                      ibv_command_buffer*) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_flow_action(verbs_flow_action*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_create_counters(ibv_context*, ibv_counters_init_attr*, verbs_counters*,
                                               ibv_command_buffer*) {
  return kNoCommand;
}
IBFAB_VERBS_EXPORT int ibv_cmd_destroy_counters(verbs_counters*) { return kNoCommand; }
IBFAB_VERBS_EXPORT int ibv_cmd_read_counters(verbs_counters*, std::uint64_t*, std::uint32_t, std::uint32_t,
                                             ibv_command_buffer*) {
  return kNoCommand;
}
