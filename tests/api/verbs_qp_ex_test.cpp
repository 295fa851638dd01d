// The extended QP API (ibv_create_qp_ex with send_ops_flags,
// ibv_qp_to_qp_ex, ibv_wr_*) between two hosts of an in-process fabric,
// through the public verbs API: what each builder and setter puts on the
// wire and in the completions, and the errors mlx5 gives, at creation and
// at ibv_wr_complete.
#include <cstring>

#include "tests/api/verbs_ex_pair.h"

namespace ibfab::testing {
namespace {

constexpr uint64_t kRcOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |
                            IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                            IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                            IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
                            IBV_QP_EX_WITH_BIND_MW;
constexpr uint64_t kUcOps = kRcOps & ~static_cast<uint64_t>(IBV_QP_EX_WITH_RDMA_READ |
                                                            IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                                            IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
constexpr uint64_t kUdOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

class VerbsQpExCreate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
};

TEST_F(VerbsQpExCreate, EachTypeTakesTheOperationsMlx5GivesIt) {
  for (const auto& [type, ops] : {std::pair{IBV_QPT_RC, kRcOps}, {IBV_QPT_UC, kUcOps}, {IBV_QPT_UD, kUdOps}}) {
    ExSide s(0, type, ops);
    ASSERT_TRUE(s.ok()) << type << ": " << std::strerror(s.create_errno);
    EXPECT_EQ(s.qpx, reinterpret_cast<ibv_qp_ex*>(s.qp)) << "the ibv_qp is the ibv_qp_ex's first member";
    EXPECT_NE(s.qpx->wr_start, nullptr);
    EXPECT_NE(s.qpx->wr_complete, nullptr);
    EXPECT_NE(s.qpx->wr_abort, nullptr);
    EXPECT_NE(s.qpx->wr_send, nullptr);
    EXPECT_NE(s.qpx->wr_set_sge, nullptr);
  }
}

TEST_F(VerbsQpExCreate, AnOperationTheTypeHasNotIsEopnotsuppAtCreation) {
  const struct {
    ibv_qp_type type;
    uint64_t ops;
  } refused[] = {
      {IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE},        {IBV_QPT_UD, IBV_QP_EX_WITH_SEND_WITH_INV},
      {IBV_QPT_UD, IBV_QP_EX_WITH_TSO},               {IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ},
      {IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD}, {IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE},
      {IBV_QPT_RC, IBV_QP_EX_WITH_TSO},               {IBV_QPT_RC, uint64_t{1} << 40},
  };
  for (const auto& r : refused) {
    ExSide s(0, r.type, IBV_QP_EX_WITH_SEND | r.ops);
    EXPECT_EQ(s.qp, nullptr) << r.type << " 0x" << std::hex << r.ops;
    EXPECT_EQ(s.create_errno, EOPNOTSUPP) << r.type << " 0x" << std::hex << r.ops;
  }
}

TEST_F(VerbsQpExCreate, AQpWithoutSendOpsFlagsHasNoExtendedApi) {
  Host h(0, IBV_QPT_RC);
  ASSERT_TRUE(h.ok());
  errno = 0;
  EXPECT_EQ(ibv_qp_to_qp_ex(h.qp), nullptr);
  EXPECT_EQ(errno, 0) << "rdma-core leaves errno alone";
}

// Two connected QPs of the parameter's type with every operation it has.
class VerbsQpEx : public ::testing::TestWithParam<ibv_qp_type> {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  static uint64_t ops() { return GetParam() == IBV_QPT_RC ? kRcOps : kUcOps; }
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(connect_pair(a_, b_)); }
  // Starts a sequence on a_ whose next WQE has `wr_id`, signalled.
  ibv_qp_ex* start(uint64_t wr_id) {
    ibv_wr_start(a_.qpx);
    next(wr_id);
    return a_.qpx;
  }
  void next(uint64_t wr_id, unsigned flags = IBV_SEND_SIGNALED) {
    a_.qpx->wr_id = wr_id;
    a_.qpx->wr_flags = flags;
  }
  // An RDMA WRITE of `length` bytes from a_'s `from` to b_'s `to`.
  void write(uint32_t from, uint32_t to, uint32_t length) {
    ibv_wr_rdma_write(a_.qpx, b_.mr->rkey, b_.at(to));
    ibv_wr_set_sge(a_.qpx, a_.mr->lkey, a_.at(from), length);
  }
  // Exactly one completion on a_, of `wr_id`, successful.
  void completes(uint64_t wr_id) {
    const std::vector<ibv_wc> wc = poll_exactly(a_.cq, 1);
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].wr_id, wr_id);
    EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[0].status);
  }
  ExSide a_{0, GetParam(), ops(), 0x1234};
  ExSide b_{1, GetParam(), ops(), 0xABCD};
};

