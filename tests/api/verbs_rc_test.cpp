// RC and UC QPs between two hosts of an in-process fabric, through the
// public verbs API only, connected by hand as ibv_rc_pingpong connects them
// (QPN, PSN and LID exchanged): what lands in the other context's memory
// (heap, stack, mmap), every completion field, and the errors at the call
// and in completions that mlx5 gives.
#include <sys/mman.h>

#include <chrono>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "tests/api/verbs_connect.h"
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

constexpr std::size_t kBuf = 2 << 20;
constexpr int kLocal = IBV_ACCESS_LOCAL_WRITE;
constexpr int kRemoteWrite = IBV_ACCESS_REMOTE_WRITE;
constexpr int kRemoteAtomic = IBV_ACCESS_REMOTE_ATOMIC;
constexpr int kAllAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// One side: a context on a host, its PD, CQ, connected QP and a registered
// heap buffer.
struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  ibv_srq* srq = nullptr;
  ibv_pd* protection = nullptr;  // with `parent`: the PD under the parent domain `pd`
  std::vector<uint8_t> buf = std::vector<uint8_t>(kBuf);
  uint16_t lid = 0;
  uint32_t psn = 0;

  // With `shared`, the QP takes its receives from an SRQ of `depth` WQEs;
  // with `parent`, the MR, SRQ and QP are on a parent domain over the PD.
  Side(int index, ibv_qp_type type, uint32_t depth, uint32_t psn_, bool shared = false, bool parent = false)
      : psn(psn_) {
    ibv_device* d = device(index);
    if (!d || !(ctx = ibv_open_device(d))) return;
    pd = ibv_alloc_pd(ctx);
    if (parent && pd) {
      protection = pd;
      ibv_parent_domain_init_attr pa{};
      pa.pd = protection;
      pd = ibv_alloc_parent_domain(ctx, &pa);
    }
    cq = ibv_create_cq(ctx, 1024, nullptr, nullptr, 0);
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), kAllAccess);
    ibv_qp_init_attr a{};
    a.send_cq = a.recv_cq = cq;
    a.cap.max_send_wr = a.cap.max_recv_wr = depth;
    a.cap.max_send_sge = a.cap.max_recv_sge = 4;
    a.cap.max_inline_data = 64;
    a.qp_type = type;
    if (shared) {
      ibv_srq_init_attr sa{};
      sa.attr.max_wr = depth;
      sa.attr.max_sge = 2;
      a.srq = srq = ibv_create_srq(pd, &sa);
    }
    qp = ibv_create_qp(pd, &a);
    ibv_port_attr pa;
    if (ctx && ibv_query_port(ctx, 1, &pa) == 0) lid = pa.lid;
  }
  ~Side() {
    if (qp) ibv_destroy_qp(qp);
    if (srq) ibv_destroy_srq(srq);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (protection) ibv_dealloc_pd(protection);
    if (ctx) ibv_close_device(ctx);
  }
  bool ok() const { return ctx && pd && cq && qp && mr; }
  uint64_t at(std::size_t offset) { return reinterpret_cast<uint64_t>(buf.data() + offset); }

  // RESET -> INIT -> RTR -> RTS towards `peer`, with ibv_rc_pingpong's masks.
  int connect(const Side& peer) { return connect_qp(qp, peer.qp->qp_num, peer.lid, peer.psn, psn); }
  int post_recv(uint64_t wr_id, std::vector<ibv_sge> sges) {
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = sges.data();
    wr.num_sge = static_cast<int>(sges.size());
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp, &wr, &bad);
  }
  int post(ibv_send_wr& wr) {
    ibv_send_wr* bad = nullptr;
    const int e = ibv_post_send(qp, &wr, &bad);
    EXPECT_EQ(bad, e ? &wr : nullptr);
    return e;
  }
};

void fill(uint8_t* p, std::size_t n, uint8_t seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 9));
}

