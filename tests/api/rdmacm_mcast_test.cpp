// rdma_join_multicast_ex(3) end to end, sentence by sentence, through the
// built library on an in-process fabric: ids bound to different hosts join
// 239.1.1.1, the library attaches their QPs when the join event is read,
// and a UD send from one host reaches the others; a send-only join is not
// attached; leaving waits until the join's events are acked.
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include <cstring>
#include <utility>

#include "tests/api/rdmacm_fabric.h"

namespace {

using namespace ibfab::testing;

constexpr uint32_t kMcastQpn = 0xFFFFFF;

class RdmacmMcast : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ibfab::testing::use_embedded_cm_fabric(); }

  // Joins 239.1.1.1 with `flags` (the endpoint bound) and reads the
  // MULTICAST_JOIN event, which the caller acks; nullptr on failure.
  static rdma_cm_event* join(Endpoint& e, uint32_t flags) {
    EXPECT_EQ(e.bind_status, 0);
    sockaddr_in group = ipv4("239.1.1.1");
    rdma_cm_join_mc_attr_ex attr{RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS, flags, sa(group)};
    if (e.bind_status != 0 || rdma_join_multicast_ex(e.id, &attr, &e) != 0) return nullptr;
    rdma_cm_event* event = next_event(e.ch);
    EXPECT_NE(event, nullptr);
    if (event) EXPECT_EQ(event->event, RDMA_CM_EVENT_MULTICAST_JOIN) << rdma_event_str(event->event);
    return event;
  }
  static int leave(Endpoint& e) {
    sockaddr_in group = ipv4("239.1.1.1");
    return rdma_leave_multicast(e.id, sa(group));
  }
};

// "The join context is returned to the user through the private_data field
// in the rdma_cm_event"; the event carries the group's address handle, QPN
// 0xFFFFFF and the rdma_cm Q_Key.
TEST_F(RdmacmMcast, JoinEventCarriesTheGroupAndTheContext) {
  Endpoint a("10.1.0.1");
  rdma_cm_event* ev = join(a, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->status, 0);
  EXPECT_EQ(ev->id, a.id);
  EXPECT_EQ(ev->param.ud.private_data, &a);
  EXPECT_EQ(ev->param.ud.private_data_len, 0);
  EXPECT_EQ(ev->param.ud.qp_num, kMcastQpn);
  EXPECT_EQ(ev->param.ud.qkey, static_cast<uint32_t>(RDMA_UDP_QKEY));
  const ibv_ah_attr& ah = ev->param.ud.ah_attr;
  EXPECT_GE(ah.dlid, 0xC000);
  EXPECT_EQ(ah.is_global, 1);
  // 239.1.1.1 in port space UDP: ff12:4001:ffff::f01:101.
  const uint8_t mgid[16] = {0xff, 0x12, 0x40, 0x01, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0x0f, 0x01, 0x01, 0x01};
  EXPECT_EQ(std::memcmp(ah.grh.dgid.raw, mgid, 16), 0);
  rdma_ack_cm_event(ev);
  EXPECT_EQ(leave(a), 0);
}

