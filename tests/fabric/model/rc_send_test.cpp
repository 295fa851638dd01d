// RC SEND between two HCAs: segmentation into path-MTU packets, scatter
// and gather over several SGEs, inline data, immediates, ordering, and
// the same across a two-level fat tree.
#include <gtest/gtest.h>

#include "tests/fabric/model/rc_fixture.h"

namespace ibfab::fabric::testing {
namespace {

class RcSendTest : public RcFixture {};

// One SEND of `n` bytes from `send_sges` SGEs into `recv_sges` SGEs
// (MTU 1024), checked byte for byte.
void send_and_check(RcSendTest& t, Host& a, Host& b, uint32_t n, uint32_t send_sges, uint32_t recv_sges) {
  std::vector<Sge> rs, ss;
  // Receive SGEs: n spread over recv_sges pieces (the last one takes the
  // rest and 16 spare bytes), 64 bytes apart.
  uint64_t roff = 0x1000;
  for (uint32_t i = 0; i < recv_sges; ++i) {
    const uint32_t piece = i + 1 == recv_sges ? n - n / recv_sges * i + 16 : n / recv_sges;
    rs.push_back(t.sge(b, roff, piece));
    roff += piece + 64;
  }
  uint64_t soff = 0x1000;
  for (uint32_t i = 0; i < send_sges; ++i) {
    const uint32_t piece = i + 1 == send_sges ? n - n / send_sges * i : n / send_sges;
    t.fill(a, soff, piece, static_cast<uint8_t>(i * 31 + 5));
    ss.push_back(t.sge(a, soff, piece));
    soff += piece + 128;
  }
  ASSERT_EQ(t.post_recv(b, 77, rs), 0);
  ASSERT_EQ(t.post_send(a, 55, wr_opcode::kSend, ss), 0);
  t.sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  const WorkCompletion& rc = b.rec.recvs[0];
  EXPECT_EQ(rc.status, wc_status::kSuccess);
  EXPECT_EQ(rc.opcode, wc_opcode::kRecv);
  EXPECT_EQ(rc.byte_len, n);
  EXPECT_EQ(rc.wr_id, 77u);
  EXPECT_EQ(rc.src_qp, a.qpn);
  EXPECT_EQ(rc.qp_num, b.qpn);
  EXPECT_EQ(rc.slid, a.hca->port(1).lid);
  EXPECT_EQ(rc.wc_flags, 0);
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[0].opcode, wc_opcode::kSend);
  EXPECT_EQ(a.rec.sends[0].wr_id, 55u);
  // The bytes sent, in order, against the bytes received, in order.
  std::string sent, got;
  for (const Sge& s : ss) sent += a.read(s.addr - a.base(), s.length);
  for (const Sge& s : rs) got += b.read(s.addr - b.base(), s.length);
  ASSERT_GE(got.size(), sent.size());
  EXPECT_EQ(got.substr(0, sent.size()), sent);
  EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kRts);
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kRts);
}

struct Shape {
  uint32_t bytes;
  uint32_t send_sges, recv_sges;
};

class RcSendSizes : public RcSendTest, public ::testing::WithParamInterface<Shape> {};

TEST_P(RcSendSizes, ArrivesWhole) {
  connect();
  send_and_check(*this, a, b, GetParam().bytes, GetParam().send_sges, GetParam().recv_sges);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RcSendSizes,
                         ::testing::Values(Shape{0, 1, 1}, Shape{1, 1, 1}, Shape{1023, 1, 1}, Shape{1024, 1, 1},
                                           Shape{1025, 1, 1}, Shape{3 * 1024 + 7, 1, 1}, Shape{1 << 20, 1, 1},
                                           Shape{3 * 1024 + 7, 4, 1}, Shape{3 * 1024 + 7, 1, 4},
                                           Shape{3 * 1024 + 7, 3, 2}, Shape{1 << 20, 4, 4}),
                         [](const auto& info) {
                           return std::to_string(info.param.bytes) + "B_" + std::to_string(info.param.send_sges) +
                                  "x" + std::to_string(info.param.recv_sges);
                         });

