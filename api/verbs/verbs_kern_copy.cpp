// Copies between the kernel's uverbs/SA structures (<rdma/ib_user_verbs.h>,
// <rdma/ib_user_sa.h>) and libibverbs' own (<infiniband/verbs.h>,
// <infiniband/sa.h>), exported for old programs that marshal by hand
// (rdma-core 44 declares them in marshall.h, which Debian does not ship).
//
// Contract, as rdma-core 44 behaves:
// - Fields are copied one by one, with no byte-order change (both sides keep
//   LIDs, P_Key and flow label in the same order) and narrowing where the
//   destination is smaller (the path record's 32-bit mtu to 8 bits).
// - Fields the destination does not have, or the source's reserved bytes,
//   are not touched. ibv_copy_qp_attr_from_kern copies cur_qp_state but not
//   qp_state, and leaves rate_limit alone; the others fill every field.
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include <cstring>

#include "api/verbs/export.h"

namespace ibfab::verbs {
namespace {

// The path record's fields that have the same name on both sides, copied
// from `from` to `to` in either direction (To/From are ibv_sa_path_rec and
// ib_user_path_rec, one each way).
template <typename To, typename From>
void copy_path_rec(To& to, const From& from) {
  using std::memcpy;
  static_assert(sizeof to.dgid == sizeof from.dgid && sizeof to.sgid == sizeof from.sgid);
  memcpy(&to.dgid, &from.dgid, sizeof to.dgid);
  memcpy(&to.sgid, &from.sgid, sizeof to.sgid);
  to.dlid = from.dlid;
  to.slid = from.slid;
  to.raw_traffic = static_cast<decltype(to.raw_traffic)>(from.raw_traffic);
  to.flow_label = from.flow_label;
  to.hop_limit = from.hop_limit;
  to.traffic_class = from.traffic_class;
  to.reversible = static_cast<decltype(to.reversible)>(from.reversible);
  to.numb_path = from.numb_path;
  to.pkey = from.pkey;
  to.sl = from.sl;
  to.mtu_selector = from.mtu_selector;
  to.mtu = static_cast<decltype(to.mtu)>(from.mtu);
  to.rate_selector = from.rate_selector;
  to.rate = from.rate;
  to.packet_life_time = from.packet_life_time;
  to.preference = from.preference;
  to.packet_life_time_selector = from.packet_life_time_selector;
}

void copy_ah_attr(ibv_ah_attr& to, const ib_uverbs_ah_attr& from) {
  static_assert(sizeof to.grh.dgid.raw == sizeof from.grh.dgid);
  std::memcpy(to.grh.dgid.raw, from.grh.dgid, sizeof to.grh.dgid.raw);
  to.grh.flow_label = from.grh.flow_label;
  to.grh.sgid_index = from.grh.sgid_index;
  to.grh.hop_limit = from.grh.hop_limit;
  to.grh.traffic_class = from.grh.traffic_class;
  to.dlid = from.dlid;
  to.sl = from.sl;
  to.src_path_bits = from.src_path_bits;
  to.static_rate = from.static_rate;
  to.is_global = from.is_global;
  to.port_num = from.port_num;
}

}  // namespace
}  // namespace ibfab::verbs

// IBVERBS_1.1. dst's fields all come from src (its reserved byte excepted).
IBFAB_VERBS_EXPORT void ibv_copy_ah_attr_from_kern(ibv_ah_attr* dst, ib_uverbs_ah_attr* src) {
  ibfab::verbs::copy_ah_attr(*dst, *src);
}

// IBVERBS_1.0. Every ibv_qp_attr field src has, except qp_state (rdma-core
// leaves dst->qp_state as it was); rate_limit is not in src.
IBFAB_VERBS_EXPORT void ibv_copy_qp_attr_from_kern(ibv_qp_attr* dst, ib_uverbs_qp_attr* src) {
  dst->cur_qp_state = static_cast<ibv_qp_state>(src->cur_qp_state);
  dst->path_mtu = static_cast<ibv_mtu>(src->path_mtu);
  dst->path_mig_state = static_cast<ibv_mig_state>(src->path_mig_state);
  dst->qkey = src->qkey;
  dst->rq_psn = src->rq_psn;
  dst->sq_psn = src->sq_psn;
  dst->dest_qp_num = src->dest_qp_num;
  dst->qp_access_flags = src->qp_access_flags;
  dst->cap.max_send_wr = src->max_send_wr;
  dst->cap.max_recv_wr = src->max_recv_wr;
  dst->cap.max_send_sge = src->max_send_sge;
  dst->cap.max_recv_sge = src->max_recv_sge;
  dst->cap.max_inline_data = src->max_inline_data;
  ibfab::verbs::copy_ah_attr(dst->ah_attr, src->ah_attr);
  ibfab::verbs::copy_ah_attr(dst->alt_ah_attr, src->alt_ah_attr);
  dst->pkey_index = src->pkey_index;
  dst->alt_pkey_index = src->alt_pkey_index;
  dst->en_sqd_async_notify = src->en_sqd_async_notify;
  dst->sq_draining = src->sq_draining;
  dst->max_rd_atomic = src->max_rd_atomic;
  dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
  dst->min_rnr_timer = src->min_rnr_timer;
  dst->port_num = src->port_num;
  dst->timeout = src->timeout;
  dst->retry_cnt = src->retry_cnt;
  dst->rnr_retry = src->rnr_retry;
  dst->alt_port_num = src->alt_port_num;
  dst->alt_timeout = src->alt_timeout;
}

// IBVERBS_1.0. Every ibv_sa_path_rec field; mtu keeps its low 8 bits.
IBFAB_VERBS_EXPORT void ibv_copy_path_rec_from_kern(ibv_sa_path_rec* dst, ib_user_path_rec* src) {
  ibfab::verbs::copy_path_rec(*dst, *src);
}

// IBVERBS_1.0. Every ib_user_path_rec field; raw_traffic and reversible are
// converted from int as they are.
IBFAB_VERBS_EXPORT void ibv_copy_path_rec_to_kern(ib_user_path_rec* dst, ibv_sa_path_rec* src) {
  ibfab::verbs::copy_path_rec(*dst, *src);
}