class VerbsRc : public ::testing::TestWithParam<ibv_qp_type> {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    ASSERT_TRUE(a_.ok());
    ASSERT_TRUE(b_.ok());
    ASSERT_NE(a_.lid, b_.lid);
    ASSERT_EQ(a_.connect(b_), 0);
    ASSERT_EQ(b_.connect(a_), 0);
  }
  // One completion on `side`'s CQ.
  static ibv_wc one(Side& side) {
    const std::vector<ibv_wc> wc = poll_for(side.cq, 1);
    EXPECT_EQ(wc.size(), 1u);
    return wc.empty() ? ibv_wc{} : wc[0];
  }
  // Returns once what a_ sent before has landed at b_: a zero-length SEND
  // behind it is received (UC completes a WRITE when it has left, not when
  // it has landed; messages of one QP arrive in order).
  void delivered() {
    ASSERT_EQ(b_.post_recv(999, {}), 0);
    ibv_send_wr wr = rdma(IBV_WR_SEND, 998, nullptr, 0, 0, 0);
    ASSERT_EQ(a_.post(wr), 0);
    EXPECT_EQ(one(a_).wr_id, 998u);
    const ibv_wc r = one(b_);
    EXPECT_EQ(r.wr_id, 999u);
    EXPECT_EQ(r.status, IBV_WC_SUCCESS);
  }
  ibv_send_wr rdma(ibv_wr_opcode op, uint64_t wr_id, ibv_sge* sge, int n, uint64_t remote, uint32_t rkey) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = op;
    wr.sg_list = sge;
    wr.num_sge = n;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
    return wr;
  }
  void expect_send_wc(const ibv_wc& wc, uint64_t wr_id, ibv_wc_opcode op, uint32_t byte_len = 0) {
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(wc.wr_id, wr_id);
    EXPECT_EQ(wc.opcode, op);
    EXPECT_EQ(wc.qp_num, a_.qp->qp_num);
    if (op == IBV_WC_RDMA_READ || op == IBV_WC_COMP_SWAP || op == IBV_WC_FETCH_ADD) EXPECT_EQ(wc.byte_len, byte_len);
    EXPECT_EQ(wc.vendor_err, 0u);
  }
  Side a_{0, GetParam(), 64, 0x123456};  // H3
  Side b_{1, GetParam(), 64, 0x00ABCD};  // another host
};

class VerbsRcOnly : public VerbsRc {};

TEST_P(VerbsRc, SendsOfEverySizeAndSgeCountLandInTheReceiversBuffers) {
  uint64_t id = 1;
  for (const uint32_t size : {1u, 100u, 4096u, 65537u, 1u << 20}) {
    for (const int nsge : {1, 4}) {
      fill(a_.buf.data(), size, static_cast<uint8_t>(size + nsge));
      std::fill(b_.buf.begin(), b_.buf.end(), 0);
      // The sender's and the receiver's SGEs split the message differently.
      std::vector<ibv_sge> send_sges, recv_sges;
      uint32_t done = 0;
      for (int i = 0; i < nsge; ++i) {
        const uint32_t len = i + 1 == nsge ? size - done : size / nsge;
        send_sges.push_back({a_.at(done), len, a_.mr->lkey});
        done += len;
      }
      recv_sges.push_back({b_.at(0), size / 3, b_.mr->lkey});
      if (nsge > 1) recv_sges.push_back({b_.at(8192 + size / 3), size - size / 3 + 16, b_.mr->lkey});
      else recv_sges[0].length = size + 16;
      ASSERT_EQ(b_.post_recv(id + 1000, recv_sges), 0);
      ibv_send_wr wr = rdma(IBV_WR_SEND, id, send_sges.data(), nsge, 0, 0);
      ASSERT_EQ(a_.post(wr), 0);
      expect_send_wc(one(a_), id, IBV_WC_SEND);
      const ibv_wc r = one(b_);
      EXPECT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
      EXPECT_EQ(r.wr_id, id + 1000);
      EXPECT_EQ(r.opcode, IBV_WC_RECV);
      EXPECT_EQ(r.byte_len, size);
      EXPECT_EQ(r.qp_num, b_.qp->qp_num);
      EXPECT_EQ(r.wc_flags, 0u);
      EXPECT_EQ(r.slid, a_.lid);
      std::vector<uint8_t> got(b_.buf.begin(), b_.buf.begin() + recv_sges[0].length);
      if (nsge > 1) got.insert(got.end(), b_.buf.begin() + 8192 + size / 3, b_.buf.begin() + 8192 + size);
      got.resize(size);
      ASSERT_TRUE(std::equal(got.begin(), got.end(), a_.buf.begin())) << size << " bytes, " << nsge << " SGEs";
      ++id;
    }
  }
}

