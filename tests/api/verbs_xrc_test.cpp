// XRC between two hosts of an in-process fabric, through the public verbs
// API only, connected by hand as ibv_xsrq_pingpong connects it: an XRC
// domain opened on a file (shared by inode between contexts, as between
// processes of a host), an XRC SRQ that completes on its own CQ, an
// initiator (XRC_SEND) on one host naming the SRQ by its number in each
// send WR, a target (XRC_RECV) on the other; what lands, every completion
// field, and the errors at the call and in completions that mlx5 gives.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

constexpr std::size_t kBuf = 1 << 20;
constexpr int kAllAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// A context with a PD, a CQ and a registered buffer.
struct Ctx {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(kBuf);
  uint16_t lid = 0;

  explicit Ctx(int index) {
    ibv_device* d = device(index);
    if (!d || !(ctx = ibv_open_device(d))) return;
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 256, nullptr, nullptr, 0);
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), kAllAccess);
    ibv_port_attr pa;
    if (ibv_query_port(ctx, 1, &pa) == 0) lid = pa.lid;
  }
  ~Ctx() {
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
  bool ok() const { return ctx && pd && cq && mr; }
  uint64_t at(std::size_t offset) { return reinterpret_cast<uint64_t>(buf.data() + offset); }
  ibv_sge sge(std::size_t offset, uint32_t length) const {
    return ibv_sge{reinterpret_cast<uint64_t>(buf.data() + offset), length, mr->lkey};
  }
};

ibv_xrcd* open_xrcd(ibv_context* ctx, int fd, int oflags) {
  ibv_xrcd_init_attr a{};
  a.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
  a.fd = fd;
  a.oflags = oflags;
  return ibv_open_xrcd(ctx, &a);
}

ibv_srq* create_xrc_srq(Ctx& c, ibv_xrcd* xrcd, uint32_t max_wr = 16) {
  ibv_srq_init_attr_ex a{};
  a.attr.max_wr = max_wr;
  a.attr.max_sge = 1;
  a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_PD;
  a.srq_type = IBV_SRQT_XRC;
  a.xrcd = xrcd;
  a.cq = c.cq;
  a.pd = c.pd;
  return ibv_create_srq_ex(c.ctx, &a);
}

ibv_qp* create_target(ibv_context* ctx, ibv_xrcd* xrcd) {
  ibv_qp_init_attr_ex a{};
  a.qp_type = IBV_QPT_XRC_RECV;
  a.comp_mask = IBV_QP_INIT_ATTR_XRCD;
  a.xrcd = xrcd;
  return ibv_create_qp_ex(ctx, &a);
}

ibv_qp* create_initiator(Ctx& c) {
  ibv_qp_init_attr_ex a{};
  a.qp_type = IBV_QPT_XRC_SEND;
  a.send_cq = c.cq;
  a.cap.max_send_wr = 16;
  a.cap.max_send_sge = 1;
  a.comp_mask = IBV_QP_INIT_ATTR_PD;
  a.pd = c.pd;
  return ibv_create_qp_ex(c.ctx, &a);
}

int to_init(ibv_qp* qp, int access) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = access;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

