// XRC (IBTA Vol 1 Annex A14) on the HCA model: an initiator QP on
// one host sends to a target QP of an XRC domain on another; each request
// names the domain's XRC SRQ that takes it, whose CQ gets the completion
// and whose PD checks the memory reached. A request naming no SRQ of the
// target's domain is refused as a ConnectX refuses it (NAK invalid
// request: REM_INV_REQ_ERR at the initiator, the target in error).
#include <gtest/gtest.h>

#include "tests/fabric/model/rc_fixture.h"

namespace ibfab::fabric::testing {
namespace {

class XrcTest : public RcFixture {
 public:
  // A: initiator on H1; B: target on H`peer` in domain `xrcd`, with two
  // XRC SRQs of that domain (srq1, srq2), each completing on its own CQ.
  void connect_xrc(int peer = 2) {
    make_host(a, 1, 0x10000000);
    make_host(b, peer, 0x20000000);
    QpOptions ini;
    ini.transport = Transport::kXrcSend;
    ini.caps = QpCaps{64, 0, 4, 0, 256};
    create_qp(a, ini);
    xrcd = b.hca->alloc_xrcd();
    ASSERT_NE(xrcd, 0u);
    srq1 = b.hca->create_xrc_srq(xrcd, b.pd, 16, 2, &srq_events, &cq1);
    srq2 = b.hca->create_xrc_srq(xrcd, b.pd, 16, 2, &srq_events, &cq2);
    ASSERT_NE(srq1, 0u);
    ASSERT_NE(srq2, 0u);
    b.qpn = b.hca->create_xrc_target_qp(xrcd, &b.rec);
    ASSERT_NE(b.qpn, 0u);
    bring_up(a, b, ini);
    bring_up(b, a, QpOptions{});
  }

  int post_srq(uint32_t srqn, uint64_t wr_id, Sge s) {
    RecvWr wr;
    wr.wr_id = wr_id;
    wr.num_sge = 1;
    wr.sge = &s;
    return b.hca->post_srq_recv(srqn, wr);
  }

  int send_to(uint32_t srqn, uint64_t wr_id, uint8_t opcode, Sge s, uint64_t remote_addr = 0, uint32_t rkey = 0) {
    SendWr wr;
    wr.wr_id = wr_id;
    wr.opcode = opcode;
    wr.flags = send_flag::kSignaled;
    wr.remote_srqn = srqn;
    wr.remote_addr = remote_addr;
    wr.rkey = rkey;
    wr.compare_add = 5;
    return post(a, wr, {s});
  }

  uint32_t xrcd = 0, srq1 = 0, srq2 = 0;
  Recorder cq1, cq2, srq_events;
};

TEST_F(XrcTest, SendsLandInTheSrqTheyNameAndCompleteOnItsCq) {
  connect_xrc(8);
  fill(a, 0, 3000, 3);
  fill(a, 4096, 100, 9);
  ASSERT_EQ(post_srq(srq1, 11, sge(b, 0, 4096)), 0);
  ASSERT_EQ(post_srq(srq2, 22, sge(b, 8192, 4096)), 0);
  ASSERT_EQ(send_to(srq2, 1, wr_opcode::kSend, sge(a, 0, 3000)), 0);
  ASSERT_EQ(send_to(srq1, 2, wr_opcode::kSend, sge(a, 4096, 100)), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 2u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[1].status, wc_status::kSuccess);
  ASSERT_EQ(cq2.recvs.size(), 1u);
  EXPECT_EQ(cq2.recvs[0].wr_id, 22u);
  EXPECT_EQ(cq2.recvs[0].status, wc_status::kSuccess);
  EXPECT_EQ(cq2.recvs[0].byte_len, 3000u);
  EXPECT_EQ(cq2.recvs[0].qp_num, b.qpn);  // the target QP that took it
  EXPECT_EQ(cq2.recvs[0].src_qp, a.qpn);
  ASSERT_EQ(cq1.recvs.size(), 1u);
  EXPECT_EQ(cq1.recvs[0].wr_id, 11u);
  EXPECT_EQ(cq1.recvs[0].byte_len, 100u);
  EXPECT_EQ(b.read(8192, 3000), a.read(0, 3000));
  EXPECT_EQ(b.read(0, 100), a.read(4096, 100));
  EXPECT_TRUE(b.rec.recvs.empty());  // not the target QP's owner
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kRts);
}

TEST_F(XrcTest, RdmaAndAtomicsReachTheSrqsPd) {
  connect_xrc(2);
  fill(a, 0, 2000, 5);
  fill(b, 0x30000, 1500, 77);
  uint64_t counter = 40;
  std::memcpy(b.at(0x40000), &counter, 8);
  ASSERT_EQ(send_to(srq1, 1, wr_opcode::kRdmaWrite, sge(a, 0, 2000), b.base() + 0x10000, b.key), 0);
  ASSERT_EQ(send_to(srq1, 2, wr_opcode::kRdmaRead, sge(a, 0x20000, 1500), b.base() + 0x30000, b.key), 0);
  ASSERT_EQ(send_to(srq2, 3, wr_opcode::kAtomicFetchAndAdd, sge(a, 0x50000, 8), b.base() + 0x40000, b.key), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 3u);
  for (const WorkCompletion& wc : a.rec.sends) EXPECT_EQ(wc.status, wc_status::kSuccess);
  EXPECT_EQ(b.read(0x10000, 2000), a.read(0, 2000));
  EXPECT_EQ(a.read(0x20000, 1500), b.read(0x30000, 1500));
  uint64_t original = 0, now = 0;
  std::memcpy(&original, a.at(0x50000), 8);
  std::memcpy(&now, b.at(0x40000), 8);
  EXPECT_EQ(original, 40u);
  EXPECT_EQ(now, 45u);
}

TEST_F(XrcTest, AnSrqOfAnotherPdCannotBeReachedThroughIt) {
  connect_xrc(2);
  // srq3 is in a PD other than the one b.key's region belongs to: RDMA
  // through it faults (REM_ACCESS_ERR), as the SRQ's PD is what is checked.
  const uint32_t other_pd = b.hca->alloc_pd();
  const uint32_t srq3 = b.hca->create_xrc_srq(xrcd, other_pd, 4, 1, &srq_events, &cq1);
  ASSERT_NE(srq3, 0u);
  ASSERT_EQ(send_to(srq3, 1, wr_opcode::kRdmaWrite, sge(a, 0, 64), b.base(), b.key), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kRemAccessErr);
}

TEST_F(XrcTest, AnUnknownSrqNumberIsAnInvalidRequest) {
  connect_xrc(2);
  ASSERT_EQ(send_to(0x777, 1, wr_opcode::kSend, sge(a, 0, 64)), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kRemInvReqErr);
  EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kError);
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kError);
  ASSERT_FALSE(b.rec.events.empty());
  EXPECT_EQ(b.rec.events[0], qp_event::kQpReqErr);
}

