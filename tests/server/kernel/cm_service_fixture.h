#pragma once
// The engine's connection manager over a real CM connection, as librdmacm
// drives it (cm_protocol.h): a client, and the fixture that serves
// fat-tree:2:4 to it. The tests of each room of the hosts' kernel side
// (api/server/kernel/) use it; the SA's table is read with the engine
// stopped.
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

namespace ibfab::api::cm_test {

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
  uint32_t create_id(uint16_t ps = RDMA_PS_UDP, uint8_t qp_type = IBV_QPT_UD) {
    CmCreateId c;
    c.channel = channel_;
    c.ps = ps;
    c.qp_type = qp_type;
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

}  // namespace ibfab::api::cm_test
