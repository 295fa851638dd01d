// UD QP state machine and bad input: each transition needs its attribute
// mask (a wrong one is EINVAL, as on hardware), posting needs the right
// state, and every error comes back as the verb's contract says.
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

class VerbsQp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override { ASSERT_TRUE(h_.ok()); }
  int modify(ibv_qp_state s, int mask) {
    ibv_qp_attr a{};
    a.qp_state = s;
    a.port_num = 1;
    a.qkey = kQkey;
    return ibv_modify_qp(h_.qp, &a, mask);
  }
  ibv_qp_state state() {
    ibv_qp_attr a{};
    ibv_qp_init_attr i{};
    EXPECT_EQ(ibv_query_qp(h_.qp, &a, IBV_QP_STATE, &i), 0);
    return a.qp_state;
  }
  Host h_{0};
};

TEST_F(VerbsQp, ResetToInitNeedsPkeyPortAndQkey) {
  EXPECT_EQ(modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
  EXPECT_EQ(state(), IBV_QPS_RESET);
  EXPECT_EQ(modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_SQ_PSN),
            EINVAL);  // an attribute the transition does not take
  EXPECT_EQ(modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
  EXPECT_EQ(state(), IBV_QPS_INIT);
}

TEST_F(VerbsQp, SkippingAStateIsRefused) {
  EXPECT_EQ(modify(IBV_QPS_RTR, IBV_QP_STATE), EINVAL);
  EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL);
  EXPECT_EQ(state(), IBV_QPS_RESET);
}

TEST_F(VerbsQp, RtrToRtsNeedsTheSendPsn) {
  ASSERT_EQ(modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
  ASSERT_EQ(modify(IBV_QPS_RTR, IBV_QP_STATE), 0);
  EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_STATE), EINVAL);
  EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  EXPECT_EQ(state(), IBV_QPS_RTS);
  // RTS -> RTS may change the Q_Key, and nothing it does not allow.
  EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_QKEY), 0);
  EXPECT_EQ(modify(IBV_QPS_RTS, IBV_QP_PORT), EINVAL);
  // Any state -> ERR and -> RESET.
  EXPECT_EQ(modify(IBV_QPS_ERR, IBV_QP_STATE), 0);
  EXPECT_EQ(state(), IBV_QPS_ERR);
  EXPECT_EQ(modify(IBV_QPS_RESET, IBV_QP_STATE), 0);
  EXPECT_EQ(state(), IBV_QPS_RESET);
}