TEST_P(VerbsRc, InlineSendTakesTheBytesAtPostAndSendWithImmediateCarriesIt) {
  std::memcpy(a_.buf.data(), "inline bytes", 12);
  ASSERT_EQ(b_.post_recv(7, {{b_.at(0), 64, b_.mr->lkey}}), 0);
  ibv_sge sge{a_.at(0), 12, 0};  // no lkey needed for inline data
  ibv_send_wr wr = rdma(IBV_WR_SEND_WITH_IMM, 3, &sge, 1, 0, 0);
  wr.send_flags |= IBV_SEND_INLINE;
  wr.imm_data = htobe32(0xC0FFEE);
  ASSERT_EQ(a_.post(wr), 0);
  std::memcpy(a_.buf.data(), "overwritten!", 12);  // after the call: the message keeps the old bytes
  expect_send_wc(one(a_), 3, IBV_WC_SEND);
  const ibv_wc r = one(b_);
  EXPECT_EQ(r.status, IBV_WC_SUCCESS);
  EXPECT_EQ(r.opcode, IBV_WC_RECV);
  EXPECT_EQ(r.byte_len, 12u);
  EXPECT_EQ(r.wc_flags, static_cast<unsigned>(IBV_WC_WITH_IMM));
  EXPECT_EQ(be32toh(r.imm_data), 0xC0FFEEu);
  EXPECT_EQ(std::memcmp(b_.buf.data(), "inline bytes", 12), 0);
  // More inline bytes than the QP's max_inline_data: refused at the call.
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(a_.qp, &attr, IBV_QP_CAP, &init), 0);
  sge.length = init.cap.max_inline_data + 1;
  EXPECT_EQ(a_.post(wr), EINVAL);
}

TEST_P(VerbsRc, RdmaWriteLandsWithoutAReceiveAndWithImmediateConsumesOne) {
  fill(a_.buf.data(), 5000, 9);
  ibv_sge sge{a_.at(0), 5000, a_.mr->lkey};
  ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, 11, &sge, 1, b_.at(100), b_.mr->rkey);
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 11, IBV_WC_RDMA_WRITE);
  EXPECT_TRUE(poll_for(b_.cq, 1, 50).empty()) << "a WRITE completes nothing at the target";
  delivered();
  EXPECT_TRUE(std::equal(a_.buf.begin(), a_.buf.begin() + 5000, b_.buf.begin() + 100));
  ASSERT_EQ(b_.post_recv(21, {}), 0);  // a WRITE with immediate takes a receive, no SGE needed
  wr = rdma(IBV_WR_RDMA_WRITE_WITH_IMM, 12, &sge, 1, b_.at(200000), b_.mr->rkey);
  wr.imm_data = htobe32(77);
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 12, IBV_WC_RDMA_WRITE);
  const ibv_wc r = one(b_);
  EXPECT_EQ(r.status, IBV_WC_SUCCESS);
  EXPECT_EQ(r.wr_id, 21u);
  EXPECT_EQ(r.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(r.byte_len, 5000u);
  EXPECT_EQ(r.wc_flags, static_cast<unsigned>(IBV_WC_WITH_IMM));
  EXPECT_EQ(be32toh(r.imm_data), 77u);
  EXPECT_TRUE(std::equal(a_.buf.begin(), a_.buf.begin() + 5000, b_.buf.begin() + 200000));
}

TEST_P(VerbsRc, StackAndMmapMemoryAreTargetsToo) {
  // b's registrations of its stack and of an anonymous mapping.
  std::array<uint8_t, 256> stack{};
  ibv_mr* smr = ibv_reg_mr(b_.pd, stack.data(), stack.size(), kAllAccess);
  ASSERT_NE(smr, nullptr);
  void* map = ::mmap(nullptr, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ibv_mr* mmr = ibv_reg_mr(b_.pd, map, 3 * 4096, kAllAccess);
  ASSERT_NE(mmr, nullptr);
  fill(a_.buf.data(), 8192, 5);
  ibv_sge sge{a_.at(0), 200, a_.mr->lkey};
  ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, 1, &sge, 1, reinterpret_cast<uint64_t>(stack.data() + 10), smr->rkey);
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 1, IBV_WC_RDMA_WRITE);
  delivered();
  EXPECT_TRUE(std::equal(a_.buf.begin(), a_.buf.begin() + 200, stack.begin() + 10));
  EXPECT_EQ(stack[9], 0);
  EXPECT_EQ(stack[210], 0);
  sge.length = 8192;
  wr = rdma(IBV_WR_RDMA_WRITE, 2, &sge, 1, reinterpret_cast<uint64_t>(map) + 2000, mmr->rkey);
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 2, IBV_WC_RDMA_WRITE);
  delivered();
  EXPECT_EQ(std::memcmp(a_.buf.data(), static_cast<uint8_t*>(map) + 2000, 8192), 0);
  EXPECT_EQ(ibv_dereg_mr(mmr), 0);
  EXPECT_EQ(ibv_dereg_mr(smr), 0);
  ::munmap(map, 3 * 4096);
}