// xsrq_pingpong's masks: the target to RTR and RTS, the initiator likewise.
int connect_target(ibv_qp* tgt, uint16_t ini_lid, uint32_t ini_qpn, uint32_t psn) {
  if (int e = to_init(tgt, kAllAccess)) return e;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.dest_qp_num = ini_qpn;
  a.path_mtu = IBV_MTU_1024;
  a.rq_psn = psn;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 12;
  a.ah_attr.dlid = ini_lid;
  a.ah_attr.port_num = 1;
  if (int e = ibv_modify_qp(tgt, &a,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return e;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.sq_psn = 0x123;
  return ibv_modify_qp(tgt, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN);
}

int connect_initiator(ibv_qp* ini, uint16_t tgt_lid, uint32_t tgt_qpn, uint32_t psn) {
  if (int e = to_init(ini, 0)) return e;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.dest_qp_num = tgt_qpn;
  a.path_mtu = IBV_MTU_1024;
  a.rq_psn = 0x123;
  a.ah_attr.dlid = tgt_lid;
  a.ah_attr.port_num = 1;
  if (int e = ibv_modify_qp(ini, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
    return e;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = psn;
  a.max_rd_atomic = 4;
  return ibv_modify_qp(ini, &a,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_MAX_QP_RD_ATOMIC);
}

int post_srq(ibv_srq* srq, uint64_t wr_id, ibv_sge s) {
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &s;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_srq_recv(srq, &wr, &bad);
}

int send_to(ibv_qp* ini, uint32_t srqn, uint64_t wr_id, ibv_wr_opcode op, ibv_sge s, uint64_t remote = 0,
            uint32_t rkey = 0) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.qp_type.xrc.remote_srqn = srqn;
  if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
    wr.wr.atomic.remote_addr = remote;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = 3;
  } else {
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
  }
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(ini, &wr, &bad);
}

ibv_wc one(ibv_cq* cq) {
  const std::vector<ibv_wc> wc = poll_for(cq, 1);
  EXPECT_EQ(wc.size(), 1u);
  return wc.empty() ? ibv_wc{} : wc[0];
}

class VerbsXrc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    char dir[] = "/tmp/ibfab-xrc-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/domain";
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CREAT, S_IRUSR | S_IRGRP);
    ASSERT_GE(fd_, 0);
    ASSERT_TRUE(ini_.ok());
    ASSERT_TRUE(tgt_.ok());
    ASSERT_NE(ini_.lid, tgt_.lid);
    xrcd_ = open_xrcd(tgt_.ctx, fd_, O_CREAT);
    ASSERT_NE(xrcd_, nullptr) << std::strerror(errno);
    srq_ = create_xrc_srq(tgt_, xrcd_);
    ASSERT_NE(srq_, nullptr) << std::strerror(errno);
    ASSERT_EQ(ibv_get_srq_num(srq_, &srqn_), 0);
    tq_ = create_target(tgt_.ctx, xrcd_);
    ASSERT_NE(tq_, nullptr) << std::strerror(errno);
    iq_ = create_initiator(ini_);
    ASSERT_NE(iq_, nullptr) << std::strerror(errno);
    ASSERT_EQ(connect_target(tq_, ini_.lid, iq_->qp_num, 0x777), 0);
    ASSERT_EQ(connect_initiator(iq_, tgt_.lid, tq_->qp_num, 0x777), 0);
  }
  void TearDown() override {
    if (iq_) EXPECT_EQ(ibv_destroy_qp(iq_), 0);
    if (tq_) EXPECT_EQ(ibv_destroy_qp(tq_), 0);
    if (srq_) EXPECT_EQ(ibv_destroy_srq(srq_), 0);
    if (xrcd_) EXPECT_EQ(ibv_close_xrcd(xrcd_), 0);
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }

  Ctx ini_{0}, tgt_{1};
  std::string dir_, path_;
  int fd_ = -1;
  ibv_xrcd* xrcd_ = nullptr;
  ibv_srq* srq_ = nullptr;
  uint32_t srqn_ = 0;
  ibv_qp* tq_ = nullptr;
  ibv_qp* iq_ = nullptr;
};

TEST_F(VerbsXrc, SendsLandThroughTheTargetInTheSrqAndCompleteOnItsCq) {
  for (int i = 0; i < 40; ++i) {  // more than the SRQ holds: its room comes back as completions are polled
    std::memset(ini_.buf.data(), 'a' + i % 26, 3000);
    ASSERT_EQ(post_srq(srq_, 100 + i, tgt_.sge(4096, 4096)), 0);
    ASSERT_EQ(send_to(iq_, srqn_, i, IBV_WR_SEND, ini_.sge(0, 3000)), 0);
    const ibv_wc s = one(ini_.cq);
    EXPECT_EQ(s.status, IBV_WC_SUCCESS);
    EXPECT_EQ(s.wr_id, static_cast<uint64_t>(i));
    EXPECT_EQ(s.opcode, IBV_WC_SEND);
    EXPECT_EQ(s.qp_num, iq_->qp_num);
    const ibv_wc r = one(tgt_.cq);
    ASSERT_EQ(r.status, IBV_WC_SUCCESS);
    EXPECT_EQ(r.wr_id, static_cast<uint64_t>(100 + i));
    EXPECT_EQ(r.opcode, IBV_WC_RECV);
    EXPECT_EQ(r.byte_len, 3000u);
    EXPECT_EQ(r.qp_num, tq_->qp_num);  // the target QP it came through, as xsrq_pingpong's find_qp expects
    EXPECT_EQ(r.src_qp, iq_->qp_num);
    EXPECT_EQ(std::memcmp(tgt_.buf.data() + 4096, ini_.buf.data(), 3000), 0);
  }
}

