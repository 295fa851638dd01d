// The engine's connection manager over a real CM connection, as librdmacm
// drives it (cm_protocol.h): IPoIB's broadcast joins, address binding and
// resolution, multicast joins reference-counted per port, send-only joins,
// SIDR between two hosts, and the release of everything a client made.
// The SA's table is read with the engine stopped.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>

#include "api/client/cm_protocol.h"
#include "api/client/seqpacket.h"
#include "api/client/socket_path.h"
#include "api/client/session.h"
#include "api/server/engine.h"
#include "tests/server/engine_thread.h"
#include "sm/sa/mcast_groups.h"

namespace ibfab::api {
namespace {

// A CM connection and one event channel, as librdmacm holds them.
class CmClient {
 public:
  CmClient(const std::string& path, const std::string& node) {
    fd_ = connect_to(path);
    uint32_t handle = 0;
    EXPECT_EQ(client::greet(fd_, node, ConnectionKind::Cm, 0, handle), 0);
    int pair[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
    events_ = pair[0];
    const int give[] = {pair[1]};
    CmCreateChannel c;
    channel_ = static_cast<uint32_t>(request(MsgType::CmCreateChannel, &c, sizeof c, give).value);
    ::close(pair[1]);
  }
  ~CmClient() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    if (events_ >= 0) ::close(events_);
    fd_ = events_ = -1;
  }

  CmReply request(MsgType type, const void* body, std::size_t size, std::span<const int> fds = {}) {
    CmReply r;
    r.value = -EPROTO;
    if (send_message(fd_, type, body, size, {}, fds) != 0) return r;
    std::array<uint8_t, sizeof(MsgHeader) + sizeof(CmReply)> buf;
    const ssize_t n = recv_message(fd_, buf);
    if (auto got = body_as<CmReply>(std::span<const uint8_t>(buf.data(), n > 0 ? n : 0), MsgType::CmReply)) r = *got;
    return r;
  }
  uint32_t create_id(uint16_t ps = RDMA_PS_UDP) {
    CmCreateId c;
    c.channel = channel_;
    c.ps = ps;
    c.qp_type = IBV_QPT_UD;
    return static_cast<uint32_t>(request(MsgType::CmCreateId, &c, sizeof c).value);
  }
  int64_t simple(MsgType type, uint32_t id, uint32_t arg = 0) {
    CmIdRequest r;
    r.id = id;
    r.arg = arg;
    return request(type, &r, sizeof r).value;
  }
  // CmQueryAddress for `port` of this connection's host.
  CmReply query_address(uint32_t port) {
    CmIdRequest q;
    q.arg = port;
    return request(MsgType::CmQueryAddress, &q, sizeof q);
  }
  static std::string ipv6_text(const uint8_t (&a)[16]) {
    char text[64];
    ::inet_ntop(AF_INET6, a, text, sizeof text);
    return text;
  }
  int64_t bind(uint32_t id, const char* ip, uint16_t port = 0) {
    CmAddrRequest r;
    r.id = id;
    v4(r.src, ip, port);
    return request(MsgType::CmBindAddr, &r, sizeof r).value;
  }
  int64_t resolve(uint32_t id, const char* src, const char* dst, uint16_t port = 0, uint32_t timeout_ms = 2000) {
    CmAddrRequest r;
    r.id = id;
    r.timeout_ms = timeout_ms;
    if (src) v4(r.src, src, 0);
    v4(r.dst, dst, port);
    return request(MsgType::CmResolveAddr, &r, sizeof r).value;
  }
  int64_t join(uint32_t id, const char* group, uint64_t uid, uint32_t flags = RDMA_MC_JOIN_FLAG_FULLMEMBER) {
    CmJoin j;
    j.id = id;
    j.uid = uid;
    j.join_flags = flags;
    v4(j.addr, group, 0);
    return request(MsgType::CmJoin, &j, sizeof j).value;
  }
  int64_t leave(uint32_t id, uint64_t uid) {
    CmLeave l;
    l.id = id;
    l.uid = uid;
    return request(MsgType::CmLeave, &l, sizeof l).value;
  }
  // The next event within `ms`, or nullopt.
  std::optional<CmEvent> next(int ms = 5000) {
    pollfd p{events_, POLLIN, 0};
    CmEvent e;
    if (::poll(&p, 1, ms) != 1 || ::recv(events_, &e, sizeof e, 0) != static_cast<ssize_t>(sizeof e)) return std::nullopt;
    return e;
  }
  static void v4(sockaddr_storage& s, const char* ip, uint16_t port) {
    auto& a = reinterpret_cast<sockaddr_in&>(s);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, ip, &a.sin_addr);
  }