TEST_F(RcSendTest, AcrossTheSpines) {
  connect(8);
  send_and_check(*this, a, b, 3 * 1024 + 7, 2, 2);
}

TEST_F(RcSendTest, InlineDataIsCopiedAtPost) {
  connect();
  ASSERT_EQ(post_recv(b, 1, {sge(b, 0, 256)}), 0);
  std::string text = "inline bytes, copied when posted";
  SendWr wr;
  wr.wr_id = 9;
  wr.opcode = wr_opcode::kSend;
  wr.flags = send_flag::kSignaled | send_flag::kInline;
  wr.inline_data = {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
  ASSERT_EQ(a.hca->post_send(a.qpn, wr), 0);
  text.assign(text.size(), 'x');  // the caller's buffer may change at once
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].byte_len, 32u);
  EXPECT_EQ(b.read(0, 32), "inline bytes, copied when posted");
  // Longer than max_inline_data: refused.
  std::string big(257, 'y');
  wr.inline_data = {reinterpret_cast<const uint8_t*>(big.data()), big.size()};
  EXPECT_EQ(a.hca->post_send(a.qpn, wr), EINVAL);
}

TEST_F(RcSendTest, ImmediateIsDelivered) {
  connect();
  ASSERT_EQ(post_recv(b, 1, {sge(b, 0, 4096)}), 0);
  fill(a, 0, 2000, 3);
  SendWr wr;
  wr.wr_id = 4;
  wr.opcode = wr_opcode::kSendWithImm;
  wr.flags = send_flag::kSignaled;
  wr.imm_data = 0x12345678;
  ASSERT_EQ(post(a, wr, {sge(a, 0, 2000)}), 0);
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].wc_flags, wc_flag::kWithImm);
  EXPECT_EQ(b.rec.recvs[0].imm_data, 0x12345678u);
  EXPECT_EQ(b.rec.recvs[0].byte_len, 2000u);
  EXPECT_EQ(b.read(0, 2000), a.read(0, 2000));
}

TEST_F(RcSendTest, ASolicitedSendAsksForTheEventInItsLastPacket) {
  connect();
  // Three packets (MTU 1024) with IBV_SEND_SOLICITED, then one without;
  // a WRITE with immediate asks too, a plain WRITE completes nothing.
  ASSERT_EQ(post_recv(b, 1, {sge(b, 0, 4096)}), 0);
  ASSERT_EQ(post_recv(b, 2, {sge(b, 0, 4096)}), 0);
  ASSERT_EQ(post_recv(b, 3, {}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 2500)}, send_flag::kSignaled | send_flag::kSolicited), 0);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 10)}), 0);
  SendWr wr;
  wr.opcode = wr_opcode::kRdmaWriteWithImm;
  wr.flags = send_flag::kSolicited;
  wr.remote_addr = b.base() + 0x2000;
  wr.rkey = b.key;
  ASSERT_EQ(post(a, wr, {sge(a, 0, 8)}), 0);
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 3u);
  EXPECT_TRUE(b.rec.recvs[0].solicited);
  EXPECT_FALSE(b.rec.recvs[1].solicited);
  EXPECT_TRUE(b.rec.recvs[2].solicited);
  EXPECT_EQ(b.rec.recvs[2].opcode, wc_opcode::kRecvRdmaWithImm);
}