TEST_P(VerbsRc, PostingPastTheQueueIsEnomemAtTheCall) {
  std::vector<ibv_recv_wr> rwr(65);
  std::vector<ibv_sge> sge(65, ibv_sge{b_.at(0), 16, b_.mr->lkey});
  for (std::size_t i = 0; i < rwr.size(); ++i) {
    rwr[i].wr_id = i;
    rwr[i].sg_list = &sge[i];
    rwr[i].num_sge = 1;
    rwr[i].next = i + 1 < rwr.size() ? &rwr[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_recv(b_.qp, rwr.data(), &bad), ENOMEM);
  EXPECT_EQ(bad, &rwr[64]);
  // The send queue: 64 WRITEs posted, none polled, the 65th refused.
  ibv_sge s{a_.at(0), 8, a_.mr->lkey};
  for (int i = 0; i < 64; ++i) {
    ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, i, &s, 1, b_.at(0), b_.mr->rkey);
    ASSERT_EQ(a_.post(wr), 0) << i;
  }
  ibv_send_wr wr = rdma(IBV_WR_RDMA_WRITE, 64, &s, 1, b_.at(0), b_.mr->rkey);
  EXPECT_EQ(a_.post(wr), ENOMEM);
  EXPECT_EQ(poll_for(a_.cq, 64).size(), 64u);
  EXPECT_EQ(a_.post(wr), 0) << "room again once the completions are polled";
}

TEST_P(VerbsRc, BadPostsAreRefusedAtTheCall) {
  ibv_sge s[5] = {};
  for (auto& x : s) x = {a_.at(0), 8, a_.mr->lkey};
  ibv_send_wr wr = rdma(IBV_WR_SEND, 1, s, 5, 0, 0);
  EXPECT_EQ(a_.post(wr), EINVAL) << "more SGEs than max_send_sge";
  wr = rdma(IBV_WR_SEND, 1, s, 1, 0, 0);
  const int no_such_opcode = IBV_WR_BIND_MW + 10;  // as a C caller may store it
  std::memcpy(&wr.opcode, &no_such_opcode, sizeof no_such_opcode);
  EXPECT_EQ(a_.post(wr), EINVAL) << "no such opcode";
  if (GetParam() == IBV_QPT_UC) {
    wr = rdma(IBV_WR_RDMA_READ, 1, s, 1, b_.at(0), b_.mr->rkey);
    EXPECT_EQ(a_.post(wr), EINVAL) << "UC has no READ";
  }
  std::vector<ibv_sge> five(s, s + 5);
  EXPECT_EQ(b_.post_recv(1, five), EINVAL) << "more SGEs than max_recv_sge";
  // A QP back in RESET takes nothing.
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(ibv_modify_qp(a_.qp, &a, IBV_QP_STATE), 0);
  wr = rdma(IBV_WR_SEND, 1, s, 1, 0, 0);
  EXPECT_EQ(a_.post(wr), EINVAL);
  EXPECT_EQ(a_.post_recv(1, {s[0]}), EINVAL);
}

TEST_P(VerbsRc, QueryQpReturnsWhatWasSet) {
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(a_.qp, &attr, IBV_QP_STATE | IBV_QP_CAP | IBV_QP_DEST_QPN, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(attr.dest_qp_num, b_.qp->qp_num);
  EXPECT_EQ(attr.rq_psn, b_.psn);
  EXPECT_EQ(attr.sq_psn, a_.psn);
  EXPECT_EQ(attr.path_mtu, IBV_MTU_1024);
  EXPECT_EQ(attr.ah_attr.dlid, b_.lid);
  EXPECT_EQ(init.qp_type, GetParam());
  EXPECT_GE(init.cap.max_send_wr, 64u);
  EXPECT_EQ(init.cap.max_send_sge, 4u);
  EXPECT_GE(init.cap.max_inline_data, 64u);
  if (GetParam() == IBV_QPT_RC) {
    EXPECT_EQ(attr.timeout, 14);
    EXPECT_EQ(attr.retry_cnt, 7);
    EXPECT_EQ(attr.rnr_retry, 7);
    EXPECT_EQ(attr.max_rd_atomic, 4);
    EXPECT_EQ(attr.max_dest_rd_atomic, 4);
    EXPECT_EQ(attr.min_rnr_timer, 12);
  }
}

TEST_P(VerbsRcOnly, RdmaReadBringsTheTargetsBytes) {
  fill(b_.buf.data(), 70000, 3);
  ibv_sge sge[2] = {{a_.at(0), 30000, a_.mr->lkey}, {a_.at(100000), 40000, a_.mr->lkey}};
  ibv_send_wr wr = rdma(IBV_WR_RDMA_READ, 5, sge, 2, b_.at(0), b_.mr->rkey);
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 5, IBV_WC_RDMA_READ, 70000);
  EXPECT_TRUE(std::equal(b_.buf.begin(), b_.buf.begin() + 30000, a_.buf.begin()));
  EXPECT_TRUE(std::equal(b_.buf.begin() + 30000, b_.buf.begin() + 70000, a_.buf.begin() + 100000));
}

