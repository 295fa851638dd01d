// ib_cm's SIDR between two hosts (api/server/kernel/ib_cm.h) as rdma_cm
// and ucma drive it in the engine: accept, reject, no listener, and ucma's
// listen backlog.
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include <cstring>
#include <optional>
#include <string>

#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

TEST_F(CmService, SidrConnectsAcceptsAndRejects) {
  CmClient server(path(), "H2"), client(path(), "H1");
  const uint32_t listener = server.create_id();
  ASSERT_EQ(server.bind(listener, "0.0.0.0", 7174), 0);
  ASSERT_EQ(server.simple(MsgType::CmListen, listener), 0);
  for (const bool accept : {true, false}) {
    const uint32_t id = client.create_id();
    ASSERT_EQ(client.resolve(id, nullptr, "10.1.0.2", 7174), 0);
    ASSERT_EQ(client.next()->event, RDMA_CM_EVENT_ADDR_RESOLVED);
    ASSERT_EQ(client.simple(MsgType::CmResolveRoute, id, 1000), 0);
    auto route = client.next();
    ASSERT_TRUE(route);
    ASSERT_EQ(route->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
    CmConnect c;
    c.id = id;
    c.qp_num = 0x99;
    c.private_data_len = 3;
    std::memcpy(c.private_data, "abc", 3);
    ASSERT_EQ(client.request(MsgType::CmConnect, &c, sizeof c).value, 0);
    auto req = server.next();
    ASSERT_TRUE(req);
    EXPECT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST);
    EXPECT_EQ(req->listen_id, listener);
    EXPECT_EQ(req->private_data_len, kCmUdPrivateData);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(req->private_data), 3), "abc");
    CmConnect a;
    a.id = req->id;
    a.qp_num = 0x1234;
    ASSERT_EQ(server.request(accept ? MsgType::CmAccept : MsgType::CmReject, &a, sizeof a).value, 0);
    auto done = client.next();
    ASSERT_TRUE(done);
    if (accept) {
      EXPECT_EQ(done->event, RDMA_CM_EVENT_ESTABLISHED);
      EXPECT_EQ(done->qp_num, 0x1234u);
      EXPECT_EQ(done->qkey, 0x01234567u);
      EXPECT_NE(done->ah.dlid, 0);
    } else {
      EXPECT_EQ(done->event, RDMA_CM_EVENT_UNREACHABLE);
      EXPECT_EQ(done->status, 2);  // SIDR_REP status: rejected
    }
  }
  // Nobody listens on 7175: "service ID not supported".
  const uint32_t id = client.create_id();
  ASSERT_EQ(client.resolve(id, nullptr, "10.1.0.2", 7175), 0);
  ASSERT_TRUE(client.next());
  ASSERT_EQ(client.simple(MsgType::CmResolveRoute, id, 1000), 0);
  ASSERT_TRUE(client.next());
  CmConnect c;
  c.id = id;
  ASSERT_EQ(client.request(MsgType::CmConnect, &c, sizeof c).value, 0);
  auto ev = client.next();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_UNREACHABLE);
  EXPECT_EQ(ev->status, 1);
}

// rdma_ucm's listen backlog: requests past it are rejected (SIDR REP status
// 2), and answering one makes room for the next.
TEST_F(CmService, AListenerHoldsAsManyUnansweredRequestsAsItsBacklog) {
  CmClient server(path(), "H2"), client(path(), "H1");
  const uint32_t listener = server.create_id();
  ASSERT_EQ(server.bind(listener, "0.0.0.0", 7176), 0);
  ASSERT_EQ(server.simple(MsgType::CmListen, listener, 2), 0);
  auto connect = [&] {  // a SIDR REQ to the listener; the id
    const uint32_t id = client.create_id();
    EXPECT_EQ(client.resolve(id, nullptr, "10.1.0.2", 7176), 0);
    EXPECT_EQ(client.next()->event, RDMA_CM_EVENT_ADDR_RESOLVED);
    EXPECT_EQ(client.simple(MsgType::CmResolveRoute, id, 1000), 0);
    EXPECT_EQ(client.next()->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
    CmConnect c;
    c.id = id;
    EXPECT_EQ(client.request(MsgType::CmConnect, &c, sizeof c).value, 0);
    return id;
  };
  connect();
  connect();
  std::optional<CmEvent> first = server.next(), second = server.next();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->event, RDMA_CM_EVENT_CONNECT_REQUEST);
  EXPECT_EQ(second->event, RDMA_CM_EVENT_CONNECT_REQUEST);
  const uint32_t third = connect();
  std::optional<CmEvent> refused = client.next();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->id, third);
  EXPECT_EQ(refused->event, RDMA_CM_EVENT_UNREACHABLE);
  EXPECT_EQ(refused->status, 2);  // SIDR_REP status: rejected
  EXPECT_FALSE(server.next(0));   // the listener was never told: the REP went out in the same step
  CmConnect answer;
  answer.id = first->id;
  ASSERT_EQ(server.request(MsgType::CmReject, &answer, sizeof answer).value, 0);
  ASSERT_TRUE(client.next());  // the first one's UNREACHABLE
  connect();
  std::optional<CmEvent> fourth = server.next();
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->event, RDMA_CM_EVENT_CONNECT_REQUEST);
}

}  // namespace
}  // namespace ibfab::api::cm_test
