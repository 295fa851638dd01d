// Memory windows through the library between two hosts of an in-process
// fabric: ibv_alloc_mw (types 1 and 2), ibv_bind_mw (type 1), IBV_WR_BIND_MW
// and IBV_WR_LOCAL_INV in ibv_post_send and ibv_wr_bind_mw (type 2),
// SEND_WITH_INV, ibv_dealloc_mw; what a window grants a peer's RDMA and
// what it stops granting, with the completions and errnos mlx5 gives.
#include <cstring>

#include "tests/api/verbs_ex_pair.h"

namespace ibfab::testing {
namespace {

constexpr uint64_t kOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |
                          IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;

class VerbsMw : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(connect_pair(a_, b_)); }
  // a_ WRITEs `length` bytes to b_'s `offset` through `rkey`; returns the
  // completion's status.
  ibv_wc_status write_through(uint32_t rkey, uint32_t offset, uint32_t length, uint64_t wr_id = 1) {
    ibv_sge sge{a_.at(0), length, a_.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = b_.at(offset);
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
    return one(a_).status;
  }
  // The one completion `side` has next.
  static ibv_wc one(ExSide& side) {
    const std::vector<ibv_wc> wc = poll_for(side.cq, 1);
    EXPECT_EQ(wc.size(), 1u);
    return wc.empty() ? ibv_wc{} : wc[0];
  }
  // b_ binds `mw` over [offset, offset + length) of its buffer with remote
  // write, through ibv_post_send; returns the new rkey (0 if the post failed).
  uint32_t bind_type2(ibv_mw* mw, uint32_t offset, uint32_t length, ibv_wc_status want = IBV_WC_SUCCESS) {
    ibv_send_wr wr{};
    wr.wr_id = 77;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
    wr.bind_mw.bind_info = {b_.mr, b_.at(offset), length, IBV_ACCESS_REMOTE_WRITE};
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(b_.qp, &wr, &bad) != 0) return 0;
    const ibv_wc wc = one(b_);
    EXPECT_EQ(wc.status, want) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(wc.wr_id, 77u);
    if (want == IBV_WC_SUCCESS) EXPECT_EQ(wc.opcode, IBV_WC_BIND_MW);
    return wr.bind_mw.rkey;
  }
  // A type 2 window of b_ bound over [offset, offset + length) of its
  // buffer (mw_, deallocated at the end); returns its rkey.
  uint32_t bound_type2(uint32_t offset, uint32_t length) {
    mw_ = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_2);
    EXPECT_NE(mw_, nullptr);
    return mw_ ? bind_type2(mw_, offset, length) : 0;
  }
  void TearDown() override {
    if (mw_) EXPECT_EQ(ibv_dealloc_mw(mw_), 0);
  }
  ibv_mw* mw_ = nullptr;
  ExSide a_{0, IBV_QPT_RC, kOps, 0x111};
  ExSide b_{1, IBV_QPT_RC, kOps, 0x222};
};

TEST_F(VerbsMw, AllocatesBothTypesAndRefusesOthers) {
  ibv_mw* one = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_1);
  ASSERT_NE(one, nullptr) << std::strerror(errno);
  ibv_mw* two = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_2);
  ASSERT_NE(two, nullptr) << std::strerror(errno);
  EXPECT_EQ(one->type, IBV_MW_TYPE_1);
  EXPECT_EQ(two->type, IBV_MW_TYPE_2);
  EXPECT_EQ(one->pd, b_.pd);
  EXPECT_EQ(one->context, b_.ctx);
  EXPECT_NE(one->rkey, two->rkey);
  EXPECT_NE(one->rkey, b_.mr->rkey);
  errno = 0;
  EXPECT_EQ(ibv_alloc_mw(b_.pd, static_cast<ibv_mw_type>(3)), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(ibv_dealloc_pd(b_.pd), EBUSY) << "windows hold the PD";
  EXPECT_EQ(ibv_dealloc_mw(one), 0);
  EXPECT_EQ(ibv_dealloc_mw(two), 0);
}

