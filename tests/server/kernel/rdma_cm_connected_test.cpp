// rdma_cm's connected ids (api/server/kernel/rdma_cm_connected.cpp) over
// real CM connections, as librdmacm drives them: a server on H2 listens in
// RDMA_PS_TCP, a client on H1 (or H6, across a spine) connects an RC id;
// each step's event, parameters and private data, the QP attributes
// rdma_init_qp_attr gives at each step, rejection, disconnection and a
// peer that goes away.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

constexpr uint16_t kPort = 7471;
constexpr int32_t kConsumerReject = 28;     // IB_CM_REJ_CONSUMER_DEFINED
constexpr int32_t kInvalidServiceId = 8;    // IB_CM_REJ_INVALID_SERVICE_ID
constexpr uint32_t kReqUserData = 92 - 36;  // a REQ's private data less rdma_cm's header
constexpr uint32_t kRepData = 196;
constexpr uint32_t kRejData = 148;

class RdmaCmConnected : public CmService {
 protected:
  // A listener on `host`'s side of `server` (any address), port `port`.
  static uint32_t listen(CmClient& server, uint16_t port = kPort, uint8_t qp_type = IBV_QPT_RC, uint32_t backlog = 8) {
    const uint32_t id = server.create_id(RDMA_PS_TCP, qp_type);
    EXPECT_EQ(server.bind(id, "0.0.0.0", port), 0);
    EXPECT_EQ(server.simple(MsgType::CmListen, id, backlog), 0);
    return id;
  }
  // A client id with its address and route to `dst`:`port`.
  static uint32_t routed(CmClient& client, const char* dst = "10.1.0.2", uint16_t port = kPort,
                         uint8_t qp_type = IBV_QPT_RC) {
    const uint32_t id = client.create_id(RDMA_PS_TCP, qp_type);
    EXPECT_EQ(client.resolve(id, nullptr, dst, port), 0);
    EXPECT_EQ(client.next()->event, RDMA_CM_EVENT_ADDR_RESOLVED);
    EXPECT_EQ(client.simple(MsgType::CmResolveRoute, id, 2000), 0);
    EXPECT_EQ(client.next()->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
    return id;
  }
  static CmConnect offer(uint32_t id, uint32_t qp_num, const std::string& data) {
    CmConnect c;
    c.id = id;
    c.qp_num = qp_num;
    c.private_data_len = static_cast<uint32_t>(data.size());
    std::memcpy(c.private_data, data.data(), data.size());
    c.param.responder_resources = 4;
    c.param.initiator_depth = 2;
    c.param.retry_count = 6;
    c.param.rnr_retry_count = 5;
    return c;
  }
  static int64_t connect(CmClient& client, uint32_t id, uint32_t qp_num, const std::string& data) {
    const CmConnect c = offer(id, qp_num, data);
    return client.request(MsgType::CmConnect, &c, sizeof c).value;
  }
  static CmIdInfo qp_attr(CmClient& c, uint32_t id, uint32_t state, int64_t* status = nullptr) {
    CmIdRequest r;
    r.id = id;
    r.arg = state;
    const CmReply reply = c.request(MsgType::CmInitQpAttr, &r, sizeof r);
    if (status) *status = reply.value;
    else EXPECT_EQ(reply.value, 0) << "state " << state;
    return reply.info;
  }
  static std::string text(const CmEvent& e, std::size_t n) { return {reinterpret_cast<const char*>(e.private_data), n}; }

  // Connects client id `id` to a listener of `server` up to ESTABLISHED on
  // both sides; the server's new id.
  uint32_t establish(CmClient& server, CmClient& client, uint32_t id) {
    EXPECT_EQ(connect(client, id, 0x111, "hi"), 0);
    const auto req = server.next();
    EXPECT_TRUE(req && req->event == RDMA_CM_EVENT_CONNECT_REQUEST);
    if (!req) return 0;
    CmConnect accept = offer(req->id, 0x222, "ok");
    EXPECT_EQ(server.request(MsgType::CmAccept, &accept, sizeof accept).value, 0);
    const auto rep = client.next();
    EXPECT_TRUE(rep && rep->event == RDMA_CM_EVENT_CONNECT_RESPONSE);
    CmConnect rtu;
    rtu.id = id;
    EXPECT_EQ(client.request(MsgType::CmAccept, &rtu, sizeof rtu).value, 0);
    const auto est = server.next();
    EXPECT_TRUE(est && est->event == RDMA_CM_EVENT_ESTABLISHED);
    return req->id;
  }
};

TEST_F(RdmaCmConnected, TheHandshakeCarriesTheOffersPrivateDataAndQpAttributesBothWays) {
  CmClient server(path(), "H2"), client(path(), "H6");  // across a spine
  const uint32_t listener = listen(server);
  const uint32_t id = routed(client);

  // Before a connection: INIT with no remote access; RTR and RTS have no peer yet.
  CmIdInfo init = qp_attr(client, id, IBV_QPS_INIT);
  EXPECT_EQ(init.qp_attr_mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  EXPECT_EQ(init.qp_access_flags, 0u);
  EXPECT_EQ(init.port, 1);
  int64_t status = 0;
  qp_attr(client, id, IBV_QPS_RTR, &status);
  EXPECT_EQ(status, -EINVAL);

  ASSERT_EQ(connect(client, id, 0xABCDE, "hello"), 0);
  qp_attr(client, id, IBV_QPS_RTS, &status);
  EXPECT_EQ(status, -EINVAL) << "no REP yet";

  const auto req = server.next();
  ASSERT_TRUE(req);
  ASSERT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST);
  EXPECT_EQ(req->listen_id, listener);
  EXPECT_NE(req->id, listener);
  EXPECT_EQ(req->qp_num, 0xABCDEu);
  // The requester's offer seen from here: its initiator depth is what this
  // side must answer reads for.
  EXPECT_EQ(req->param.responder_resources, 2);
  EXPECT_EQ(req->param.initiator_depth, 4);
  EXPECT_EQ(req->param.retry_count, 6);
  EXPECT_EQ(req->param.rnr_retry_count, 5);
  EXPECT_EQ(req->private_data_len, kReqUserData);
  EXPECT_EQ(text(*req, 5), "hello");

  // The passive side's QP may go to RTR and RTS before it answers.
  const CmIdInfo p_rtr = qp_attr(server, req->id, IBV_QPS_RTR);
  EXPECT_EQ(p_rtr.qp_attr_mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  EXPECT_EQ(p_rtr.dest_qp_num, 0xABCDEu);
  EXPECT_EQ(p_rtr.max_dest_rd_atomic, 2);
  EXPECT_NE(p_rtr.ah.dlid, 0);
  EXPECT_NE(p_rtr.path_mtu, 0);
  const CmIdInfo p_init = qp_attr(server, req->id, IBV_QPS_INIT);
  EXPECT_EQ(p_init.qp_access_flags, unsigned{IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC});

  CmConnect accept = offer(req->id, 0x5678, "welcome");
  accept.param.responder_resources = 3;
  accept.param.initiator_depth = 1;
  accept.param.rnr_retry_count = 7;
  ASSERT_EQ(server.request(MsgType::CmAccept, &accept, sizeof accept).value, 0);
  const CmIdInfo p_rts = qp_attr(server, req->id, IBV_QPS_RTS);
  EXPECT_EQ(p_rts.max_rd_atomic, 1);
  EXPECT_EQ(p_rts.retry_cnt, 6);

  const auto rep = client.next();
  ASSERT_TRUE(rep);
  ASSERT_EQ(rep->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
  EXPECT_EQ(rep->id, id);
  EXPECT_EQ(rep->qp_num, 0x5678u);
  EXPECT_EQ(rep->param.responder_resources, 3);
  EXPECT_EQ(rep->param.initiator_depth, 1);
  EXPECT_EQ(rep->param.rnr_retry_count, 7);
  EXPECT_EQ(rep->private_data_len, kRepData);
  EXPECT_EQ(text(*rep, 7), "welcome");

  const CmIdInfo a_rtr = qp_attr(client, id, IBV_QPS_RTR);
  const CmIdInfo a_rts = qp_attr(client, id, IBV_QPS_RTS);
  EXPECT_EQ(a_rtr.dest_qp_num, 0x5678u);
  EXPECT_EQ(a_rtr.max_dest_rd_atomic, 1) << "the peer reads at most its initiator depth";
  EXPECT_EQ(a_rts.max_rd_atomic, 3) << "the peer answers at most its responder resources";
  EXPECT_EQ(a_rts.retry_cnt, 6);
  EXPECT_EQ(a_rts.rnr_retry, 7);
  EXPECT_EQ(a_rts.qp_attr_mask,
            IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
  EXPECT_NE(a_rts.timeout, 0);
  // Each side receives from the PSN the other sends from, on the path back.
  EXPECT_EQ(a_rts.sq_psn, p_rtr.rq_psn);
  EXPECT_EQ(p_rts.sq_psn, a_rtr.rq_psn);
  EXPECT_EQ(a_rtr.path_mtu, p_rtr.path_mtu);
  CmIdRequest query{id, 0};
  const CmPath route = client.request(MsgType::CmQueryId, &query, sizeof query).info.path;
  EXPECT_EQ(a_rtr.ah.dlid, route.dlid);
  EXPECT_EQ(p_rtr.ah.dlid, route.slid);
  EXPECT_FALSE(server.next(0)) << "nothing before the RTU";

  CmConnect rtu;
  rtu.id = id;
  ASSERT_EQ(client.request(MsgType::CmAccept, &rtu, sizeof rtu).value, 0);
  const auto est = server.next();
  ASSERT_TRUE(est);
  EXPECT_EQ(est->event, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(est->id, req->id);
  EXPECT_FALSE(client.next(0)) << "the active side's ESTABLISHED is librdmacm's own";
  EXPECT_EQ(client.request(MsgType::CmAccept, &rtu, sizeof rtu).value, -EINVAL) << "a second RTU";
}

TEST_F(RdmaCmConnected, ARejectReachesTheRequesterWithItsReasonAndPrivateData) {
  CmClient server(path(), "H2"), client(path(), "H1");
  listen(server);
  const uint32_t id = routed(client);
  ASSERT_EQ(connect(client, id, 0x10, "please"), 0);
  const auto req = server.next();
  ASSERT_TRUE(req);
  CmConnect no = offer(req->id, 0, "go away");
  ASSERT_EQ(server.request(MsgType::CmReject, &no, sizeof no).value, 0);
  const auto rej = client.next();
  ASSERT_TRUE(rej);
  EXPECT_EQ(rej->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(rej->status, kConsumerReject);
  EXPECT_EQ(rej->private_data_len, kRejData);
  EXPECT_EQ(text(*rej, 7), "go away");
  EXPECT_EQ(server.request(MsgType::CmAccept, &no, sizeof no).value, -EINVAL) << "accepting after rejecting";
}

TEST_F(RdmaCmConnected, NoListenerAnRcRequestToAUcListenerAndAFullBacklogAreRejected) {
  CmClient server(path(), "H2"), client(path(), "H1");
  uint32_t qpn = 0x10;  // each connection its own QP, as the stale-connection check wants
  auto connect_and_hear = [&](uint16_t port) {
    const uint32_t id = routed(client, "10.1.0.2", port);
    EXPECT_EQ(connect(client, id, ++qpn, ""), 0);
    return client.next();
  };
  auto none = connect_and_hear(kPort + 1);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(none->status, kInvalidServiceId);

  listen(server, kPort + 2, IBV_QPT_UC);
  auto wrong_type = connect_and_hear(kPort + 2);
  ASSERT_TRUE(wrong_type);
  EXPECT_EQ(wrong_type->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(wrong_type->status, kInvalidServiceId);

  listen(server, kPort + 3, IBV_QPT_RC, 1);
  const uint32_t first = routed(client, "10.1.0.2", kPort + 3);
  ASSERT_EQ(connect(client, first, ++qpn, ""), 0);
  ASSERT_EQ(server.next()->event, RDMA_CM_EVENT_CONNECT_REQUEST);
  auto full = connect_and_hear(kPort + 3);
  ASSERT_TRUE(full);
  EXPECT_EQ(full->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(full->status, kConsumerReject);
  EXPECT_FALSE(server.next(0));
}

// The kernel gives a request's backlog slot back when the event is read;
// librdmacm queries the new id as it hands the event out.
TEST_F(RdmaCmConnected, AReadRequestGivesItsBacklogSlotBack) {
  CmClient server(path(), "H2"), client(path(), "H1");
  listen(server, kPort + 4, IBV_QPT_RC, 1);
  for (uint32_t qpn : {0x31u, 0x32u, 0x33u}) {
    ASSERT_EQ(connect(client, routed(client, "10.1.0.2", kPort + 4), qpn, ""), 0);
    const auto req = server.next();
    ASSERT_TRUE(req);
    ASSERT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST) << "request " << qpn;
    CmIdRequest query{req->id, 0};
    ASSERT_EQ(server.request(MsgType::CmQueryId, &query, sizeof query).value, 0);
  }
  EXPECT_FALSE(client.next(0)) << "none was rejected";
}

TEST_F(RdmaCmConnected, DisconnectingTellsBothSidesAndTimewaitEnds) {
  CmClient server(path(), "H2"), client(path(), "H1");
  listen(server);
  const uint32_t id = routed(client);
  const uint32_t conn = establish(server, client, id);
  ASSERT_NE(conn, 0u);
  ASSERT_EQ(client.simple(MsgType::CmDisconnect, id), 0);
  const auto theirs = server.next();
  ASSERT_TRUE(theirs);
  EXPECT_EQ(theirs->event, RDMA_CM_EVENT_DISCONNECTED);
  EXPECT_EQ(theirs->status, 0);
  // The passive side answers the DREQ (rdma_disconnect sends the DREP).
  ASSERT_EQ(server.simple(MsgType::CmDisconnect, conn), 0);
  const auto ours = client.next();
  ASSERT_TRUE(ours);
  EXPECT_EQ(ours->event, RDMA_CM_EVENT_DISCONNECTED);
  EXPECT_EQ(ours->status, 0);
  // Each side leaves TIMEWAIT after the path's ACK timeout.
  for (CmClient* side : {&client, &server}) {
    const auto exit = side->next(10000);
    ASSERT_TRUE(exit);
    EXPECT_EQ(exit->event, RDMA_CM_EVENT_TIMEWAIT_EXIT);
  }
  EXPECT_EQ(client.simple(MsgType::CmDisconnect, client.create_id(RDMA_PS_TCP, IBV_QPT_RC)), -EINVAL)
      << "an id with no connection";
}

TEST_F(RdmaCmConnected, APeerThatGoesAwayIsDisconnected) {
  CmClient server(path(), "H2");
  listen(server);
  uint32_t conn = 0;
  {
    CmClient client(path(), "H1");
    conn = establish(server, client, routed(client));
    ASSERT_NE(conn, 0u);
  }  // the process exits: its ids are destroyed, its connection with a DREQ
  const auto ev = server.next();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_DISCONNECTED);
  EXPECT_EQ(ev->id, conn);
}

TEST_F(RdmaCmConnected, ADestroyedRequestIsRejectedAndAnUnansweredOneCanBeEstablishedByNotify) {
  CmClient server(path(), "H2"), client(path(), "H1");
  listen(server);
  const uint32_t id = routed(client);
  ASSERT_EQ(connect(client, id, 0x10, ""), 0);
  const auto req = server.next();
  ASSERT_TRUE(req);
  ASSERT_GE(server.simple(MsgType::CmDestroyId, req->id), 0);
  const auto rej = client.next();
  ASSERT_TRUE(rej);
  EXPECT_EQ(rej->event, RDMA_CM_EVENT_REJECTED);
  EXPECT_EQ(rej->status, kConsumerReject);

  // COMM_EST (a receive completed before the RTU) establishes the passive side.
  const uint32_t again = routed(client);
  ASSERT_EQ(connect(client, again, 0x11, ""), 0);
  const auto req2 = server.next();
  ASSERT_TRUE(req2);
  EXPECT_EQ(server.simple(MsgType::CmNotify, req2->id, IBV_EVENT_COMM_EST), -EINVAL) << "no REP sent yet";
  CmConnect accept = offer(req2->id, 0x22, "");
  ASSERT_EQ(server.request(MsgType::CmAccept, &accept, sizeof accept).value, 0);
  ASSERT_EQ(server.simple(MsgType::CmNotify, req2->id, IBV_EVENT_COMM_EST), 0);
  const auto est = server.next();
  ASSERT_TRUE(est);
  EXPECT_EQ(est->event, RDMA_CM_EVENT_ESTABLISHED);
  EXPECT_EQ(server.simple(MsgType::CmNotify, req2->id, IBV_EVENT_LID_CHANGE), 0);
  EXPECT_EQ(server.simple(MsgType::CmNotify, req2->id, IBV_EVENT_PATH_MIG), -EINVAL);
}

}  // namespace
}  // namespace ibfab::api::cm_test
