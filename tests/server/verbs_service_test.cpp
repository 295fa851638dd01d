// The engine's verbs side over a real verbs connection (the client core's
// VerbsLink), as libibverbs drives it: requests that create, move and
// attach objects, their refusals, and the release of everything a client
// made when its connection goes.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "api/client/session.h"
#include "api/client/shared_memory.h"
#include "api/client/socket_path.h"
#include "api/client/verbs_link.h"
#include "api/client/verbs_protocol.h"
#include "api/client/verbs_rings.h"
#include "api/server/engine.h"
#include "tests/server/engine_thread.h"

namespace ibfab::api {
namespace {

using rings::CqRing;
using rings::QpRings;

constexpr uint32_t kSqSlot = sizeof(rings::SendWqe) + rings::kMaxUdPayload;
constexpr uint32_t kRqSlot = rings::kGrhBytes + rings::kMaxUdPayload;

class VerbsService : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(served_.start({}, "verbs-test"), ""); }
  // The next async event on `fd` within `ms`, or nullopt.
  static std::optional<AsyncEvent> next_event(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    AsyncEvent e;
    if (::poll(&p, 1, ms) != 1 || ::recv(fd, &e, sizeof e, 0) != static_cast<ssize_t>(sizeof e)) return std::nullopt;
    return e;
  }
  int64_t create_cq(client::VerbsLink& link, SharedMemory& mem, uint32_t depth = 8) {
    EXPECT_EQ(mem.create(CqRing::bytes(depth), "test-cq"), 0);
    CreateCq c;
    c.depth = depth;
    const int fd[] = {mem.fd()};
    return link.request(MsgType::CreateCq, &c, sizeof c, fd);
  }
  int64_t create_qp(client::VerbsLink& link, SharedMemory& mem, uint32_t cq) {
    EXPECT_EQ(mem.create(QpRings::bytes(8, kSqSlot, 8, kRqSlot), "test-qp"), 0);
    CreateQp q;
    q.send_cq = q.recv_cq = cq;
    q.sq_depth = q.rq_depth = 8;
    q.sq_slot = kSqSlot;
    q.rq_slot = kRqSlot;
    q.qp_type = IBV_QPT_UD;
    const int fd[] = {mem.fd()};
    return link.request(MsgType::CreateQp, &q, sizeof q, fd);
  }
  static int64_t attach(client::VerbsLink& link, uint32_t qpn, uint8_t last, MsgType type = MsgType::AttachMcast) {
    McastRequest m;
    m.qp_num = qpn;
    m.lid = static_cast<uint16_t>(0xC000 + last);
    m.gid[0] = 0xFF;
    m.gid[1] = 0x15;
    m.gid[15] = last;
    return link.request(type, &m, sizeof m);
  }

  const std::string& path() const { return served_.path(); }
  testing::EngineThread served_;
};

TEST_F(VerbsService, RequestsAreCheckedAndRefusedWithErrno) {
  client::VerbsLink link;
  ASSERT_EQ(link.open(path(), "H3"), 0);
  CreateCq c;
  c.depth = 8;
  EXPECT_EQ(link.request(MsgType::CreateCq, &c, sizeof c), -EINVAL);  // no ring fd
  SharedMemory small;
  ASSERT_EQ(small.create(64, "small"), 0);
  const int fd[] = {small.fd()};
  EXPECT_EQ(link.request(MsgType::CreateCq, &c, sizeof c, fd), -EINVAL);  // a ring too small for its depth
  c.depth = 6;  // not a power of two
  EXPECT_EQ(link.request(MsgType::CreateCq, &c, sizeof c, fd), -EINVAL);
  SharedMemory cq_mem, qp_mem;
  const int64_t cq = create_cq(link, cq_mem);
  ASSERT_GT(cq, 0);
  SharedMemory other;
  EXPECT_EQ(create_qp(link, other, 999), -EINVAL);  // no such CQ
  const int64_t qpn = create_qp(link, qp_mem, static_cast<uint32_t>(cq));
  ASSERT_GT(qpn, 0);
  DestroyObject d{static_cast<uint32_t>(cq)};
  EXPECT_EQ(link.request(MsgType::DestroyCq, &d, sizeof d), -EBUSY);
  ModifyQp m;
  m.qp_num = 12345;
  m.state = IBV_QPS_INIT;
  EXPECT_EQ(link.request(MsgType::ModifyQp, &m, sizeof m), -EINVAL);
  m.qp_num = static_cast<uint32_t>(qpn);
  m.set_port = 1;
  m.port = 9;
  EXPECT_EQ(link.request(MsgType::ModifyQp, &m, sizeof m), -EINVAL);
  McastRequest unicast;
  unicast.qp_num = static_cast<uint32_t>(qpn);
  unicast.gid[0] = 0xFE;
  EXPECT_EQ(link.request(MsgType::AttachMcast, &unicast, sizeof unicast), -EINVAL);
  EXPECT_EQ(attach(link, static_cast<uint32_t>(qpn), 1), 0);
  EXPECT_EQ(attach(link, static_cast<uint32_t>(qpn), 2, MsgType::DetachMcast), -EINVAL);  // never attached
  // A request the verbs connection does not know is refused, not fatal.
  EXPECT_EQ(link.request(MsgType::ListHosts, &c, sizeof c), -EPROTO);
}

