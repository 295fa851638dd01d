// ib_sa's multicast module under rdma_cm's joins (api/server/kernel/
// multicast.h, rdma_cm.h): the group's address vector, one SA membership
// per port and JoinState bit however many ids join, send-only joins, the
// kernel's errnos, and the leave of a client that goes away.
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstring>

#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

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
}  // namespace ibfab::api::cm_test