// "if a QP is associated with the rdma_cm_id, it is automatically attached
// to the multicast group when the multicast event is retrieved".
TEST_F(RdmacmMcast, JoinedQpsReceiveWhatAnotherHostSends) {
  Endpoint a("10.1.0.1"), b("10.1.0.2");
  ASSERT_EQ(a.bind_status, 0);
  ASSERT_EQ(b.bind_status, 0);
  ASSERT_EQ(a.make_qp(), 0);
  ASSERT_EQ(b.make_qp(), 0);
  ASSERT_NE(b.id->recv_cq, nullptr);
  EXPECT_EQ(b.id->recv_cq->cq_context, b.id);  // ucma_create_cqs: the id is the CQ's context
  for (int i = 0; i < 4; ++i) ASSERT_EQ(b.post_recv(b.id, i, i * 256, 256), 0);
  rdma_cm_event* ea = join(a, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  rdma_cm_event* eb = join(b, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  ASSERT_TRUE(ea && eb);
  ibv_ah* ah = ibv_create_ah(a.id->pd, &ea->param.ud.ah_attr);
  ASSERT_NE(ah, nullptr);
  const uint32_t qkey = ea->param.ud.qkey;
  rdma_ack_cm_event(ea);
  rdma_ack_cm_event(eb);
  std::memcpy(a.buf.data() + 4096, "rdma_cm multicast", 18);
  ASSERT_EQ(a.send(a.id, ah, kMcastQpn, qkey, 4096, 18), 0);
  EXPECT_EQ(poll_for(a.id->send_cq, 1).size(), 1u);
  const std::vector<ibv_wc> got = poll_for(b.id->recv_cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(got[0].src_qp, a.id->qp->qp_num);
  EXPECT_TRUE(got[0].wc_flags & IBV_WC_GRH);
  EXPECT_EQ(got[0].byte_len, 40u + 18u);
  EXPECT_STREQ(reinterpret_cast<const char*>(b.buf.data() + got[0].wr_id * 256 + 40), "rdma_cm multicast");
  ibv_destroy_ah(ah);
  EXPECT_EQ(leave(a), 0);
  EXPECT_EQ(leave(b), 0);
}

// "When "Send Only Full Member" is used the QP will not be attached to the
// MCG": a full member on a third host receives, the send-only one does not.
TEST_F(RdmacmMcast, SendOnlyJoinIsNotAttached) {
  Endpoint a("10.1.0.1"), b("10.1.0.2"), c("10.1.0.3");
  for (Endpoint* e : {&a, &b, &c}) {
    ASSERT_EQ(e->bind_status, 0);
    ASSERT_EQ(e->make_qp(), 0);
    ASSERT_EQ(e->post_recv(e->id, 1, 0, 256), 0);
  }
  rdma_cm_event* ea = join(a, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  rdma_cm_event* eb = join(b, RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER);
  rdma_cm_event* ec = join(c, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  ASSERT_TRUE(ea && eb && ec);
  EXPECT_EQ(eb->status, 0);
  EXPECT_EQ(eb->param.ud.ah_attr.dlid, ea->param.ud.ah_attr.dlid);  // one group
  // The group's address, kept: rdma_ack_cm_event frees the events.
  ibv_ah_attr group = ea->param.ud.ah_attr;
  ibv_ah* ah = ibv_create_ah(a.id->pd, &group);
  ASSERT_NE(ah, nullptr);
  for (rdma_cm_event* e : {ea, eb, ec}) rdma_ack_cm_event(e);
  ASSERT_EQ(a.send(a.id, ah, kMcastQpn, RDMA_UDP_QKEY, 4096, 32), 0);
  EXPECT_EQ(poll_for(c.id->recv_cq, 1).size(), 1u);
  EXPECT_EQ(poll_for(b.id->recv_cq, 1, 300).size(), 0u);
  // The send-only member can send to the group itself.
  ibv_ah* ah_b = ibv_create_ah(b.id->pd, &group);
  ASSERT_NE(ah_b, nullptr);
  ASSERT_EQ(c.post_recv(c.id, 2, 256, 256), 0);
  ASSERT_EQ(b.send(b.id, ah_b, kMcastQpn, RDMA_UDP_QKEY, 4096, 32), 0);
  const std::vector<ibv_wc> got = poll_for(c.id->recv_cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].src_qp, b.id->qp->qp_num);
  ibv_destroy_ah(ah);
  ibv_destroy_ah(ah_b);
  for (Endpoint* e : {&a, &b, &c}) EXPECT_EQ(leave(*e), 0);
}

// "Otherwise, the user is responsible for calling ibv_attach_mcast to bind
// the QP to the multicast group": an id that had no QP when its join event
// was read is not attached; its QP receives once the user attaches it with
// the event's MGID and MLID.
TEST_F(RdmacmMcast, QpMadeAfterTheJoinIsAttachedByTheUser) {
  Endpoint a("10.1.0.1"), b("10.1.0.2");
  ASSERT_EQ(a.make_qp(), 0);
  rdma_cm_event* ea = join(a, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  rdma_cm_event* eb = join(b, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  ASSERT_TRUE(ea && eb);
  ibv_gid mgid = eb->param.ud.ah_attr.grh.dgid;
  const uint16_t mlid = eb->param.ud.ah_attr.dlid;
  ibv_ah* ah = ibv_create_ah(a.id->pd, &ea->param.ud.ah_attr);
  ASSERT_NE(ah, nullptr);
  rdma_ack_cm_event(ea);
  rdma_ack_cm_event(eb);
  ASSERT_EQ(b.make_qp(), 0);
  ASSERT_EQ(b.post_recv(b.id, 1, 0, 256), 0);
  ASSERT_EQ(a.send(a.id, ah, kMcastQpn, RDMA_UDP_QKEY, 4096, 16), 0);
  EXPECT_EQ(poll_for(b.id->recv_cq, 1, 300).size(), 0u);  // not attached
  ASSERT_EQ(ibv_attach_mcast(b.id->qp, &mgid, mlid), 0);
  ASSERT_EQ(a.send(a.id, ah, kMcastQpn, RDMA_UDP_QKEY, 4096, 16), 0);
  const std::vector<ibv_wc> got = poll_for(b.id->recv_cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].src_qp, a.id->qp->qp_num);
  ibv_destroy_ah(ah);
  EXPECT_EQ(leave(a), 0);
  EXPECT_EQ(leave(b), 0);
}

// rdma_create_qp_ex with IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (mckey -l).
TEST_F(RdmacmMcast, QpWithBlockedLoopbackCanJoin) {
  Endpoint a("10.1.0.1");
  ASSERT_EQ(a.bind_status, 0);
  ASSERT_EQ(a.make_qp(IBV_QP_CREATE_BLOCK_SELF_MCAST_LB), 0);
  rdma_cm_event* ev = join(a, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->status, 0);
  rdma_ack_cm_event(ev);
  EXPECT_EQ(leave(a), 0);
}

// rdma_leave_multicast "blocks until all of that group's events are acked".
TEST_F(RdmacmMcast, LeaveWaitsUntilTheJoinEventIsAcked) {
  Endpoint a("10.1.0.1");
  rdma_cm_event* ev = join(a, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  ASSERT_NE(ev, nullptr);
  expect_waits_for([&] { return leave(a); }, [&] { rdma_ack_cm_event(ev); });
  // Left: a second leave finds nothing.
  EXPECT_FAILS_WITH(leave(a), EADDRNOTAVAIL);
}

// rdma_destroy_id waits the same way for the id's events.
TEST_F(RdmacmMcast, DestroyWaitsUntilTheIdsEventsAreAcked) {
  Endpoint a("10.1.0.1");
  rdma_cm_event* ev = join(a, RDMA_MC_JOIN_FLAG_FULLMEMBER);
  ASSERT_NE(ev, nullptr);
  rdma_cm_id* id = std::exchange(a.id, nullptr);
  expect_waits_for([&] { return rdma_destroy_id(id); }, [&] { rdma_ack_cm_event(ev); });
}

}  // namespace