TEST_F(VerbsService, PortEventsReachTheAsyncFd) {
  client::VerbsLink link;
  ASSERT_EQ(link.open(path(), "H3"), 0);
  EXPECT_FALSE(next_event(link.async_fd(), 50));  // a steady fabric says nothing
  fabric::Link* cable = served_.engine().fabric().find_hca("H3")->port(1).link();
  ASSERT_NE(cable, nullptr);
  served_.stop();
  served_.engine().fabric().set_link_up(*cable, false);
  served_.resume();
  std::optional<AsyncEvent> e = next_event(link.async_fd(), 30000);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, IBV_EVENT_PORT_ERR);
  EXPECT_EQ(e->port, 1u);
  served_.stop();
  served_.engine().fabric().set_link_up(*cable, true);
  served_.resume();
  // The switch's trap makes the SM sweep: the port comes back Active.
  bool active = false;
  while (!active && (e = next_event(link.async_fd(), 60000))) active = e->type == IBV_EVENT_PORT_ACTIVE;
  EXPECT_TRUE(active);
}

// Program order: a process's posts carry a stamp only while it has a MAD
// port open, and the engine says so in every QP ring of that process.
TEST_F(VerbsService, PostsAreStampedWhileTheProcessHasAMadPort) {
  client::VerbsLink link;
  ASSERT_EQ(link.open(path(), "H3"), 0);
  SharedMemory cq_mem, qp_mem;
  const int64_t cq = create_cq(link, cq_mem);
  ASSERT_GT(create_qp(link, qp_mem, static_cast<uint32_t>(cq)), 0);
  auto* rings = qp_mem.as<QpRings>();
  EXPECT_EQ(rings->stamped.value.load(), 0u) << "no MAD port yet";
  const int mad = connect_to(path());
  ASSERT_GE(mad, 0);
  uint32_t handle = 0;
  ASSERT_EQ(client::greet(mad, "H3", ConnectionKind::MadPort, 1, handle), 0);
  EXPECT_NE(rings->stamped.value.load(), 0u) << "set before the MAD port's Hello was answered";
  SharedMemory later;
  ASSERT_GT(create_qp(link, later, static_cast<uint32_t>(cq)), 0);
  EXPECT_NE(later.as<QpRings>()->stamped.value.load(), 0u) << "a QP made afterwards too";
  ::close(mad);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (rings->stamped.value.load() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_EQ(rings->stamped.value.load(), 0u) << "cleared once the process has no MAD port";
}

TEST_F(VerbsService, AClientsObjectsGoWithItsConnection) {
  {
    client::VerbsLink link;
    ASSERT_EQ(link.open(path(), "H3"), 0);
    SharedMemory cq_mem, qp1, qp2;
    const int64_t cq = create_cq(link, cq_mem);
    const int64_t a = create_qp(link, qp1, static_cast<uint32_t>(cq));
    const int64_t b = create_qp(link, qp2, static_cast<uint32_t>(cq));
    ASSERT_GT(a, 0);
    ASSERT_GT(b, 0);
    for (uint8_t g = 1; g <= 3; ++g) ASSERT_EQ(attach(link, static_cast<uint32_t>(a), g), 0);
    ASSERT_EQ(attach(link, static_cast<uint32_t>(b), 1), 0);
  }  // the connection closes, as when a process exits or is killed
  const fabric::Hca& h3 = *served_.engine().fabric().find_hca("H3");
  EXPECT_TRUE(served_.serve_until([&] { return served_.engine().clients() == 0; })) << "the engine saw it close";
  served_.stop();
  EXPECT_EQ(h3.qp_count(), 0u);
  EXPECT_EQ(h3.mcast_groups(1), 0u);
}

}  // namespace
}  // namespace ibfab::api