TEST_P(VerbsRcOnly, AtomicsReturnTheOldValueAndChangeTheTarget) {
  uint64_t* target = reinterpret_cast<uint64_t*>(b_.buf.data() + 4096);
  *target = 40;
  ibv_sge sge{a_.at(0), 8, a_.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 1;
  wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = b_.at(4096);
  wr.wr.atomic.rkey = b_.mr->rkey;
  wr.wr.atomic.compare_add = 2;
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 1, IBV_WC_FETCH_ADD, 8);
  uint64_t old;
  std::memcpy(&old, a_.buf.data(), 8);
  EXPECT_EQ(old, 40u);
  EXPECT_EQ(*target, 42u);
  wr.wr_id = 2;
  wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
  wr.wr.atomic.compare_add = 42;
  wr.wr.atomic.swap = 1000;
  sge.addr = a_.at(8);
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 2, IBV_WC_COMP_SWAP, 8);
  std::memcpy(&old, a_.buf.data() + 8, 8);
  EXPECT_EQ(old, 42u);
  EXPECT_EQ(*target, 1000u);
  wr.wr_id = 3;  // compare fails: unchanged
  wr.wr.atomic.compare_add = 1;
  wr.wr.atomic.swap = 5;
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 3, IBV_WC_COMP_SWAP, 8);
  EXPECT_EQ(*target, 1000u);
}

TEST_P(VerbsRcOnly, AWrongRkeyIsARemoteAccessErrorAndTheQueueIsFlushed) {
  ibv_sge sge{a_.at(0), 64, a_.mr->lkey};
  ibv_send_wr w1 = rdma(IBV_WR_RDMA_WRITE, 1, &sge, 1, b_.at(0), b_.mr->rkey ^ 0x100);
  ibv_send_wr w2 = rdma(IBV_WR_RDMA_WRITE, 2, &sge, 1, b_.at(0), b_.mr->rkey);
  w1.next = &w2;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(a_.qp, &w1, &bad), 0);
  const std::vector<ibv_wc> wc = poll_for(a_.cq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wc[0].status);
  EXPECT_EQ(wc[0].qp_num, a_.qp->qp_num);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(a_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
  // A post to a QP in error completes, flushed.
  ibv_send_wr w3 = rdma(IBV_WR_SEND, 3, &sge, 1, 0, 0);
  ASSERT_EQ(a_.post(w3), 0);
  const ibv_wc f = one(a_);
  EXPECT_EQ(f.wr_id, 3u);
  EXPECT_EQ(f.status, IBV_WC_WR_FLUSH_ERR);
}

TEST_P(VerbsRcOnly, AReceiveInAnotherPdsRegionIsARemoteOperationError) {
  // b's MR moves to another PD: its receive's SGE no longer fits b's QP.
  ibv_pd* other = ibv_alloc_pd(b_.ctx);
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(ibv_rereg_mr(b_.mr, IBV_REREG_MR_CHANGE_PD, other, nullptr, 0, 0), 0);
  EXPECT_EQ(b_.mr->pd, other);
  ASSERT_EQ(b_.post_recv(1, {{b_.at(0), 64, b_.mr->lkey}}), 0);
  ASSERT_EQ(a_.post_recv(2, {{a_.at(4096), 64, a_.mr->lkey}}), 0);
  ibv_sge sge{a_.at(0), 64, a_.mr->lkey};
  ibv_send_wr wr = rdma(IBV_WR_SEND, 3, &sge, 1, 0, 0);
  ASSERT_EQ(a_.post(wr), 0);
  const std::vector<ibv_wc> at_a = poll_for(a_.cq, 2);
  ASSERT_EQ(at_a.size(), 2u);
  EXPECT_EQ(at_a[0].wr_id, 3u) << "the send's error comes before the flush of the receive";
  EXPECT_EQ(at_a[0].status, IBV_WC_REM_OP_ERR) << ibv_wc_status_str(at_a[0].status);
  EXPECT_EQ(at_a[1].wr_id, 2u);
  EXPECT_EQ(at_a[1].status, IBV_WC_WR_FLUSH_ERR);
  const ibv_wc at_b = one(b_);
  EXPECT_EQ(at_b.wr_id, 1u);
  EXPECT_EQ(at_b.status, IBV_WC_LOC_PROT_ERR) << ibv_wc_status_str(at_b.status);
  ASSERT_EQ(ibv_rereg_mr(b_.mr, IBV_REREG_MR_CHANGE_PD, b_.pd, nullptr, 0, 0), 0);
  EXPECT_EQ(ibv_dealloc_pd(other), 0);
}

