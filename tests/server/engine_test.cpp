// The engine serving a fabric over its socket, driven through the client
// core as a drop-in library would: sessions, node queries, MAD ports,
// agents, MADs to the SMA and the SA and back, umad timeouts, and clients
// that misbehave or vanish.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/client/session.h"
#include "api/server/engine.h"
#include "api/client/seqpacket.h"
#include "api/client/socket_path.h"
#include "fabric/mad/node_info.h"
#include "fabric/wire/byte_cursor.h"
#include "tests/server/engine_thread.h"

namespace ibfab::api {
namespace {

// One engine for the whole binary (the client core's session is
// per-process), on fat-tree:2:4 with the built-in SM on H1.
class Served : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    served_ = new testing::EngineThread;
    ASSERT_EQ(served_->start({}, "test"), "");
    path_ = served_->path();
    ::setenv("IBFAB_SOCKET", path_.c_str(), 1);
    ::setenv("IBFAB_NODE", "H3", 1);
  }
  static void TearDownTestSuite() { delete served_; }

  // Builds a 256-byte MAD: base version 1, class, version, method, TID.
  static std::array<uint8_t, 256> mad(uint8_t mgmt_class, uint8_t version, uint8_t method, uint16_t attr,
                                      uint64_t tid) {
    std::array<uint8_t, 256> m{};
    m[0] = 1;
    m[1] = mgmt_class;
    m[2] = version;
    m[3] = method;
    wire::store_be64(&m[8], tid);
    wire::store_be16(&m[16], attr);
    return m;
  }
  static int send(int fd, uint32_t agent, const std::array<uint8_t, 256>& m, uint16_t lid, uint32_t qpn,
                  uint32_t timeout_ms = 1000) {
    MadEnvelope env;
    env.agent = agent;
    env.timeout_ms = timeout_ms;
    env.length = 256;
    env.addr.lid = htobe16(lid);
    env.addr.qpn = htobe32(qpn);
    env.addr.qkey = htobe32(qpn ? 0x80010000 : 0);
    return send_message(fd, MsgType::SendMad, &env, sizeof env, m);
  }
  static RegisterAgent agent_for(uint32_t handle, uint8_t mgmt_class, uint8_t version) {
    RegisterAgent r;
    r.handle = handle;
    r.mgmt_class = mgmt_class;
    r.class_version = version;
    return r;
  }
  // Waits for one RecvMad; returns its envelope and fills `out`.
  static std::optional<MadEnvelope> recv(int fd, std::array<uint8_t, 256>& out) {
    std::array<uint8_t, kMaxMessage> buf;
    const ssize_t n = recv_message(fd, buf);
    if (n <= 0) return std::nullopt;
    auto env = body_as<MadEnvelope>(std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(n)), MsgType::RecvMad);
    if (env) std::memcpy(out.data(), buf.data() + sizeof(MsgHeader) + sizeof(MadEnvelope), std::min<std::size_t>(env->length, 256));
    return env;
  }

  static inline testing::EngineThread* served_ = nullptr;
  static inline std::string path_;
};

TEST_F(Served, TheSocketRefusesOtherUsers) {
  struct stat st{};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0077, 0u) << "owner-only: no group or other permission, so others cannot connect";
}

TEST_F(Served, TheSessionSeesItsHostAsTheSmConfiguredIt) {
  std::string error;
  client::Session* s = client::Session::get(&error);
  ASSERT_NE(s, nullptr) << error;
  const std::optional<NodeReply> n = s->query_node();
  ASSERT_TRUE(n);
  EXPECT_STREQ(n->name, "H3");
  ASSERT_EQ(n->num_ports, 1u);
  const PortRecord& p = n->ports[0];
  EXPECT_EQ(p.state, 4) << "Active";
  EXPECT_EQ(p.phys_state, 5) << "LinkUp";
  EXPECT_NE(p.lid, 0);
  EXPECT_NE(p.sm_lid, 0);
  EXPECT_GT(p.rate_mbps, 0u);
  EXPECT_GE(p.pkey_count, 1);
  EXPECT_EQ(p.pkeys[0], 0xFFFF);
}

TEST_F(Served, AnSmpToTheLocalPortAndAnSaGetComeBack) {
  client::Session* s = client::Session::get();
  ASSERT_NE(s, nullptr);
  uint32_t handle = 0;
  const int fd = s->open_mad_port(1, handle);
  ASSERT_GE(fd, 0);
  const int a = s->register_agent(agent_for(handle, 0x01, 1));  // LID-routed SMPs
  ASSERT_EQ(a, 0) << "agent ids count from 0 per port";
  const int b = s->register_agent(agent_for(handle, 0x03, 2));
  ASSERT_EQ(b, 1);
  const PortRecord port = s->query_node()->ports[0];

  // NodeInfo of our own port, LID-routed to ourselves.
  ASSERT_EQ(send(fd, 0, mad(0x01, 1, 0x01, mad::NodeInfo::kAttributeId, 0x1234), port.lid, 0), 0);
  std::array<uint8_t, 256> got{};
  std::optional<MadEnvelope> env = recv(fd, got);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->agent, 0u);
  EXPECT_EQ(env->status, 0);
  EXPECT_EQ(got[3], 0x81) << "GetResp";
  EXPECT_EQ(static_cast<uint32_t>(wire::load_be64(&got[8])), 0x1234u) << "TID bits 31:0 kept";
  const mad::NodeInfo ni = mad::NodeInfo::unpack(std::span<const uint8_t>(got).subspan(64));
  EXPECT_EQ(ni.port_guid, port.port_guid);

  // SA ClassPortInfo from the built-in SA, on QP1 of the SM's LID.
  ASSERT_EQ(send(fd, 1, mad(0x03, 2, 0x01, 0x0001, 0x77), port.sm_lid, 1), 0);
  env = recv(fd, got);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->agent, 1u);
  EXPECT_EQ(got[3], 0x81);
  EXPECT_EQ(be16toh(env->addr.lid), port.sm_lid);
  EXPECT_EQ(be32toh(env->addr.qpn), 1u);
  ::close(fd);
}

