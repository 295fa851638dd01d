#pragma once
// Connecting an RC or UC QP by hand, as ibv_rc_pingpong does once the QPN,
// PSN and LID are exchanged.
#include <infiniband/verbs.h>

#include <cstdint>

namespace ibfab::testing {

// RESET -> INIT -> RTR -> RTS towards QP `dest_qpn` at `dlid` (port 1,
// path MTU 1024), with ibv_rc_pingpong's masks: `access` as the QP's
// remote access (UC keeps only REMOTE_WRITE), receiving from `rq_psn`,
// sending from `sq_psn`, retrying RNR NAKs `rnr_retry` times (7: for
// ever). Returns ibv_modify_qp's first error.
inline int connect_qp(ibv_qp* qp, uint32_t dest_qpn, uint16_t dlid, uint32_t rq_psn, uint32_t sq_psn,
                      int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
                      uint8_t rnr_retry = 7) {
  const bool rc = qp->qp_type == IBV_QPT_RC;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = rc ? access : access & IBV_ACCESS_REMOTE_WRITE;
  if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return e;
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = dest_qpn;
  a.rq_psn = rq_psn;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  a.ah_attr.dlid = dlid;
  a.ah_attr.port_num = 1;
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
  if (rc) mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  if (int e = ibv_modify_qp(qp, &a, mask)) return e;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = rnr_retry;
  a.sq_psn = sq_psn;
  a.max_rd_atomic = 4;
  mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
  if (rc) mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
  return ibv_modify_qp(qp, &a, mask);
}

}  // namespace ibfab::testing