TEST_F(VerbsXrc, RdmaWriteReadAndAtomicsGoThroughTheTarget) {
  std::memset(ini_.buf.data(), 0x5A, 2000);
  ASSERT_EQ(send_to(iq_, srqn_, 1, IBV_WR_RDMA_WRITE, ini_.sge(0, 2000), tgt_.at(0x10000), tgt_.mr->rkey), 0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(tgt_.buf.data() + 0x10000, ini_.buf.data(), 2000), 0);
  std::memset(tgt_.buf.data() + 0x20000, 0x33, 1500);
  ASSERT_EQ(send_to(iq_, srqn_, 2, IBV_WR_RDMA_READ, ini_.sge(0x30000, 1500), tgt_.at(0x20000), tgt_.mr->rkey), 0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(ini_.buf.data() + 0x30000, tgt_.buf.data() + 0x20000, 1500), 0);
  uint64_t counter = 10;
  std::memcpy(tgt_.buf.data() + 0x40000, &counter, 8);
  ASSERT_EQ(send_to(iq_, srqn_, 3, IBV_WR_ATOMIC_FETCH_AND_ADD, ini_.sge(0x50000, 8), tgt_.at(0x40000),
                    tgt_.mr->rkey),
            0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_SUCCESS);
  uint64_t original = 0;
  std::memcpy(&original, ini_.buf.data() + 0x50000, 8);
  std::memcpy(&counter, tgt_.buf.data() + 0x40000, 8);
  EXPECT_EQ(original, 10u);
  EXPECT_EQ(counter, 13u);
}

TEST_F(VerbsXrc, AnUnknownSrqNumberCompletesWithRemoteInvalidRequest) {
  ASSERT_EQ(send_to(iq_, srqn_ + 1000, 7, IBV_WR_SEND, ini_.sge(0, 64)), 0);
  const ibv_wc s = one(ini_.cq);
  EXPECT_EQ(s.status, IBV_WC_REM_INV_REQ_ERR);
  EXPECT_EQ(s.wr_id, 7u);
}

