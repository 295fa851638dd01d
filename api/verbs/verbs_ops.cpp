// The ops table of every context. verbs.h's inline functions call through
// it (poll, post, notify with no NULL check; the verbs_context ops through
// verbs_get_ctx_op). What ibfab implements points at its code; every other
// op is filled with a function that fails with EOPNOTSUPP, so that no
// inline call jumps through NULL.
#include <cerrno>
#include <type_traits>

#include "api/verbs/verbs_internal.h"

namespace ibfab::verbs {
namespace {

template <class R, class... A>
R unsupported(A...) {
  errno = EOPNOTSUPP;
  if constexpr (std::is_pointer_v<R>) return nullptr;
  else if constexpr (std::is_void_v<R>) return;
  else return static_cast<R>(EOPNOTSUPP);
}

template <class R, class... A>
void fill(R (*&op)(A...)) {
  if (!op) op = &unsupported<R, A...>;
}

}  // namespace

void install_ops(verbs_context& v) {
  ibv_context_ops& o = v.context.ops;
  o.poll_cq = poll_cq;
  o.req_notify_cq = req_notify_cq;
  o.post_send = post_send;
  o.post_recv = post_recv;
  o.post_srq_recv = post_srq_recv;
  o.bind_mw = bind_mw;
  o.alloc_mw = alloc_mw;
  o.dealloc_mw = dealloc_mw;
  fill(o._compat_query_device);
  fill(o._compat_query_port);
  fill(o._compat_alloc_pd);
  fill(o._compat_dealloc_pd);
  fill(o._compat_reg_mr);
  fill(o._compat_rereg_mr);
  fill(o._compat_dereg_mr);
  fill(o.dealloc_mw);
  fill(o._compat_create_cq);
  fill(o._compat_cq_event);
  fill(o._compat_resize_cq);
  fill(o._compat_destroy_cq);
  fill(o._compat_create_srq);
  fill(o._compat_modify_srq);
  fill(o._compat_query_srq);
  fill(o._compat_destroy_srq);
  fill(o._compat_create_qp);
  fill(o._compat_query_qp);
  fill(o._compat_modify_qp);
  fill(o._compat_destroy_qp);
  fill(o._compat_create_ah);
  fill(o._compat_destroy_ah);
  fill(o._compat_attach_mcast);
  fill(o._compat_detach_mcast);
  fill(o._compat_async_event);

  v.query_port = query_port_op;
  v.query_device_ex = query_device_ex_op;
  v.create_qp_ex = create_qp_ex_op;
  v.create_cq_ex = create_cq_ex_op;
  fill(v.advise_mr);
  fill(v.alloc_null_mr);
  fill(v.read_counters);
  fill(v.attach_counters_point_flow);
  fill(v.create_counters);
  fill(v.destroy_counters);
  fill(v.reg_dm_mr);
  fill(v.alloc_dm);
  fill(v.free_dm);
  fill(v.modify_flow_action_esp);
  fill(v.destroy_flow_action);
  fill(v.create_flow_action_esp);
  fill(v.modify_qp_rate_limit);
  v.alloc_parent_domain = alloc_parent_domain_op;
  fill(v.dealloc_td);
  fill(v.alloc_td);
  fill(v.modify_cq);
  fill(v.post_srq_ops);
  fill(v.destroy_rwq_ind_table);
  fill(v.create_rwq_ind_table);
  fill(v.destroy_wq);
  fill(v.modify_wq);
  fill(v.create_wq);
  fill(v.query_rt_values);
  fill(v.create_cq_ex);
  fill(v.ibv_destroy_flow);
  fill(v.ibv_create_flow);
  v.ABI_placeholder1 = reinterpret_cast<void (*)()>(v.ibv_create_flow);
  v.ABI_placeholder2 = reinterpret_cast<void (*)()>(v.ibv_destroy_flow);
  fill(v.open_qp);
  v.get_srq_num = get_srq_num_op;
  v.create_srq_ex = create_srq_ex_op;
  v.open_xrcd = open_xrcd_op;
  v.close_xrcd = close_xrcd_op;
  v.sz = sizeof(verbs_context);
  v.context.abi_compat = reinterpret_cast<void*>(~uintptr_t{0});  // __VERBS_ABI_IS_EXTENDED
}

}  // namespace ibfab::verbs