class VerbsQpExRc : public VerbsQpEx {};

TEST_P(VerbsQpEx, SendsOfOneSequenceLandInOrderWithTheirImmediates) {
  std::memcpy(a_.buf.data(), "first message", 13);
  std::memcpy(a_.buf.data() + 100, "second", 6);
  ASSERT_EQ(b_.post_recv(1, 0, 64), 0);
  ASSERT_EQ(b_.post_recv(2, 64, 64), 0);
  ibv_qp_ex* q = start(11);
  ibv_wr_send(q);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 13);
  next(12);
  ibv_wr_send_imm(q, htobe32(0xFEED));
  const ibv_sge two[] = {{a_.at(100), 3, a_.mr->lkey}, {a_.at(103), 3, a_.mr->lkey}};
  ibv_wr_set_sge_list(q, 2, two);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const std::vector<ibv_wc> sent = poll_exactly(a_.cq, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].wr_id, 11u);
  EXPECT_EQ(sent[1].wr_id, 12u);
  for (const ibv_wc& wc : sent) {
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  }
  const std::vector<ibv_wc> got = poll_exactly(b_.cq, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].wr_id, 1u);
  EXPECT_EQ(got[0].byte_len, 13u);
  EXPECT_EQ(got[0].wc_flags, 0u);
  EXPECT_EQ(got[1].wr_id, 2u);
  EXPECT_EQ(got[1].byte_len, 6u);
  EXPECT_EQ(got[1].wc_flags, static_cast<unsigned>(IBV_WC_WITH_IMM));
  EXPECT_EQ(be32toh(got[1].imm_data), 0xFEEDu);
  EXPECT_EQ(std::memcmp(b_.buf.data(), "first message", 13), 0);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 64, "second", 6), 0);
}

TEST_P(VerbsQpEx, InlineDataIsTakenAtTheSetter) {
  char part1[] = "in", part2[] = "line";
  ASSERT_EQ(b_.post_recv(1, 0, 64), 0);
  ASSERT_EQ(b_.post_recv(2, 64, 64), 0);
  ibv_qp_ex* q = start(1);
  ibv_wr_send(q);
  ibv_wr_set_inline_data(q, part1, 2);
  next(2);
  ibv_wr_rdma_write_imm(q, b_.mr->rkey, b_.at(1000), htobe32(5));
  const ibv_data_buf list[] = {{part1, 2}, {part2, 4}};
  ibv_wr_set_inline_data_list(q, 2, list);
  std::memcpy(part1, "XX", 2);  // after the setter: the message keeps the old bytes
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const std::vector<ibv_wc> sent = poll_exactly(a_.cq, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].opcode, IBV_WC_RDMA_WRITE);
  const std::vector<ibv_wc> got = poll_exactly(b_.cq, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].byte_len, 2u);
  EXPECT_EQ(std::memcmp(b_.buf.data(), "in", 2), 0);
  EXPECT_EQ(got[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(got[1].byte_len, 6u);
  EXPECT_EQ(be32toh(got[1].imm_data), 5u);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 1000, "inline", 6), 0);
}

TEST_P(VerbsQpEx, UnsignalledWqesCompleteSilently) {
  ibv_qp_ex* q = start(1);
  std::memcpy(a_.buf.data(), "abcdefgh", 8);
  next(1, 0);
  write(0, 200, 4);
  next(2);
  write(4, 204, 4);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  completes(2);
  // Delivered once a later SEND has arrived (one QP's messages keep order).
  ASSERT_EQ(b_.post_recv(9, 0, 16), 0);
  ibv_wr_start(q);
  next(3);
  ibv_wr_send(q);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 0);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  ASSERT_EQ(poll_for(b_.cq, 1).size(), 1u);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 200, "abcdefgh", 8), 0);
}