TEST_F(VerbsMw, AnUnboundWindowGrantsNothing) {
  ibv_mw* mw = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_1);
  ASSERT_NE(mw, nullptr);
  EXPECT_EQ(write_through(mw->rkey, 0, 8), IBV_WC_REM_ACCESS_ERR);
  ASSERT_EQ(ibv_dealloc_mw(mw), 0);
}

TEST_F(VerbsMw, AType1WindowGrantsItsRangeUntilUnbound) {
  ibv_mw* mw = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_1);
  ASSERT_NE(mw, nullptr);
  const uint32_t before = mw->rkey;
  ibv_mw_bind bind{};
  bind.wr_id = 5;
  bind.send_flags = IBV_SEND_SIGNALED;
  bind.bind_info = {b_.mr, b_.at(4096), 256, IBV_ACCESS_REMOTE_WRITE};
  ASSERT_EQ(ibv_bind_mw(b_.qp, mw, &bind), 0);
  EXPECT_EQ(mw->rkey, ibv_inc_rkey(before)) << "the bind gives the window its next key";
  const ibv_wc wc = one(b_);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_BIND_MW);
  EXPECT_EQ(wc.wr_id, 5u);
  std::memcpy(a_.buf.data(), "through a window", 16);
  EXPECT_EQ(write_through(mw->rkey, 4096 + 16, 16), IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 4096 + 16, "through a window", 16), 0)
      << "an RC WRITE completes once acknowledged, so it has landed";
  // Unbound (a bind of length 0): the key moves on again and grants nothing.
  bind.bind_info.length = 0;
  ASSERT_EQ(ibv_bind_mw(b_.qp, mw, &bind), 0);
  EXPECT_EQ(one(b_).status, IBV_WC_SUCCESS);
  EXPECT_EQ(write_through(mw->rkey, 4096, 8, 2), IBV_WC_REM_ACCESS_ERR);
  ASSERT_EQ(ibv_dealloc_mw(mw), 0);
}

TEST_F(VerbsMw, Type1RefusalsAtTheCall) {
  ibv_mw* one = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_1);
  ibv_mw* two = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_2);
  ASSERT_TRUE(one && two);
  ibv_mw_bind bind{};
  bind.bind_info = {b_.mr, b_.at(0), 64, IBV_ACCESS_REMOTE_WRITE};
  EXPECT_EQ(ibv_bind_mw(b_.qp, two, &bind), EINVAL) << "ibv_bind_mw is for type 1";
  bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED;
  EXPECT_EQ(ibv_bind_mw(b_.qp, one, &bind), EINVAL) << "no zero-based windows";
  ibv_pd* other = ibv_alloc_pd(b_.ctx);
  ibv_mr* elsewhere = ibv_reg_mr(other, b_.buf.data(), 4096, kEveryAccess);
  bind.bind_info = {elsewhere, b_.at(0), 64, IBV_ACCESS_REMOTE_WRITE};
  EXPECT_EQ(ibv_bind_mw(b_.qp, one, &bind), EPERM) << "a region of another PD";
  EXPECT_TRUE(poll_for(b_.cq, 1, 100).empty());
  EXPECT_EQ(ibv_dereg_mr(elsewhere), 0);
  EXPECT_EQ(ibv_dealloc_pd(other), 0);
  EXPECT_EQ(ibv_dealloc_mw(one), 0);
  EXPECT_EQ(ibv_dealloc_mw(two), 0);
}

TEST_F(VerbsMw, AType2WindowBoundByAWorkRequestGrantsOnlyItsRange) {
  const uint32_t rkey = bound_type2(8192, 128);
  ASSERT_NE(rkey, 0u);
  std::memcpy(a_.buf.data(), "type two", 8);
  EXPECT_EQ(write_through(rkey, 8192 + 120, 8), IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 8192 + 120, "type two", 8), 0);
  EXPECT_EQ(write_through(rkey, 8192 + 121, 8, 2), IBV_WC_REM_ACCESS_ERR) << "past the window";
}