// 3,000 SA Gets sent before reading a single answer: the answers overflow
// the socket's buffer, wait in the engine's queue, and every one arrives.
TEST_F(Served, ASlowReaderLosesNothing) {
  client::Session* s = client::Session::get();
  uint32_t handle = 0;
  const int fd = s->open_mad_port(1, handle);
  ASSERT_EQ(s->register_agent(agent_for(handle, 0x03, 2)), 0);
  const uint16_t sm_lid = s->query_node()->ports[0].sm_lid;
  constexpr int kQueries = 3000;
  for (int q = 0; q < kQueries; ++q) ASSERT_EQ(send(fd, 0, mad(0x03, 2, 0x01, 0x0001, q + 1), sm_lid, 1), 0);
  std::array<uint8_t, 256> got{};
  int answers = 0;
  for (; answers < kQueries; ++answers) {
    const std::optional<MadEnvelope> env = recv(fd, got);
    if (!env || env->status != 0 || got[3] != 0x81) break;
  }
  EXPECT_EQ(answers, kQueries);
  ::close(fd);
}

TEST_F(Served, AnUnansweredRequestComesBackTimedOut) {
  client::Session* s = client::Session::get();
  uint32_t handle = 0;
  const int fd = s->open_mad_port(1, handle);
  ASSERT_EQ(s->register_agent(agent_for(handle, 0x04, 1)), 0);
  // A PMA Get to a LID nobody has.
  ASSERT_EQ(send(fd, 0, mad(0x04, 1, 0x01, 0x0012, 0x99), 0x3FFF, 1, 20), 0);
  std::array<uint8_t, 256> got{};
  const std::optional<MadEnvelope> env = recv(fd, got);
  ASSERT_TRUE(env);
  EXPECT_EQ(env->status, ETIMEDOUT);
  EXPECT_EQ(got[3], 0x01) << "the request itself comes back";
  ::close(fd);
}

TEST_F(Served, GarbageAndStrangersAreRefusedAndTheEngineGoesOn) {
  // Garbage as the first message.
  const int fd = connect_to(path_);
  ASSERT_GE(fd, 0);
  const char junk[] = "hello?";
  ASSERT_EQ(::send(fd, junk, sizeof junk, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof junk));
  std::array<uint8_t, 512> buf;
  ssize_t n = recv_message(fd, buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(type_of(std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(n))), MsgType::Error);
  EXPECT_EQ(recv_message(fd, buf), 0) << "then the engine hangs up";
  ::close(fd);
  // A library of another protocol version: told the version expected.
  const int old = connect_to(path_);
  ASSERT_GE(old, 0);
  Hello hello;
  hello.version = kProtocolVersion - 1;
  hello.pid = static_cast<uint32_t>(::getpid());
  ASSERT_EQ(send_message(old, MsgType::Hello, &hello, sizeof hello), 0);
  n = recv_message(old, buf);
  const std::optional<ErrorBody> e =
      body_as<ErrorBody>(std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(n > 0 ? n : 0)), MsgType::Error);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, EPROTO);
  EXPECT_EQ(std::string(e->text), "bad Hello (protocol version " + std::to_string(kProtocolVersion) + " expected)");
  ::close(old);
  // A host that does not exist.
  const int fd2 = connect_to(path_);
  uint32_t handle = 0;
  EXPECT_EQ(client::greet(fd2, "H999", ConnectionKind::Control, 0, handle), -ENODEV);
  ::close(fd2);
  // A MAD for an agent the port does not have.
  client::Session* s = client::Session::get();
  const int port = s->open_mad_port(1, handle);
  ASSERT_EQ(send(port, 7, mad(0x04, 1, 0x01, 0x0012, 1), 1, 1), 0);
  n = recv_message(port, buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(type_of(std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(n))), MsgType::Error);
  ::close(port);
  // Everyone else goes on.
  EXPECT_TRUE(s->query_node());
}

TEST_F(Served, AClientThatLeavesLosesItsAgents) {
  client::Session* s = client::Session::get();
  uint32_t handle = 0;
  const int fd = s->open_mad_port(1, handle);
  RegisterAgent vendor = agent_for(handle, 0x09, 1);
  vendor.method_mask[0] = 1u << 1;  // takes unsolicited Gets
  ASSERT_EQ(s->register_agent(vendor), 0);
  uint32_t other = 0;
  const int second = s->open_mad_port(1, other);
  RegisterAgent same = vendor;
  same.handle = other;
  EXPECT_LT(s->register_agent(same), 0) << "the HCA has a taker for unsolicited Gets of class 0x09 already";
  Engine& engine = served_->engine();
  const std::size_t open = served_->read([&] { return engine.clients(); });
  ::close(second);
  ::close(fd);
  ASSERT_TRUE(served_->serve_until([&] { return engine.clients() <= open - 2; })) << "the engine saw both ports close";
  // The registration went with the connection: the same one is free again.
  const int again = s->open_mad_port(1, handle);
  vendor.handle = handle;
  EXPECT_EQ(s->register_agent(vendor), 0);
  ::close(again);
}

}  // namespace
}  // namespace ibfab::api