TEST_P(VerbsQpExRc, ReadAndAtomicsBringBackTheTargetsValues) {
  std::memcpy(b_.buf.data() + 300, "remote bytes", 12);
  uint64_t counter = 10;
  std::memcpy(b_.buf.data() + 512, &counter, 8);
  ibv_qp_ex* q = start(1);
  ibv_wr_rdma_read(q, b_.mr->rkey, b_.at(300));
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 12);
  next(2);
  ibv_wr_atomic_fetch_add(q, b_.mr->rkey, b_.at(512), 5);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(64), 8);
  next(3);
  ibv_wr_atomic_cmp_swp(q, b_.mr->rkey, b_.at(512), 15, 99);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(72), 8);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const std::vector<ibv_wc> wc = poll_exactly(a_.cq, 3);
  ASSERT_EQ(wc.size(), 3u);
  const ibv_wc_opcode want[] = {IBV_WC_RDMA_READ, IBV_WC_FETCH_ADD, IBV_WC_COMP_SWAP};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[i].status);
    EXPECT_EQ(wc[i].wr_id, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(wc[i].opcode, want[i]);
  }
  EXPECT_EQ(std::memcmp(a_.buf.data(), "remote bytes", 12), 0);
  uint64_t v;
  std::memcpy(&v, a_.buf.data() + 64, 8);
  EXPECT_EQ(v, 10u);
  std::memcpy(&v, a_.buf.data() + 72, 8);
  EXPECT_EQ(v, 15u);
  std::memcpy(&v, b_.buf.data() + 512, 8);
  EXPECT_EQ(v, 99u);
}

TEST_P(VerbsQpEx, AnErrorInTheSequenceIsReturnedByCompleteAndNothingIsPosted) {
  ibv_qp_ex* q = a_.qpx;
  const ibv_sge three[] = {{a_.at(0), 1, a_.mr->lkey}, {a_.at(1), 1, a_.mr->lkey}, {a_.at(2), 1, a_.mr->lkey}};
  // More SGEs than max_send_sge (2), after a good WQE: mlx5's ENOMEM.
  start(1);
  write(0, 0, 1);
  ibv_wr_rdma_write(q, b_.mr->rkey, b_.at(0));
  ibv_wr_set_sge_list(q, 3, three);
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);
  // More inline bytes than max_inline_data.
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(a_.qp, &attr, IBV_QP_CAP, &init), 0);
  std::vector<uint8_t> big(init.cap.max_inline_data + 1);
  start(2);
  ibv_wr_send(q);
  ibv_wr_set_inline_data(q, big.data(), big.size());
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);
  // More WQEs than the send queue holds.
  start(3);
  for (uint32_t i = 0; i <= init.cap.max_send_wr; ++i) write(0, 0, 1);
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);
  // A setter before any builder, a builder without its data.
  start(4);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 1);
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  start(5);
  ibv_wr_send(q);
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  // What a connected QP has not (UD's address): EOPNOTSUPP.
  start(6);
  ibv_wr_send(q);
  ibv_wr_set_ud_addr(q, nullptr, 1, kQkey);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 1);
  EXPECT_EQ(ibv_wr_complete(q), EOPNOTSUPP);
  // An aborted sequence posts nothing either.
  start(7);
  write(0, 0, 1);
  ibv_wr_abort(q);
  EXPECT_TRUE(poll_for(a_.cq, 1, 100).empty()) << "nothing of the refused sequences was posted";
  // The queue still works, and its first slot is free.
  start(8);
  write(0, 0, 1);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  completes(8);
}