TEST_F(VerbsQp, CurrentStateMustMatch) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  a.cur_qp_state = IBV_QPS_RTS;
  EXPECT_EQ(ibv_modify_qp(h_.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
}

TEST_F(VerbsQp, BadPortOrPkeyIndexIsEinval) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 7;
  EXPECT_EQ(ibv_modify_qp(h_.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
  a.port_num = 1;
  a.pkey_index = 500;
  EXPECT_EQ(ibv_modify_qp(h_.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), EINVAL);
  EXPECT_EQ(state(), IBV_QPS_RESET);
}

TEST_F(VerbsQp, PostingInTheWrongStateIsEinvalAndNamesTheWr) {
  ibv_ah* ah = h_.ah_to(h_.lid);
  ASSERT_NE(ah, nullptr);
  ibv_sge s{reinterpret_cast<uint64_t>(h_.buf.data()), 8, h_.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.wr.ud.ah = ah;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(h_.qp, &wr, &bad), EINVAL);  // RESET
  EXPECT_EQ(bad, &wr);
  ibv_recv_wr rw{};
  rw.sg_list = &s;
  rw.num_sge = 1;
  ibv_recv_wr* rbad = nullptr;
  EXPECT_EQ(ibv_post_recv(h_.qp, &rw, &rbad), EINVAL);  // RESET takes no receives
  EXPECT_EQ(rbad, &rw);
  ASSERT_EQ(modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
  EXPECT_EQ(ibv_post_recv(h_.qp, &rw, &rbad), 0);  // INIT does
  EXPECT_EQ(ibv_post_send(h_.qp, &wr, &bad), EINVAL);  // but sends wait for RTS
  ibv_destroy_ah(ah);
}

TEST_F(VerbsQp, BadWorkRequestsAreRefusedAtPost) {
  ASSERT_EQ(h_.to_rts(), 0);
  ibv_ah* ah = h_.ah_to(h_.lid);
  ibv_sge s{reinterpret_cast<uint64_t>(h_.buf.data()), 8, h_.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;  // not on UD
  wr.wr.ud.ah = ah;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(h_.qp, &wr, &bad), EINVAL);
  wr.opcode = IBV_WR_SEND;
  wr.num_sge = 5;  // more than the QP's max_send_sge (4)
  EXPECT_EQ(ibv_post_send(h_.qp, &wr, &bad), EINVAL);
  wr.num_sge = 1;
  wr.wr.ud.ah = nullptr;
  EXPECT_EQ(ibv_post_send(h_.qp, &wr, &bad), EINVAL);
  wr.wr.ud.ah = ah;
  wr.send_flags = IBV_SEND_INLINE;
  s.length = 4096;  // more than max_inline_data
  EXPECT_EQ(ibv_post_send(h_.qp, &wr, &bad), EINVAL);
  ibv_destroy_ah(ah);
}

TEST_F(VerbsQp, SendQueueFullIsEnomem) {
  ASSERT_EQ(h_.to_rts(), 0);
  ibv_ah* ah = h_.ah_to(h_.lid);
  // Fill the send queue faster than anything completes: a long chain of
  // WRs in one call. The 65th is refused with ENOMEM (64-deep queue).
  std::vector<ibv_send_wr> wrs(65);
  ibv_sge s{reinterpret_cast<uint64_t>(h_.buf.data()), 8, h_.mr->lkey};
  for (std::size_t i = 0; i < wrs.size(); ++i) {
    wrs[i].wr_id = i;
    wrs[i].sg_list = &s;
    wrs[i].num_sge = 1;
    wrs[i].opcode = IBV_WR_SEND;
    wrs[i].wr.ud.ah = ah;
    wrs[i].wr.ud.remote_qpn = 1;
    wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  const int e = ibv_post_send(h_.qp, wrs.data(), &bad);
  if (e != 0) {  // the engine may already have taken some: then all 65 fit
    EXPECT_EQ(e, ENOMEM);
    ASSERT_NE(bad, nullptr);
    EXPECT_GE(bad->wr_id, 64u);
  }
  ibv_destroy_ah(ah);
}

TEST_F(VerbsQp, CreateChecksItsArguments) {
  ibv_qp_init_attr a{};
  a.send_cq = a.recv_cq = h_.cq;
  a.qp_type = IBV_QPT_UD;
  a.cap.max_send_wr = 1 << 20;  // past max_qp_wr
  a.cap.max_recv_wr = 1;
  errno = 0;
  EXPECT_EQ(ibv_create_qp(h_.pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.cap.max_send_wr = 1;
  a.send_cq = nullptr;
  EXPECT_EQ(ibv_create_qp(h_.pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.send_cq = h_.cq;
  a.qp_type = IBV_QPT_RAW_PACKET;
  EXPECT_EQ(ibv_create_qp(h_.pd, &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  // The capabilities granted are written back.
  a.qp_type = IBV_QPT_UD;
  a.cap.max_send_wr = 3;
  ibv_qp* qp = ibv_create_qp(h_.pd, &a);
  ASSERT_NE(qp, nullptr);
  EXPECT_GE(a.cap.max_send_wr, 3u);
  EXPECT_EQ(qp->qp_type, IBV_QPT_UD);
  EXPECT_EQ(qp->state, IBV_QPS_RESET);
  EXPECT_NE(qp->qp_num, h_.qp->qp_num);
  EXPECT_EQ(ibv_destroy_qp(qp), 0);
}

TEST_F(VerbsQp, ObjectsOfAnotherContextOrNullAreRefused) {
  Host other(1);
  ASSERT_TRUE(other.ok());
  ibv_qp_init_attr a{};
  a.send_cq = a.recv_cq = other.cq;  // another device's CQ
  a.qp_type = IBV_QPT_UD;
  a.cap.max_send_wr = a.cap.max_recv_wr = 1;
  errno = 0;
  EXPECT_EQ(ibv_create_qp(h_.pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(ibv_create_qp(h_.pd, nullptr), nullptr);
  EXPECT_EQ(ibv_create_qp(nullptr, &a), nullptr);
  EXPECT_EQ(ibv_modify_qp(nullptr, nullptr, IBV_QP_STATE), EINVAL);
  EXPECT_EQ(ibv_attach_mcast(nullptr, &h_.gid, 0xC001), EINVAL);
  EXPECT_EQ(ibv_attach_mcast(h_.qp, nullptr, 0xC001), EINVAL);
  EXPECT_EQ(ibv_create_ah(h_.pd, nullptr), nullptr);
  ibv_ah_attr multicast_without_grh{};
  multicast_without_grh.dlid = 0xC001;
  multicast_without_grh.port_num = 1;
  EXPECT_EQ(ibv_create_ah(h_.pd, &multicast_without_grh), nullptr);  // an MLID needs the GRH naming the group
  EXPECT_EQ(ibv_create_cq(h_.ctx, 0, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(ibv_create_cq(h_.ctx, 4, nullptr, nullptr, 5), nullptr);  // past num_comp_vectors
  EXPECT_EQ(ibv_destroy_qp(nullptr), EINVAL);
  EXPECT_EQ(ibv_dereg_mr(nullptr), EINVAL);
}

TEST_F(VerbsQp, ObjectsInUseCannotBeDestroyed) {
  EXPECT_EQ(ibv_destroy_cq(h_.cq), EBUSY);  // the QP completes there
  ibv_comp_channel* ch = ibv_create_comp_channel(h_.ctx);
  ASSERT_NE(ch, nullptr);
  ibv_cq* cq = ibv_create_cq(h_.ctx, 8, nullptr, ch, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), EBUSY);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
}

TEST_F(VerbsQp, RegMrChecksAccessFlags) {
  errno = 0;
  const int remote_only = IBV_ACCESS_REMOTE_WRITE;
  EXPECT_EQ(ibv_reg_mr(h_.pd, h_.buf.data(), 64, remote_only), nullptr);  // needs LOCAL_WRITE
  EXPECT_EQ(errno, EINVAL);
  const int both = IBV_ACCESS_LOCAL_WRITE | static_cast<int>(IBV_ACCESS_REMOTE_WRITE);
  ibv_mr* mr = ibv_reg_mr(h_.pd, h_.buf.data(), 64, both);
  ASSERT_NE(mr, nullptr);
  EXPECT_NE(mr->lkey, h_.mr->lkey);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

}  // namespace
}  // namespace ibfab::testing