// QPs, MRs and an SRQ on parent domains carry traffic as on their PDs; the
// PD under a parent domain is busy until the parent domain goes; a CQ takes
// a parent domain and nothing else as its PD.
TEST(VerbsParentDomain, ObjectsOnAParentDomainWorkAsOnItsPd) {
  use_embedded_fabric();
  Side a{0, IBV_QPT_RC, 16, 0x111, /*shared=*/true, /*parent=*/true};
  Side b{1, IBV_QPT_RC, 16, 0x222, /*shared=*/false, /*parent=*/true};
  ASSERT_TRUE(a.ok() && a.srq && a.protection);
  ASSERT_TRUE(b.ok() && b.protection);
  EXPECT_NE(a.pd, a.protection);
  EXPECT_EQ(a.mr->pd, a.pd);
  ASSERT_EQ(a.connect(b), 0);
  ASSERT_EQ(b.connect(a), 0);
  fill(b.buf.data(), 256, 9);
  ibv_sge rs{a.at(0), 256, a.mr->lkey};
  ibv_recv_wr r{};
  r.wr_id = 1;
  r.sg_list = &rs;
  r.num_sge = 1;
  ibv_recv_wr* bad_r = nullptr;
  ASSERT_EQ(ibv_post_srq_recv(a.srq, &r, &bad_r), 0);
  ibv_sge ss{b.at(0), 256, b.mr->lkey};
  ibv_send_wr s{.wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
  ASSERT_EQ(b.post(s), 0);
  const std::vector<ibv_wc> at_b = poll_for(b.cq, 1);
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_EQ(at_b[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(at_b[0].status);
  const std::vector<ibv_wc> at_a = poll_for(a.cq, 1);
  ASSERT_EQ(at_a.size(), 1u);
  EXPECT_EQ(at_a[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(at_a[0].status);
  EXPECT_EQ(std::memcmp(a.buf.data(), b.buf.data(), 256), 0);

  EXPECT_EQ(ibv_dealloc_pd(a.protection), EBUSY);
  ibv_cq_init_attr_ex cx{};
  cx.cqe = 8;
  cx.wc_flags = IBV_WC_STANDARD_FLAGS;
  cx.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
  cx.parent_domain = a.pd;
  ibv_cq_ex* cq = ibv_create_cq_ex(a.ctx, &cx);
  ASSERT_NE(cq, nullptr) << std::strerror(errno);
  EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
  cx.parent_domain = a.protection;
  EXPECT_EQ(ibv_create_cq_ex(a.ctx, &cx), nullptr);
  EXPECT_EQ(errno, EINVAL);
  // A parent domain over a parent domain, or with a thread domain, is refused.
  ibv_parent_domain_init_attr pa{};
  pa.pd = a.pd;
  EXPECT_EQ(ibv_alloc_parent_domain(a.ctx, &pa), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

// A third QP of a_'s context on a_'s CQ, in INIT, whose three receives
// (posted in one call, so that the engine takes them together) are then
// flushed by a move to ERR in one go: once the first flush is polled, the
// other two are in the CQ before the engine takes the next request.
ibv_qp* flushed_on_shared_cq(Side& a, ibv_qp_type type) {
  ibv_qp_init_attr ia{};
  ia.send_cq = ia.recv_cq = a.cq;
  ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
  ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
  ia.qp_type = type;
  ibv_qp* x = ibv_create_qp(a.pd, &ia);
  if (!x) return nullptr;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  EXPECT_EQ(ibv_modify_qp(x, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
  ibv_sge sge{a.at(0), 64, a.mr->lkey};
  ibv_recv_wr r[3]{};
  for (int i = 0; i < 3; ++i) {
    r[i].wr_id = 11 + i;
    r[i].sg_list = &sge;
    r[i].num_sge = 1;
    r[i].next = i < 2 ? &r[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_recv(x, r, &bad), 0);
  attr.qp_state = IBV_QPS_ERR;
  EXPECT_EQ(ibv_modify_qp(x, &attr, IBV_QP_STATE), 0);
  ibv_wc wc{};
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ibv_poll_cq(a.cq, 1, &wc) == 0 && std::chrono::steady_clock::now() < end) {
  }
  EXPECT_EQ(wc.wr_id, 11u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(wc.qp_num, x->qp_num);
  return x;
}

TEST_P(VerbsRc, ResetTakesTheQpsUnpolledCompletionsOffItsCq) {
  ibv_qp* x = flushed_on_shared_cq(a_, GetParam());
  ASSERT_NE(x, nullptr);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(ibv_modify_qp(x, &attr, IBV_QP_STATE), 0);
  // As on mlx5: x's two flushes not yet polled are gone (a program that
  // restarts a QP from RESET does not see its old WQEs complete again).
  EXPECT_TRUE(poll_exactly(a_.cq, 0).empty());
  // The CQ goes on.
  ASSERT_EQ(b_.post_recv(1, {{b_.at(0), 64, b_.mr->lkey}}), 0);
  ibv_sge sge{a_.at(0), 64, a_.mr->lkey};
  ibv_send_wr wr = rdma(IBV_WR_SEND, 2, &sge, 1, 0, 0);
  ASSERT_EQ(a_.post(wr), 0);
  expect_send_wc(one(a_), 2, IBV_WC_SEND);
  EXPECT_EQ(one(b_).wr_id, 1u);
  EXPECT_EQ(ibv_destroy_qp(x), 0);
}

TEST_P(VerbsRc, DestroyingAQpTakesItsUnpolledCompletionsOffItsCq) {
  ibv_qp* x = flushed_on_shared_cq(a_, GetParam());
  ASSERT_NE(x, nullptr);
  ASSERT_EQ(ibv_destroy_qp(x), 0);
  // Nothing names the QP that is gone.
  EXPECT_TRUE(poll_exactly(a_.cq, 0).empty());
}

TEST(VerbsSrq, ReceivesComeFromTheSharedQueueAndTheLimitFiresOnce) {
  use_embedded_fabric();
  Side a(0, IBV_QPT_RC, 16, 0x100);
  Side b(1, IBV_QPT_RC, 16, 0x200, true);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(b.ok());
  ASSERT_NE(b.srq, nullptr);
  ASSERT_EQ(a.connect(b), 0);
  ASSERT_EQ(b.connect(a), 0);
  ibv_qp_attr qa;
  ibv_qp_init_attr init;
  ASSERT_EQ(ibv_query_qp(b.qp, &qa, IBV_QP_CAP, &init), 0);
  EXPECT_EQ(init.srq, b.srq);
  EXPECT_EQ(init.cap.max_recv_wr, 0u);
  EXPECT_EQ(b.post_recv(1, {{b.at(0), 8, b.mr->lkey}}), EINVAL) << "a QP with an SRQ has no receive queue";
  // The limit first: the receives posted below are followed by no request
  // of b's, and reach the engine through the ring alone.
  ibv_srq_attr sa{};
  sa.srq_limit = 3;
  ASSERT_EQ(ibv_modify_srq(b.srq, &sa, IBV_SRQ_LIMIT), 0);
  for (uint64_t i = 0; i < 4; ++i) {
    ibv_sge sge{b.at(i * 100), 100, b.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = 40 + i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_srq_recv(b.srq, &wr, &bad), 0);
  }
  sa.max_wr = 64;
  EXPECT_EQ(ibv_modify_srq(b.srq, &sa, IBV_SRQ_MAX_WR), EINVAL) << "no resizing, as mlx5";
  ASSERT_EQ(ibv_query_srq(b.srq, &sa), 0);
  EXPECT_EQ(sa.srq_limit, 3u);
  EXPECT_EQ(sa.max_wr, 16u);
  std::memcpy(a.buf.data(), "shared", 6);
  for (uint64_t i = 0; i < 2; ++i) {
    ibv_sge sge{a.at(0), 6, a.mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = i;
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    ASSERT_EQ(a.post(wr), 0);
  }
  EXPECT_EQ(poll_for(a.cq, 2).size(), 2u);
  const std::vector<ibv_wc> r = poll_for(b.cq, 2);
  ASSERT_EQ(r.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(r[i].wr_id, 40 + i);
    EXPECT_EQ(r[i].qp_num, b.qp->qp_num);
    EXPECT_EQ(r[i].byte_len, 6u);
  }
  EXPECT_EQ(std::memcmp(b.buf.data() + 100, "shared", 6), 0);
  // Two left, fewer than the limit of 3: the event, once.
  ibv_async_event ev;
  ASSERT_EQ(ibv_get_async_event(b.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
  EXPECT_EQ(ev.element.srq, b.srq);
  ibv_ack_async_event(&ev);
  ASSERT_EQ(ibv_query_srq(b.srq, &sa), 0);
  EXPECT_EQ(ibv_destroy_srq(b.srq), EBUSY) << "a QP uses it";
}

TEST(VerbsSrq, AnOrdinarySrqHasANumberAsOnMlx5) {
  use_embedded_fabric();
  Side a(0, IBV_QPT_RC, 16, 0x100, true);
  ASSERT_TRUE(a.ok());
  ibv_srq_init_attr attr{};
  attr.attr.max_wr = 8;
  attr.attr.max_sge = 1;
  ibv_srq* other = ibv_create_srq(a.pd, &attr);
  ASSERT_NE(other, nullptr);
  uint32_t first = 0, second = 0;
  ASSERT_EQ(ibv_get_srq_num(a.srq, &first), 0);
  ASSERT_EQ(ibv_get_srq_num(other, &second), 0);
  EXPECT_NE(first, 0u);
  EXPECT_NE(first, second) << "each SRQ its own number";
  EXPECT_LE(second, 0xFFFFFFu);
  EXPECT_EQ(ibv_destroy_srq(other), 0);
}

INSTANTIATE_TEST_SUITE_P(RcAndUc, VerbsRc, ::testing::Values(IBV_QPT_RC, IBV_QPT_UC),
                         [](const auto& info) { return info.param == IBV_QPT_RC ? "RC" : "UC"; });
INSTANTIATE_TEST_SUITE_P(Rc, VerbsRcOnly, ::testing::Values(IBV_QPT_RC),
                         [](const auto&) { return "RC"; });

// Registration, on one context.
class VerbsMr : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    ASSERT_NE(ctx_, nullptr);
    ASSERT_NE(pd_, nullptr);
  }
  void TearDown() override {
    ibv_dealloc_pd(pd_);
    ibv_close_device(ctx_);
  }
  ibv_context* ctx_ = ibv_open_device(device(0));
  ibv_pd* pd_ = ctx_ ? ibv_alloc_pd(ctx_) : nullptr;
};

TEST_F(VerbsMr, UnmappedMemoryIsEfault) {
  void* map = ::mmap(nullptr, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ASSERT_EQ(::munmap(static_cast<uint8_t*>(map) + 2 * 4096, 4096), 0);  // a hole in the third page
  errno = 0;
  EXPECT_EQ(ibv_reg_mr(pd_, map, 4 * 4096, kLocal), nullptr);
  EXPECT_EQ(errno, EFAULT);
  ibv_mr* first_two = ibv_reg_mr(pd_, map, 2 * 4096, kLocal);
  EXPECT_NE(first_two, nullptr);
  if (first_two) EXPECT_EQ(ibv_dereg_mr(first_two), 0);
  ::munmap(map, 4 * 4096);
}

TEST_F(VerbsMr, AccessFlagsAndPdsAreCheckedAsRdmaCoreChecksThem) {
  std::vector<uint8_t> buf(4096);
  errno = 0;
  EXPECT_EQ(ibv_reg_mr(pd_, buf.data(), buf.size(), kRemoteWrite), nullptr);
  EXPECT_EQ(errno, EINVAL) << "remote write without local write";
  errno = 0;
  EXPECT_EQ(ibv_reg_mr(pd_, buf.data(), buf.size(), kRemoteAtomic), nullptr);
  EXPECT_EQ(errno, EINVAL) << "remote atomic without local write";
  ibv_mr* mr = ibv_reg_mr(pd_, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->lkey, mr->rkey);
  EXPECT_EQ(ibv_dealloc_pd(pd_), EBUSY) << "a region still uses it";
  // ibv_rereg_mr: the access changes, the keys do not.
  std::vector<uint8_t> other(8192);
  EXPECT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, nullptr, other.data(),
                         other.size(), IBV_ACCESS_LOCAL_WRITE),
            0);
  EXPECT_EQ(mr->addr, other.data());
  EXPECT_EQ(mr->length, other.size());
  errno = 0;
  EXPECT_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, IBV_ACCESS_REMOTE_WRITE),
            IBV_REREG_MR_ERR_CMD);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

}  // namespace
}  // namespace ibfab::testing