 private:
  int fd_ = -1;
  int events_ = -1;
  uint32_t channel_ = 0;
};

class CmService : public ::testing::Test {
 protected:
  void start(EngineOptions o) { ASSERT_EQ(served_.start(o, "cm-test"), ""); }
  void SetUp() override { start({}); }
  // The JoinState the SA holds for `host`'s port 1 in group `mgid` (0: not
  // a member), read with the engine stopped.
  uint8_t sa_member(const std::string& mgid, const std::string& host) {
    return served_.read([&] {
      uint8_t state = 0;
      const sm::McastGroup* g = served_.engine().sm()->groups()->find(*wire::Gid::parse(mgid));
      const fabric::Hca* h = served_.engine().fabric().find_hca(host);
      if (g && h)
        if (auto it = g->members.find(h->port(1).guid()); it != g->members.end()) state = it->second.join_state;
      return state;
    });
  }
  std::size_t sa_members(const std::string& mgid) { return served_.read([&] { return members(mgid); }); }
  // Whether the SA's members of `mgid` come to none, the engine serving
  // meanwhile.
  bool sa_members_leave(const std::string& mgid) {
    return served_.serve_until([&] { return members(mgid) == 0; });
  }
  std::size_t members(const std::string& mgid) {
    const sm::McastGroup* g = served_.engine().sm()->groups()->find(*wire::Gid::parse(mgid));
    return g ? g->members.size() : 0;
  }

  // H2 (10.1.0.2) joins 239.1.1.1 send-only as `uid`: the event it gets.
  static std::optional<CmEvent> send_only_join(CmClient& h2, uint64_t uid) {
    const uint32_t id = h2.create_id();
    if (h2.bind(id, "10.1.0.2") != 0 || h2.join(id, "239.1.1.1", uid, RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) != 0)
      return std::nullopt;
    return h2.next();
  }

  static constexpr const char* kBroadcast = "ff12:401b:ffff::ffff:ffff";
  static constexpr const char* kGroup = "ff12:4001:ffff::f01:101";  // 239.1.1.1 under RDMA_PS_UDP
  const std::string& path() const { return served_.path(); }
  testing::EngineThread served_;
};

TEST_F(CmService, EveryActivePortJoinsItsIpoibBroadcastGroupAtBringUp) {
  EXPECT_EQ(sa_members(kBroadcast), 8u);  // fat-tree:2:4 has 8 hosts
  EXPECT_EQ(sa_member(kBroadcast, "H5"), 0x1);
}

TEST_F(CmService, JoinGivesTheGroupsAddressVectorAndTheSaSeesOneMemberPerPort) {
  CmClient h1(path(), "H1");
  const uint32_t a = h1.create_id(), b = h1.create_id();
  ASSERT_GT(a, 0u);
  EXPECT_EQ(h1.bind(a, "10.1.0.1"), 0);
  EXPECT_EQ(h1.bind(b, "10.1.0.1"), 0);  // ephemeral ports: no clash
  ASSERT_EQ(h1.join(a, "239.1.1.1", 77), 0);
  auto ev = h1.next();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_MULTICAST_JOIN);
  EXPECT_EQ(ev->status, 0);
  EXPECT_EQ(ev->id, a);
  EXPECT_EQ(ev->uid, 77u);
  EXPECT_EQ(ev->qp_num, 0xFFFFFFu);
  EXPECT_EQ(ev->qkey, 0x01234567u);
  EXPECT_GE(ev->mlid, 0xC000);
  EXPECT_EQ(ev->ah.dlid, ev->mlid);
  EXPECT_EQ(ev->ah.is_global, 1);
  EXPECT_EQ(ev->ah.port_num, 1);
  wire::Gid dgid;
  std::memcpy(dgid.raw.data(), ev->ah.dgid, 16);
  EXPECT_EQ(dgid.str(), kGroup);
  EXPECT_EQ(sa_member(kGroup, "H1"), 0x1);
  // A second id on the same port: no new membership; leaving one keeps it.
  ASSERT_EQ(h1.join(b, "239.1.1.1", 78), 0);
  ASSERT_TRUE(h1.next());
  EXPECT_EQ(sa_members(kGroup), 1u);
  EXPECT_EQ(h1.leave(a, 77), 1);  // the join had one event
  EXPECT_EQ(sa_member(kGroup, "H1"), 0x1);
  EXPECT_EQ(h1.leave(b, 78), 1);
  EXPECT_TRUE(sa_members_leave(kGroup)) << "the last leave takes the port out of the group";
  EXPECT_EQ(h1.leave(b, 78), -EADDRNOTAVAIL);  // a second leave
}

TEST_F(CmService, SendOnlyJoinIsJoinState8) {
  CmClient h2(path(), "H2");
  auto ev = send_only_join(h2, 1);
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_MULTICAST_JOIN);
  EXPECT_EQ(sa_member(kGroup, "H2"), 0x8);
}

TEST_F(CmService, BadJoinsAreRefusedWithTheKernelsErrno) {
  CmClient h1(path(), "H1");
  const uint32_t id = h1.create_id();
  EXPECT_EQ(h1.join(id, "239.1.1.1", 1), -EINVAL);  // not bound
  ASSERT_EQ(h1.bind(id, "10.1.0.1"), 0);
  EXPECT_EQ(h1.join(id, "239.1.1.1", 1, 7), -EINVAL);  // no such flag
  EXPECT_EQ(h1.leave(id, 99), -EADDRNOTAVAIL);
  EXPECT_EQ(h1.bind(h1.create_id(), "10.1.0.2"), -EADDRNOTAVAIL);  // H2's address, not ours
  EXPECT_EQ(h1.simple(MsgType::CmDestroyId, 12345), -EINVAL);
}

