// ib_cm's SIDR between two hosts (api/server/kernel/ib_cm.h): alone, on a
// fabric configured by hand (retries, repeats, answers); and as rdma_cm
// and ucma drive it in the engine (accept, reject, no listener, ucma's
// listen backlog).
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/server/kernel/ib_cm.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "sim/simulator.h"
#include "tests/fabric/model/hand_config.h"
#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

// Two hosts and a switch (line:2, LIDs and routes set by hand) with one
// IbCm attached to both, and a user that records what it hears: H1 sends,
// H2 receives.
class IbCmAlone : public ::testing::Test, public IbCm::User {
 protected:
  IbCmAlone() : topo_(topo::load_topology("line:2")), fabric_(sim_, topo_), cm_(fabric_, *this) {
    fabric::testing::configure_by_hand(fabric_);
    for (uint32_t i = 0; i < fabric_.node_count(); ++i)
      if (!fabric_.node(i).is_switch()) hosts_.push_back(static_cast<fabric::Hca*>(&fabric_.node(i)));
    for (fabric::Hca* h : hosts_) cm_.attach(*h, 1);
  }
  void on_sidr_req(const SidrRequester& from, const mad::SidrReq& req) override {
    requests_.push_back({from, req});
    if (answer_) cm_.send_sidr_rep(from, mad::sidr_status::kValid, 0x42, 0x1111, {});
  }
  void on_sidr_rep(uint32_t owner, const mad::SidrRep* rep) override {
    replies_.push_back({owner, rep ? std::optional<mad::SidrRep>(*rep) : std::nullopt, sim_.now()});
  }
  // A REQ from H1 to H2 for `owner`.
  uint32_t send(uint32_t owner) {
    fabric::MadAddress to;
    to.lid = hosts_[1]->port(1).lid;
    to.qpn = 1;
    mad::SidrReq req;
    req.service_id = 0x0111'1C06;
    return cm_.send_sidr_req(*hosts_[0], 1, to, req, owner);
  }

  struct Reply {
    uint32_t owner;
    std::optional<mad::SidrRep> rep;
    sim::Time at;
  };
  sim::Simulator sim_;
  topo::Topology topo_;
  fabric::Fabric fabric_;
  IbCm cm_;
  std::vector<fabric::Hca*> hosts_;
  bool answer_ = false;
  std::vector<std::pair<SidrRequester, mad::SidrReq>> requests_;
  std::vector<Reply> replies_;
};

TEST_F(IbCmAlone, RepeatsOfAnUnansweredReqReachTheUserOnceAndTheSenderHearsOfTheTimeout) {
  const uint32_t request_id = send(7);
  sim_.run();  // 16 tries, 4,096 ms apart; the last unanswered for 4,096 ms
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].second.request_id, request_id);
  EXPECT_EQ(requests_[0].second.service_id, 0x0111'1C06u);
  EXPECT_EQ(requests_[0].first.hca, hosts_[1]);
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].owner, 7u);
  EXPECT_FALSE(replies_[0].rep);
  EXPECT_EQ(replies_[0].at, sim::Time::ms(16 * 4096));
  // Answered too late: the sender waits for that REP no more.
  cm_.send_sidr_rep(requests_[0].first, mad::sidr_status::kRejected, 0, 0, {});
  sim_.run();
  EXPECT_EQ(replies_.size(), 1u);
}

TEST_F(IbCmAlone, AnAnsweredReqEndsItsRetriesAndItsRepReachesTheSender) {
  answer_ = true;
  send(9);
  sim_.run();
  EXPECT_EQ(requests_.size(), 1u);
  ASSERT_EQ(replies_.size(), 1u);
  EXPECT_EQ(replies_[0].owner, 9u);
  ASSERT_TRUE(replies_[0].rep);
  EXPECT_EQ(replies_[0].rep->status, mad::sidr_status::kValid);
  EXPECT_EQ(replies_[0].rep->qpn, 0x42u);
  EXPECT_EQ(replies_[0].rep->q_key, 0x1111u);
  EXPECT_EQ(replies_[0].rep->service_id, 0x0111'1C06u);
  EXPECT_LT(replies_[0].at, sim::Time::ms(4096)) << "answered before any retry";
  // Each REQ has a RequestID of its own, and each is answered.
  send(10);
  sim_.run();
  EXPECT_EQ(requests_.size(), 2u);
  EXPECT_NE(requests_[1].second.request_id, requests_[0].second.request_id);
  ASSERT_EQ(replies_.size(), 2u);
  EXPECT_EQ(replies_[1].owner, 10u);
}

TEST_F(IbCmAlone, ACancelledReqIsNotHeardOfAgain) {
  const uint32_t request_id = send(11);
  sim_.run_until(sim::Time::ms(5000));  // one retry out
  cm_.cancel_sidr_req(request_id);
  ASSERT_EQ(requests_.size(), 1u);
  cm_.send_sidr_rep(requests_[0].first, mad::sidr_status::kValid, 1, 1, {});  // too late
  sim_.run();
  EXPECT_TRUE(replies_.empty());
  EXPECT_EQ(requests_.size(), 1u);
}

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