TEST_P(VerbsQpEx, CompleteBeforeRtsIsEinval) {
  ExSide c(0, GetParam(), ops());
  ASSERT_TRUE(c.ok());
  ibv_qp_attr a{};
  for (const ibv_qp_state s : {IBV_QPS_RESET, IBV_QPS_INIT}) {
    if (s == IBV_QPS_INIT) {
      a.qp_state = IBV_QPS_INIT;
      a.port_num = 1;
      ASSERT_EQ(ibv_modify_qp(c.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
    }
    ibv_wr_start(c.qpx);
    ibv_wr_send(c.qpx);
    ibv_wr_set_sge(c.qpx, c.mr->lkey, c.at(0), 1);
    EXPECT_EQ(ibv_wr_complete(c.qpx), EINVAL) << s;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, VerbsQpEx, ::testing::Values(IBV_QPT_RC, IBV_QPT_UC),
                         [](const auto& info) { return info.param == IBV_QPT_RC ? "RC" : "UC"; });
INSTANTIATE_TEST_SUITE_P(Transports, VerbsQpExRc, ::testing::Values(IBV_QPT_RC),
                         [](const auto&) { return "RC"; });

// UD: SEND and SEND_WITH_IMM with wr_set_ud_addr.
class VerbsQpExUd : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(connect_pair(a_, b_));
    ASSERT_NE(ah_ = ah_to(a_, b_.lid), nullptr);
  }
  void TearDown() override {
    if (ah_) ibv_destroy_ah(ah_);
  }
  // Starts a sequence on a_ with a signalled SEND of `wr_id` to b_.
  ibv_qp_ex* send(uint64_t wr_id) {
    ibv_qp_ex* q = a_.qpx;
    ibv_wr_start(q);
    q->wr_id = wr_id;
    q->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(q);
    ibv_wr_set_ud_addr(q, ah_, b_.qp->qp_num, kQkey);
    return q;
  }
  static ibv_ah* ah_to(ExSide& s, uint16_t lid) {
    ibv_ah_attr a{};
    a.dlid = lid;
    a.port_num = 1;
    return ibv_create_ah(s.pd, &a);
  }
  ExSide a_{0, IBV_QPT_UD, kUdOps};
  ExSide b_{1, IBV_QPT_UD, kUdOps};
  ibv_ah* ah_ = nullptr;
};

TEST_F(VerbsQpExUd, SendsGoToTheAddressTheSetterGave) {
  std::memcpy(a_.buf.data(), "datagram", 8);
  ASSERT_EQ(b_.post_recv(1, 0, 128), 0);
  ASSERT_EQ(b_.post_recv(2, 128, 128), 0);
  ibv_qp_ex* q = send(5);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 8);
  q->wr_id = 6;
  ibv_wr_send_imm(q, htobe32(42));
  char word[] = "inline";
  ibv_wr_set_inline_data(q, word, 6);  // the setters in either order
  ibv_wr_set_ud_addr(q, ah_, b_.qp->qp_num, kQkey);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const std::vector<ibv_wc> sent = poll_exactly(a_.cq, 2);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].wr_id, 5u);
  EXPECT_EQ(sent[1].wr_id, 6u);
  const std::vector<ibv_wc> got = poll_exactly(b_.cq, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(got[0].byte_len, 40u + 8);
  EXPECT_EQ(got[0].src_qp, a_.qp->qp_num);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 40, "datagram", 8), 0);
  EXPECT_EQ(got[1].byte_len, 40u + 6);
  EXPECT_EQ(got[1].wc_flags & IBV_WC_WITH_IMM, static_cast<unsigned>(IBV_WC_WITH_IMM));
  EXPECT_EQ(be32toh(got[1].imm_data), 42u);
  EXPECT_EQ(std::memcmp(b_.buf.data() + 128 + 40, "inline", 6), 0);
}

TEST_F(VerbsQpExUd, WhatUdHasNotFailsTheSequence) {
  ibv_qp_ex* q = a_.qpx;
  ibv_wr_start(q);
  ibv_wr_rdma_write(q, 1, 0);  // filled, as verbs.h calls it without a check, but refused
  EXPECT_EQ(ibv_wr_complete(q), EOPNOTSUPP);
  ibv_wr_start(q);
  ibv_wr_send(q);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 8);  // no address
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  ibv_wr_start(q);
  ibv_wr_send(q);
  ibv_wr_set_ud_addr(q, nullptr, b_.qp->qp_num, kQkey);
  ibv_wr_set_sge(q, a_.mr->lkey, a_.at(0), 8);
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  EXPECT_TRUE(poll_for(a_.cq, 1, 100).empty());
}

TEST_F(VerbsQpExUd, ABadLkeyIsACompletionErrorAsWithPostSend) {
  ibv_qp_ex* q = send(9);
  ibv_wr_set_sge(q, a_.mr->lkey ^ 0x100, a_.at(0), 8);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  const std::vector<ibv_wc> wc = poll_exactly(a_.cq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 9u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR);
}

}  // namespace
}  // namespace ibfab::testing