TEST_F(CmService, AMulticastDestinationResolvesThroughTheRoutingTable) {
  CmClient h3(path(), "H3");
  const uint32_t id = h3.create_id();
  ASSERT_EQ(h3.resolve(id, nullptr, "239.1.1.1"), 0);
  auto ev = h3.next();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_ADDR_RESOLVED);
  CmIdRequest q;
  q.id = id;
  const CmReply r = h3.request(MsgType::CmQueryId, &q, sizeof q);
  EXPECT_STREQ(r.info.node, "H3");
  EXPECT_EQ(r.info.port, 1);
  char text[32];
  ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(r.info.src).sin_addr, text, sizeof text);
  EXPECT_STREQ(text, "10.1.0.3");  // the route's source address
  wire::Gid dgid;  // the group's MGID, with the port's broadcast scope and P_Key
  std::memcpy(dgid.raw.data(), r.info.dgid, 16);
  EXPECT_EQ(dgid.str(), kGroup);
}

TEST_F(CmService, QueryAddressGivesThePortsAddressesFromThePlan) {
  CmClient h3(path(), "H3");
  const CmReply r = h3.query_address(1);
  ASSERT_EQ(r.value, 0);
  EXPECT_EQ(r.address.ipv4, 0x0A010003u);  // 10.1.0.3
  EXPECT_EQ(r.address.prefix4, 16);
  EXPECT_EQ(CmClient::ipv6_text(r.address.ipv6), "fd00:0:0:1::3");
  EXPECT_EQ(r.address.prefix6, 64);
  EXPECT_EQ(r.address.multicast_route, 1);
  EXPECT_EQ(h3.query_address(2).value, -ENODEV);  // an HCA of one port
  EXPECT_EQ(h3.query_address(0).value, -ENODEV);
}

TEST_F(CmService, AnUnknownUnicastAddressTimesOut) {
  CmClient h3(path(), "H3");
  const uint32_t id = h3.create_id();
  ASSERT_EQ(h3.resolve(id, nullptr, "10.1.0.200", 0, 100), 0);
  auto ev = h3.next();
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_ADDR_ERROR);
  EXPECT_EQ(ev->status, -ETIMEDOUT);
  // Outside every subnet: no route at all.
  EXPECT_EQ(h3.resolve(h3.create_id(), nullptr, "192.168.7.7"), -ENETUNREACH);
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

TEST_F(CmService, AClientThatGoesAwayLeavesItsGroups) {
  {
    CmClient h4(path(), "H4");
    const uint32_t id = h4.create_id();
    ASSERT_EQ(h4.bind(id, "10.1.0.4"), 0);
    ASSERT_EQ(h4.join(id, "239.1.1.1", 1), 0);
    ASSERT_TRUE(h4.next());
    EXPECT_EQ(sa_member(kGroup, "H4"), 0x1);
  }  // the connection closes
  EXPECT_TRUE(sa_members_leave(kGroup)) << "the port left the group with the connection";
}

class CmServiceOldSm : public CmService {
 protected:
  void SetUp() override {
    EngineOptions o;
    o.sa_send_only_full = false;
    start(o);
  }
};

TEST_F(CmServiceOldSm, SendOnlyJoinFailsWhenTheSmLacksSupport) {
  CmClient h2(path(), "H2");
  auto ev = send_only_join(h2, 5);
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_MULTICAST_ERROR);
  EXPECT_EQ(ev->status, -EINVAL);
  EXPECT_EQ(ev->uid, 5u);
  EXPECT_EQ(sa_members(kGroup), 0u);
}

}  // namespace
}  // namespace ibfab::api

namespace ibfab::api {
namespace {

// A fabric whose plan overrides H3's addresses and has no multicast route.
class CmServiceOverridden : public CmService {
 protected:
  void SetUp() override {
    EngineOptions o;
    o.addresses.overrides = {"H3=192.168.9.3/24", "H3=fd42::3/48"};
    o.addresses.mcast_route_port = std::nullopt;
    start(o);
  }
};

TEST_F(CmServiceOverridden, QueryAddressFollowsOverridesAndTheMulticastRoute) {
  CmClient h3(path(), "H3");
  const CmReply r = h3.query_address(1);
  ASSERT_EQ(r.value, 0);
  EXPECT_EQ(r.address.ipv4, 0xC0A80903u);  // 192.168.9.3
  EXPECT_EQ(r.address.prefix4, 24);
  EXPECT_EQ(CmClient::ipv6_text(r.address.ipv6), "fd42::3");
  EXPECT_EQ(r.address.prefix6, 48);
  EXPECT_EQ(r.address.multicast_route, 0);
}

}  // namespace
}  // namespace ibfab::api