TEST_F(RcSendTest, ThousandMessagesArriveInOrder) {
  QpOptions o;
  o.caps = QpCaps{1024, 1024, 1, 1, 0};
  connect(8, o, o);
  for (uint32_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(post_recv(b, i, {sge(b, i * 64, 64)}), 0);
    *a.at(i * 64) = static_cast<uint8_t>(i);
    *a.at(i * 64 + 1) = static_cast<uint8_t>(i >> 8);
  }
  // Every tenth signalled: the others complete silently, in order.
  for (uint32_t i = 0; i < 1000; ++i)
    ASSERT_EQ(post_send(a, i, wr_opcode::kSend, {sge(a, i * 64, 2 + i % 60)}, i % 10 == 9 ? send_flag::kSignaled : 0),
              0);
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1000u);
  for (uint32_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(b.rec.recvs[i].wr_id, i);
    ASSERT_EQ(b.rec.recvs[i].byte_len, 2 + i % 60);
    ASSERT_EQ(*b.at(i * 64) | *b.at(i * 64 + 1) << 8, static_cast<int>(i));
  }
  ASSERT_EQ(a.rec.sends.size(), 100u);
  for (uint32_t i = 0; i < 100; ++i) EXPECT_EQ(a.rec.sends[i].wr_id, i * 10 + 9);
}

TEST_F(RcSendTest, SqSigAllSignalsEveryWqe) {
  QpOptions o;
  o.sq_sig_all = true;
  connect(2, o, {});
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(post_recv(b, i, {sge(b, i * 64, 64)}), 0);
    ASSERT_EQ(post_send(a, i, wr_opcode::kSend, {sge(a, 0, 8)}, 0), 0);
  }
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 3u);
  EXPECT_EQ(b.rec.recvs.size(), 3u);
}

TEST_F(RcSendTest, GlobalRouteCarriesAGrh) {
  connect();
  // Both QPs' paths with a GRH: the receive says so.
  for (auto [x, peer] : {std::pair<Host*, Host*>{&a, &b}, {&b, &a}}) {
    QpAttr attr;
    attr.path.dlid = peer->hca->port(1).lid;
    attr.path.global = true;
    attr.path.hop_limit = 64;
    const uint64_t prefix = peer->hca->port(1).gid_prefix, guid = peer->hca->port(1).guid();
    for (int i = 0; i < 8; ++i) {
      attr.path.dgid[i] = static_cast<uint8_t>(prefix >> (56 - 8 * i));
      attr.path.dgid[8 + i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
    }
    ASSERT_EQ(x->hca->modify_qp(x->qpn, attr, qp_mask::kAv), 0);
  }
  ASSERT_EQ(post_recv(b, 1, {sge(b, 0, 8192)}), 0);
  fill(a, 0, 5000, 1);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 5000)}), 0);
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].wc_flags, wc_flag::kGrh);
  EXPECT_EQ(b.read(0, 5000), a.read(0, 5000));
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
}

TEST_F(RcSendTest, SqdDrainsAfterTheCurrentMessage) {
  connect();
  for (uint32_t i = 0; i < 3; ++i) ASSERT_EQ(post_recv(b, i, {sge(b, i * 8192, 8192)}), 0);
  ASSERT_EQ(post_send(a, 0, wr_opcode::kSend, {sge(a, 0, 5000)}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 5000)}), 0);
  QpAttr attr;
  attr.state = QpState::kSqd;
  ASSERT_EQ(a.hca->modify_qp(a.qpn, attr, qp_mask::kState), 0);
  sim.run();
  // The message under way finished; the next waits; the owner was told.
  EXPECT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(a.rec.sends.size(), 1u);
  ASSERT_EQ(a.rec.events.size(), 1u);
  EXPECT_EQ(a.rec.events[0], qp_event::kSqDrained);
  attr.state = QpState::kRts;
  ASSERT_EQ(a.hca->modify_qp(a.qpn, attr, qp_mask::kState), 0);
  sim.run();
  EXPECT_EQ(b.rec.recvs.size(), 2u);
  EXPECT_EQ(a.rec.sends.size(), 2u);
}

