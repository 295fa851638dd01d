// Many RC QPs between two hosts of an in-process fabric: the engine looks
// at the rings of idle QPs only a slice at a time (api/server/ring_scan.h),
// yet a receive posted before the peer's SEND is there when the SEND
// arrives, as on hardware: with no RNR retries allowed, every SEND of 200
// pairs, each to a QP that had been idle, completes without an RNR NAK.
#include <infiniband/verbs.h>

#include <cstring>
#include <vector>

#include "tests/api/verbs_connect.h"
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

constexpr int kPairs = 200;  // more than the engine looks at in one round
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE;

struct Host {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(kPairs * 64);
  std::vector<ibv_qp*> qps;
  uint16_t lid = 0;

  explicit Host(int index) {
    ibv_device* d = device(index);
    if (!d || !(ctx = ibv_open_device(d))) return;
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 2 * kPairs, nullptr, nullptr, 0);
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), kAccess);
    ibv_port_attr pa{};
    if (ibv_query_port(ctx, 1, &pa) == 0) lid = pa.lid;
    for (int i = 0; i < kPairs; ++i) {
      ibv_qp_init_attr a{};
      a.send_cq = a.recv_cq = cq;
      a.cap.max_send_wr = a.cap.max_recv_wr = 2;
      a.cap.max_send_sge = a.cap.max_recv_sge = 1;
      a.qp_type = IBV_QPT_RC;
      a.sq_sig_all = 1;
      qps.push_back(ibv_create_qp(pd, &a));
    }
  }
  ~Host() {
    for (ibv_qp* qp : qps)
      if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
  ibv_sge sge(int i) { return {reinterpret_cast<uint64_t>(buf.data() + 64 * i), 64, mr->lkey}; }
};

class VerbsManyQps : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
};

TEST_F(VerbsManyQps, AReceivePostedBeforeThePeersSendIsThereOnAnIdleQp) {
  Host a(0), b(1);
  ASSERT_NE(a.mr, nullptr);
  ASSERT_NE(b.mr, nullptr);
  for (int i = 0; i < kPairs; ++i) {
    ASSERT_NE(a.qps[i], nullptr);
    ASSERT_NE(b.qps[i], nullptr);
    const uint8_t no_rnr_retry = 0;
    ASSERT_EQ(connect_qp(a.qps[i], b.qps[i]->qp_num, b.lid, 100, 200, IBV_ACCESS_REMOTE_WRITE, no_rnr_retry), 0);
    ASSERT_EQ(connect_qp(b.qps[i], a.qps[i]->qp_num, a.lid, 200, 100, IBV_ACCESS_REMOTE_WRITE, no_rnr_retry), 0);
  }
  int rnr = 0;
  for (int i = 0; i < kPairs; ++i) {
    ibv_sge rs = b.sge(i);
    ibv_recv_wr rwr{};
    rwr.wr_id = i;
    rwr.sg_list = &rs;
    rwr.num_sge = 1;
    ibv_recv_wr* bad_r = nullptr;
    ASSERT_EQ(ibv_post_recv(b.qps[i], &rwr, &bad_r), 0);
    std::snprintf(reinterpret_cast<char*>(a.buf.data() + 64 * i), 64, "pair %d", i);
    ibv_sge ss = a.sge(i);
    ibv_send_wr swr{};
    swr.wr_id = i;
    swr.sg_list = &ss;
    swr.num_sge = 1;
    swr.opcode = IBV_WR_SEND;
    ibv_send_wr* bad_s = nullptr;
    ASSERT_EQ(ibv_post_send(a.qps[i], &swr, &bad_s), 0);
    const std::vector<ibv_wc> sent = poll_for(a.cq, 1);
    ASSERT_EQ(sent.size(), 1u) << "pair " << i;
    if (sent[0].status == IBV_WC_RNR_RETRY_EXC_ERR) ++rnr;
    else EXPECT_EQ(sent[0].status, IBV_WC_SUCCESS) << "pair " << i << ": " << ibv_wc_status_str(sent[0].status);
    if (sent[0].status != IBV_WC_SUCCESS) continue;
    const std::vector<ibv_wc> got = poll_for(b.cq, 1);
    ASSERT_EQ(got.size(), 1u) << "pair " << i;
    EXPECT_EQ(got[0].wr_id, static_cast<uint64_t>(i));
    EXPECT_STREQ(reinterpret_cast<const char*>(b.buf.data() + 64 * i), ("pair " + std::to_string(i)).c_str());
  }
  EXPECT_EQ(rnr, 0) << "SENDs answered with an RNR NAK although their receive was posted first";
}

}  // namespace
}  // namespace ibfab::testing
