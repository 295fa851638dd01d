#pragma once
// Two QPs of one type on two hosts of the in-process fabric (H3 and
// another host), created with ibv_create_qp_ex and the send_ops_flags
// given, connected by hand (RC, UC) or addressed through an AH (UD), for
// the tests of the extended QP API and of memory windows.
#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

#include "tests/api/verbs_connect.h"
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {

inline constexpr int kEveryAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                    IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND;

struct ExSide {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_comp_channel* channel = nullptr;  // with_channel: the CQ's
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_qp_ex* qpx = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(1 << 16);
  uint16_t lid = 0;
  uint32_t psn;
  int create_errno = 0;  // ibv_create_qp_ex's errno when it failed

  ExSide(int index, ibv_qp_type type, uint64_t send_ops, uint32_t psn_ = 0x100, bool with_channel = false)
      : psn(psn_) {
    ibv_device* d = device(index);
    if (!d || !(ctx = ibv_open_device(d))) return;
    pd = ibv_alloc_pd(ctx);
    if (with_channel) channel = ibv_create_comp_channel(ctx);
    cq = ibv_create_cq(ctx, 256, nullptr, channel, 0);
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), kEveryAccess);
    ibv_qp_init_attr_ex a{};
    a.send_cq = a.recv_cq = cq;
    a.cap.max_send_wr = a.cap.max_recv_wr = 16;
    a.cap.max_send_sge = a.cap.max_recv_sge = 2;
    a.cap.max_inline_data = 64;
    a.qp_type = type;
    a.pd = pd;
    a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a.send_ops_flags = send_ops;
    errno = 0;
    qp = ibv_create_qp_ex(ctx, &a);
    if (!qp) create_errno = errno;
    else qpx = ibv_qp_to_qp_ex(qp);
    ibv_port_attr pa;
    if (ibv_query_port(ctx, 1, &pa) == 0) lid = pa.lid;
  }
  ~ExSide() {
    if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (channel) ibv_destroy_comp_channel(channel);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
  bool ok() const { return ctx && pd && cq && qp && qpx && mr; }
  uint64_t at(std::size_t offset) { return reinterpret_cast<uint64_t>(buf.data() + offset); }

  // RESET -> INIT -> RTR -> RTS: towards `peer` for RC and UC
  // (connect_qp), with kQkey for UD.
  int connect(const ExSide& peer, int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                               IBV_ACCESS_REMOTE_ATOMIC) {
    if (qp->qp_type != IBV_QPT_UD) return connect_qp(qp, peer.qp->qp_num, peer.lid, peer.psn, psn, access);
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = kQkey;
    if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) return e;
    a.qp_state = IBV_QPS_RTR;
    if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE)) return e;
    a.qp_state = IBV_QPS_RTS;
    return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  }
  int post_recv(uint64_t wr_id, uint32_t offset, uint32_t length) {
    return post_one_recv(qp, wr_id, {at(offset), length, mr->lkey});
  }
};

// Both sides made and connected to each other (gtest assertions: call it
// under ASSERT_NO_FATAL_FAILURE).
inline void connect_pair(ExSide& a, ExSide& b) {
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a.connect(b), 0);
  ASSERT_EQ(b.connect(a), 0);
}

}  // namespace ibfab::testing