TEST_F(RcSendTest, DestroyWithWorkOutstandingIsQuiet) {
  connect();
  ASSERT_EQ(post_send(a, 2, wr_opcode::kRdmaWrite, {sge(a, 0, 1 << 20)}, send_flag::kSignaled, b.base(), b.key), 0);
  sim.run_until(sim::Time::us(5));  // packets on the wire, timers armed
  ASSERT_TRUE(a.rec.sends.empty());
  a.hca->destroy_qp(a.qpn);
  sim.run();  // its timers were cancelled: nothing that runs now touches it (ASan checks)
  EXPECT_TRUE(a.rec.sends.empty());
  EXPECT_EQ(a.hca->qp_state(a.qpn), QpState::kReset) << "no such QP";
  EXPECT_EQ(a.hca->qp_count(), 0u);
}

TEST_F(RcSendTest, LoopbackBetweenTwoQpsOfOneHca) {
  make_host(a, 1, 0x10000000);
  b.hca = a.hca;
  b.pd = a.pd;
  b.key = a.key;
  b.rec.sim = &sim;
  create_qp(a, {});
  create_qp(b, {});
  bring_up(a, b, {});
  bring_up(b, a, {});
  fill(a, 0, 5000, 3);
  ASSERT_EQ(post_recv(b, 1, {sge(a, 0x100000, 8192)}), 0);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 5000)}), 0);
  ASSERT_EQ(post_send(b, 3, wr_opcode::kRdmaRead, {sge(a, 0x200000, 5000)}, send_flag::kSignaled, a.base(), a.key),
            0);
  const uint64_t on_wire = a.hca->port(1).counters.xmit_pkts;
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].byte_len, 5000u);
  EXPECT_EQ(a.read(0x100000, 5000), a.read(0, 5000));
  EXPECT_EQ(a.read(0x200000, 5000), a.read(0, 5000));
  ASSERT_EQ(a.rec.sends.size(), 1u);
  ASSERT_EQ(b.rec.sends.size(), 1u);
  EXPECT_EQ(b.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.hca->port(1).counters.xmit_pkts, on_wire) << "nothing crossed the wire";
}

TEST_F(RcSendTest, ResetForgetsTheQueuesAndTheQpCanBeBroughtUpAgain) {
  connect();
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 10)}), 0);  // no receive: RNR until reset
  sim.run_until(sim::Time::us(100));
  QpAttr attr;
  attr.state = QpState::kReset;
  ASSERT_EQ(a.hca->modify_qp(a.qpn, attr, qp_mask::kState), 0);
  ASSERT_EQ(b.hca->modify_qp(b.qpn, attr, qp_mask::kState), 0);
  sim.run();
  EXPECT_TRUE(a.rec.sends.empty()) << "a reset QP's WQEs are gone, without completions";
  bring_up(a, b, {});
  bring_up(b, a, {});
  ASSERT_EQ(post_recv(b, 7, {sge(b, 0, 64)}), 0);
  fill(a, 0, 10, 9);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kSend, {sge(a, 0, 10)}), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].wr_id, 2u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.read(0, 10), a.read(0, 10));
}

TEST_F(RcSendTest, SteadyTrafficAllocatesNoPackets) {
  QpOptions o;
  o.caps = QpCaps{256, 256, 1, 1, 0};
  connect(8, o, o);
  auto burst = [&](uint64_t first) {
    for (uint32_t i = 0; i < 200; ++i) {
      ASSERT_EQ(post_recv(b, first + i, {sge(b, i * 8192, 8192)}), 0);
      ASSERT_EQ(post_send(a, first + i, wr_opcode::kSend, {sge(a, i * 8192, 1 + i * 37)}, 0), 0);
    }
    sim.run();
  };
  burst(0);  // warms the packet pool up
  const std::size_t buffers = fabric.packets().buffers_allocated();
  burst(1000);
  burst(2000);
  EXPECT_EQ(b.rec.recvs.size(), 600u);
  EXPECT_EQ(fabric.packets().buffers_allocated(), buffers);
}

}  // namespace
}  // namespace ibfab::fabric::testing