TEST_F(VerbsXrc, TheSrqLimitAndTheTargetsErrorAreAsyncEvents) {
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(post_srq(srq_, i, tgt_.sge(i * 256, 256)), 0);
  ibv_srq_attr sa{};
  sa.srq_limit = 2;
  ASSERT_EQ(ibv_modify_srq(srq_, &sa, IBV_SRQ_LIMIT), 0);
  ASSERT_EQ(send_to(iq_, srqn_, 1, IBV_WR_SEND, ini_.sge(0, 16)), 0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_SUCCESS);
  EXPECT_EQ(one(tgt_.cq).status, IBV_WC_SUCCESS);
  // One left after the second: fewer than the limit of 2, the event once.
  ASSERT_EQ(send_to(iq_, srqn_, 2, IBV_WR_SEND, ini_.sge(0, 16)), 0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_SUCCESS);
  EXPECT_EQ(one(tgt_.cq).status, IBV_WC_SUCCESS);
  ibv_async_event ev;
  ASSERT_EQ(ibv_get_async_event(tgt_.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
  EXPECT_EQ(ev.element.srq, srq_);
  ibv_ack_async_event(&ev);
  // A request naming no SRQ of the domain: the target QP's owner hears
  // of its error.
  ASSERT_EQ(send_to(iq_, 0xABCDE, 3, IBV_WR_SEND, ini_.sge(0, 16)), 0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_REM_INV_REQ_ERR);
  ASSERT_EQ(ibv_get_async_event(tgt_.ctx, &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_REQ_ERR);
  EXPECT_EQ(ev.element.qp, tq_);
  ibv_ack_async_event(&ev);
  ibv_qp_attr qa{};
  ibv_qp_init_attr qi{};
  ASSERT_EQ(ibv_query_qp(tq_, &qa, IBV_QP_STATE, &qi), 0);
  EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
  EXPECT_EQ(qi.qp_type, IBV_QPT_XRC_RECV);
}

TEST_F(VerbsXrc, ADomainOpenedOnTheSameFileIsShared) {
  // A second context on the target's device (as another process of the
  // host would) opens the same file: its SRQ is in the same domain, so the
  // first context's target QP delivers into it.
  Ctx other(1);
  ASSERT_TRUE(other.ok());
  const int fd2 = ::open(path_.c_str(), O_RDONLY);
  ASSERT_GE(fd2, 0);
  ibv_xrcd* shared = open_xrcd(other.ctx, fd2, 0);  // exists: no O_CREAT needed
  ASSERT_NE(shared, nullptr) << std::strerror(errno);
  ibv_srq* srq2 = create_xrc_srq(other, shared);
  ASSERT_NE(srq2, nullptr);
  uint32_t n2 = 0;
  ASSERT_EQ(ibv_get_srq_num(srq2, &n2), 0);
  EXPECT_NE(n2, srqn_);
  std::memset(ini_.buf.data(), 0x42, 100);
  ASSERT_EQ(post_srq(srq2, 55, other.sge(0, 256)), 0);
  ASSERT_EQ(send_to(iq_, n2, 1, IBV_WR_SEND, ini_.sge(0, 100)), 0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_SUCCESS);
  const ibv_wc r = one(other.cq);
  EXPECT_EQ(r.status, IBV_WC_SUCCESS);
  EXPECT_EQ(r.wr_id, 55u);
  EXPECT_EQ(r.qp_num, tq_->qp_num);
  EXPECT_EQ(std::memcmp(other.buf.data(), ini_.buf.data(), 100), 0);
  EXPECT_EQ(ibv_close_xrcd(shared), EBUSY);  // its SRQ remains
  EXPECT_EQ(ibv_destroy_srq(srq2), 0);
  EXPECT_EQ(ibv_close_xrcd(shared), 0);  // the first context still holds the domain
  EXPECT_EQ(open_xrcd(other.ctx, fd2, O_CREAT | O_EXCL), nullptr);  // O_EXCL: it exists
  EXPECT_EQ(errno, EINVAL);
  ::close(fd2);
}

TEST_F(VerbsXrc, ADomainGoesWithItsLastOpener) {
  char name[] = "/tmp/ibfab-xrc-last-XXXXXX";
  const int fd = ::mkstemp(name);
  ASSERT_GE(fd, 0);
  Ctx one(1), two(1);
  ASSERT_TRUE(one.ok());
  ASSERT_TRUE(two.ok());
  ibv_xrcd* a = open_xrcd(one.ctx, fd, O_CREAT);
  ASSERT_NE(a, nullptr);
  ibv_xrcd* b = open_xrcd(two.ctx, fd, 0);  // the same domain
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(ibv_close_xrcd(a), 0);
  ibv_xrcd* c = open_xrcd(one.ctx, fd, 0);  // still there: `two` holds it
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(ibv_close_xrcd(c), 0);
  EXPECT_EQ(ibv_close_xrcd(b), 0);
  EXPECT_EQ(open_xrcd(one.ctx, fd, 0), nullptr);  // gone with its last opener
  EXPECT_EQ(errno, EINVAL);
  ::close(fd);
  ::unlink(name);
}

TEST_F(VerbsXrc, AnSrqOfAnotherDomainIsAnInvalidRequest) {
  ibv_xrcd* own = open_xrcd(tgt_.ctx, -1, 0);  // no file: a domain of its own
  ASSERT_NE(own, nullptr) << std::strerror(errno);
  ibv_srq* foreign = create_xrc_srq(tgt_, own);
  ASSERT_NE(foreign, nullptr);
  uint32_t n = 0;
  ASSERT_EQ(ibv_get_srq_num(foreign, &n), 0);
  ASSERT_EQ(post_srq(foreign, 1, tgt_.sge(0, 256)), 0);
  ASSERT_EQ(send_to(iq_, n, 9, IBV_WR_SEND, ini_.sge(0, 64)), 0);
  EXPECT_EQ(one(ini_.cq).status, IBV_WC_REM_INV_REQ_ERR);
  EXPECT_TRUE(poll_for(tgt_.cq, 1, 100).empty());  // nothing landed in it
  EXPECT_EQ(ibv_destroy_srq(foreign), 0);
  EXPECT_EQ(ibv_close_xrcd(own), 0);
}

TEST_F(VerbsXrc, BadCallsFailAtTheCall) {
  ibv_xrcd_init_attr xa{};
  xa.comp_mask = IBV_XRCD_INIT_ATTR_FD;  // no OFLAGS
  xa.fd = fd_;
  EXPECT_EQ(ibv_open_xrcd(tgt_.ctx, &xa), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(open_xrcd(tgt_.ctx, 9999, O_CREAT), nullptr);  // not an open file
  EXPECT_EQ(errno, EBADF);
  char fresh[] = "/tmp/ibfab-xrc-new-XXXXXX";
  const int nfd = ::mkstemp(fresh);
  ASSERT_GE(nfd, 0);
  EXPECT_EQ(open_xrcd(tgt_.ctx, nfd, 0), nullptr);  // no domain on this file yet, and no O_CREAT
  EXPECT_EQ(errno, EINVAL);
  ::close(nfd);
  ::unlink(fresh);
  EXPECT_EQ(ibv_close_xrcd(xrcd_), EBUSY);  // its SRQ and target QP remain

  ibv_qp_init_attr_ex qa{};
  qa.qp_type = IBV_QPT_XRC_RECV;  // no domain
  EXPECT_EQ(ibv_create_qp_ex(tgt_.ctx, &qa), nullptr);
  EXPECT_EQ(errno, EINVAL);
  qa = {};
  qa.qp_type = IBV_QPT_XRC_SEND;  // no PD
  qa.send_cq = ini_.cq;
  EXPECT_EQ(ibv_create_qp_ex(ini_.ctx, &qa), nullptr);
  EXPECT_EQ(errno, EINVAL);

  ibv_srq_init_attr_ex sa{};
  sa.attr.max_wr = 4;
  sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD;  // no CQ
  sa.srq_type = IBV_SRQT_XRC;
  sa.pd = tgt_.pd;
  sa.xrcd = xrcd_;
  EXPECT_EQ(ibv_create_srq_ex(tgt_.ctx, &sa), nullptr);
  EXPECT_EQ(errno, EINVAL);

  ibv_sge s = ini_.sge(0, 8);
  ibv_recv_wr rw{};
  rw.sg_list = &s;
  rw.num_sge = 1;
  ibv_recv_wr* bad_r = nullptr;
  EXPECT_EQ(ibv_post_recv(iq_, &rw, &bad_r), EINVAL);  // an initiator has no receive queue
  EXPECT_EQ(ibv_post_recv(tq_, &rw, &bad_r), EINVAL);  // a target neither
  EXPECT_EQ(send_to(tq_, srqn_, 1, IBV_WR_SEND, s), EINVAL);  // nor a send queue

  ibv_qp* t2 = create_target(tgt_.ctx, xrcd_);
  ASSERT_NE(t2, nullptr);
  ASSERT_EQ(to_init(t2, 0), 0);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.ah_attr.dlid = ini_.lid;
  a.ah_attr.port_num = 1;
  EXPECT_EQ(ibv_modify_qp(t2, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
            EINVAL);  // a target's RTR needs MAX_DEST_RD_ATOMIC and MIN_RNR_TIMER
  EXPECT_EQ(ibv_destroy_qp(t2), 0);

  ibv_qp_open_attr oa{};
  oa.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE;
  oa.qp_num = tq_->qp_num;
  oa.xrcd = xrcd_;
  oa.qp_type = IBV_QPT_XRC_RECV;
  EXPECT_EQ(ibv_open_qp(tgt_.ctx, &oa), nullptr);  // not offered
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST_F(VerbsXrc, TheDeviceSaysItHasXrc) {
  ibv_device_attr attr{};
  ASSERT_EQ(ibv_query_device(ini_.ctx, &attr), 0);
  EXPECT_TRUE(static_cast<uint32_t>(attr.device_cap_flags) & IBV_DEVICE_XRC);
}

}  // namespace
}  // namespace ibfab::testing