TEST_F(XrcTest, AnSrqOfAnotherDomainIsAnInvalidRequest) {
  connect_xrc(2);
  const uint32_t other = b.hca->alloc_xrcd();
  Recorder other_cq;
  const uint32_t foreign = b.hca->create_xrc_srq(other, b.pd, 4, 1, &srq_events, &other_cq);
  ASSERT_NE(foreign, 0u);
  ASSERT_EQ(post_srq(foreign, 5, sge(b, 0, 64)), 0);
  ASSERT_EQ(send_to(foreign, 1, wr_opcode::kSend, sge(a, 0, 64)), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kRemInvReqErr);
  EXPECT_TRUE(other_cq.recvs.empty());
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kError);
}

TEST_F(XrcTest, NoReceivePostedIsRnrUntilOneIs) {
  connect_xrc(2);
  ASSERT_EQ(send_to(srq2, 1, wr_opcode::kSend, sge(a, 0, 64)), 0);
  sim.run_until(sim.now() + sim::Time::us(200));
  EXPECT_TRUE(a.rec.sends.empty());
  ASSERT_EQ(post_srq(srq2, 9, sge(b, 0, 64)), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  ASSERT_EQ(cq2.recvs.size(), 1u);
  EXPECT_EQ(cq2.recvs[0].wr_id, 9u);
}

TEST_F(XrcTest, BadInputIsRefused) {
  make_host(a, 1, 0x10000000);
  Hca& hca = *a.hca;
  Recorder r;
  EXPECT_EQ(hca.create_xrc_target_qp(99, &r), 0u);                     // no such domain
  EXPECT_EQ(hca.create_xrc_srq(99, a.pd, 4, 1, &r, &r), 0u);
  const uint32_t d = hca.alloc_xrcd();
  EXPECT_EQ(hca.create_xrc_srq(d, 999, 4, 1, &r, &r), 0u);             // no such PD
  EXPECT_EQ(hca.create_connected_qp(Transport::kXrcRecv, a.pd, QpCaps{}, 0, &r), 0u);
  const uint32_t srq = hca.create_xrc_srq(d, a.pd, 4, 1, &r, &r);
  ASSERT_NE(srq, 0u);
  EXPECT_EQ(hca.create_connected_qp(Transport::kRc, a.pd, QpCaps{}, srq, &r), 0u);  // not for RC
  EXPECT_EQ(hca.create_connected_qp(Transport::kXrcSend, a.pd, QpCaps{}, srq, &r), 0u);
  const uint32_t tgt = hca.create_xrc_target_qp(d, &r);
  ASSERT_NE(tgt, 0u);
  EXPECT_EQ(hca.dealloc_xrcd(d), EBUSY);
  EXPECT_EQ(hca.dealloc_pd(a.pd), EBUSY);  // the SRQ's
  const uint32_t ini = hca.create_connected_qp(Transport::kXrcSend, a.pd, QpCaps{4, 0, 1, 0, 0}, 0, &r);
  ASSERT_NE(ini, 0u);
  Sge s{a.base(), 8, a.key};
  RecvWr rw;
  rw.num_sge = 1;
  rw.sge = &s;
  EXPECT_EQ(hca.post_recv(ini, rw), EINVAL);  // an initiator has no receive queue
  EXPECT_EQ(hca.post_recv(tgt, rw), EINVAL);  // nor a target
  QpAttr attr;
  attr.state = QpState::kInit;
  attr.port = 1;
  ASSERT_EQ(hca.modify_qp(tgt, attr, qp_mask::kState | qp_mask::kPort), 0);
  attr.state = QpState::kRtr;
  ASSERT_EQ(hca.modify_qp(tgt, attr, qp_mask::kState), 0);
  attr.state = QpState::kRts;
  ASSERT_EQ(hca.modify_qp(tgt, attr, qp_mask::kState), 0);
  SendWr sw;
  sw.num_sge = 1;
  sw.sge = &s;
  EXPECT_EQ(hca.post_send(tgt, sw), EINVAL);  // a target has no send queue
  hca.destroy_qp(tgt);
  EXPECT_EQ(hca.dealloc_xrcd(d), EBUSY);  // the SRQ still
  EXPECT_EQ(hca.destroy_srq(srq), 0);
  EXPECT_EQ(hca.dealloc_xrcd(d), 0);
  EXPECT_EQ(hca.dealloc_xrcd(d), EINVAL);
}

}  // namespace
}  // namespace ibfab::fabric::testing