TEST_F(VerbsMw, LocalInvalidateRetiresAType2Window) {
  const uint32_t rkey = bound_type2(0, 64);
  ASSERT_NE(rkey, 0u);
  EXPECT_EQ(write_through(rkey, 0, 8), IBV_WC_SUCCESS);
  ibv_send_wr inv{};
  inv.wr_id = 9;
  inv.opcode = IBV_WR_LOCAL_INV;
  inv.send_flags = IBV_SEND_SIGNALED;
  inv.invalidate_rkey = rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(b_.qp, &inv, &bad), 0);
  const ibv_wc wc = one(b_);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_LOCAL_INV);
  EXPECT_EQ(write_through(rkey, 0, 8, 2), IBV_WC_REM_ACCESS_ERR);
}

TEST_F(VerbsMw, SendWithInvalidateRetiresThePeersWindow) {
  const uint32_t rkey = bound_type2(0, 64);
  ASSERT_NE(rkey, 0u);
  ASSERT_EQ(b_.post_recv(3, 1024, 64), 0);
  ibv_qp_ex* q = a_.qpx;
  ibv_wr_start(q);
  q->wr_id = 4;
  q->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send_inv(q, rkey);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 4);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  EXPECT_EQ(one(a_).status, IBV_WC_SUCCESS);
  const ibv_wc r = one(b_);
  EXPECT_EQ(r.status, IBV_WC_SUCCESS);
  EXPECT_EQ(r.wc_flags, static_cast<unsigned>(IBV_WC_WITH_INV));
  EXPECT_EQ(r.invalidated_rkey, rkey);
  EXPECT_EQ(write_through(rkey, 0, 8, 2), IBV_WC_REM_ACCESS_ERR);
}

TEST_F(VerbsMw, WrBindMwBindsAType2WindowAndABoundOneCanBeDeallocated) {
  ibv_mw* mw = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  const uint32_t rkey = ibv_inc_rkey(mw->rkey);
  const ibv_mw_bind_info info{b_.mr, b_.at(0), 4096, IBV_ACCESS_REMOTE_WRITE};
  ibv_qp_ex* q = b_.qpx;
  ibv_wr_start(q);
  q->wr_id = 6;
  q->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_bind_mw(q, mw, rkey, &info);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const ibv_wc wc = one(b_);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.opcode, IBV_WC_BIND_MW);
  EXPECT_EQ(write_through(rkey, 100, 8), IBV_WC_SUCCESS);
  ASSERT_EQ(ibv_dealloc_mw(mw), 0) << "a bound type 2 window goes too";
  EXPECT_EQ(write_through(rkey, 100, 8, 2), IBV_WC_REM_ACCESS_ERR);
}

TEST_F(VerbsMw, ABindTheHcaCannotDoIsAMwBindError) {
  // A region registered without IBV_ACCESS_MW_BIND cannot carry a window.
  ibv_mr* plain = ibv_reg_mr(b_.pd, b_.buf.data(), 4096, static_cast<int>(IBV_ACCESS_LOCAL_WRITE));
  ASSERT_NE(plain, nullptr);
  ibv_mw* mw = ibv_alloc_mw(b_.pd, IBV_MW_TYPE_2);
  ASSERT_NE(mw, nullptr);
  ibv_send_wr wr{};
  wr.wr_id = 8;
  wr.opcode = IBV_WR_BIND_MW;
  wr.bind_mw.mw = mw;
  wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
  wr.bind_mw.bind_info = {plain, b_.at(0), 64, IBV_ACCESS_REMOTE_WRITE};
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(b_.qp, &wr, &bad), 0);
  const ibv_wc wc = one(b_);
  EXPECT_EQ(wc.status, IBV_WC_MW_BIND_ERR) << "unsignalled, but an error";
  EXPECT_EQ(wc.wr_id, 8u);
  // Past 2 GiB: mlx5's UMR cannot describe it, refused at the call.
  wr.bind_mw.bind_info = {b_.mr, b_.at(0), (uint64_t{1} << 31) + 1, IBV_ACCESS_REMOTE_WRITE};
  EXPECT_EQ(ibv_post_send(b_.qp, &wr, &bad), EOPNOTSUPP);
  EXPECT_EQ(bad, &wr);
  ASSERT_EQ(ibv_dealloc_mw(mw), 0);
  ASSERT_EQ(ibv_dereg_mr(plain), 0);
}

}  // namespace
}  // namespace ibfab::testing
