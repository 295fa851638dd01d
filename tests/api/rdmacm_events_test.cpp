// Event bookkeeping as the kernel's rdma_ucm keeps it, through the built
// library on an in-process fabric: the events of an id still unread when it
// is destroyed are dropped (and rdma_destroy_id does not wait for them);
// those still unread when it migrates follow it to its new channel.
#include <gtest/gtest.h>
#include <poll.h>
#include <rdma/rdma_cma.h>

#include "tests/api/rdmacm_fabric.h"

namespace {

using namespace ibfab::testing;

class RdmacmEvents : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_cm_fabric(); }

  // Resolves 10.1.0.2 from `id` and waits until the channel has its event
  // (unread).
  static void resolve_unread(rdma_cm_id* id) {
    sockaddr_in dst = ipv4("10.1.0.2");
    ASSERT_EQ(rdma_resolve_addr(id, nullptr, sa(dst), 2000), 0);
    pollfd p{id->channel->fd, POLLIN, 0};
    ASSERT_EQ(poll(&p, 1, 5000), 1);
  }
};

TEST_F(RdmacmEvents, UnreadEventsOfADestroyedIdAreDropped) {
  rdma_event_channel* ch = rdma_create_event_channel();
  ASSERT_NE(ch, nullptr);
  rdma_cm_id* gone = nullptr;
  rdma_cm_id* kept = nullptr;
  ASSERT_EQ(rdma_create_id(ch, &gone, nullptr, RDMA_PS_UDP), 0);
  ASSERT_EQ(rdma_create_id(ch, &kept, nullptr, RDMA_PS_UDP), 0);
  sockaddr_in a = ipv4("10.1.0.1");
  ASSERT_EQ(rdma_bind_addr(gone, sa(a)), 0);
  ASSERT_EQ(rdma_bind_addr(kept, sa(a)), 0);
  resolve_unread(gone);
  EXPECT_EQ(rdma_destroy_id(gone), 0);  // returns: nothing was handed out
  resolve_unread(kept);
  rdma_cm_event* e = next_event(ch);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->id, kept);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_ADDR_RESOLVED);
  rdma_ack_cm_event(e);
  pollfd p{ch->fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  EXPECT_EQ(rdma_destroy_id(kept), 0);
  rdma_destroy_event_channel(ch);
}

TEST_F(RdmacmEvents, UnreadEventsFollowAMigratedId) {
  Endpoint moving("10.1.0.1"), staying("10.1.0.1");
  ASSERT_EQ(moving.bind_status, 0);
  ASSERT_EQ(staying.bind_status, 0);
  ASSERT_EQ(rdma_migrate_id(staying.id, moving.ch), 0);  // two ids on one channel
  resolve_unread(staying.id);
  resolve_unread(moving.id);
  ASSERT_EQ(rdma_migrate_id(moving.id, staying.ch), 0);
  rdma_cm_event* e = next_event(staying.ch);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->id, moving.id);
  rdma_ack_cm_event(e);
  e = next_event(moving.ch);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->id, staying.id);
  rdma_ack_cm_event(e);
  // Each endpoint's id back on its own channel before the endpoints go.
  ASSERT_EQ(rdma_migrate_id(staying.id, staying.ch), 0);
  ASSERT_EQ(rdma_migrate_id(moving.id, moving.ch), 0);
}

// An event handed out and not acked keeps rdma_migrate_id waiting, as it
// keeps rdma_destroy_id waiting (rdmacm_mcast_test).
TEST_F(RdmacmEvents, MigrateWaitsForHandedOutEvents) {
  Endpoint e("10.1.0.1");
  ASSERT_EQ(e.bind_status, 0);
  resolve_unread(e.id);
  rdma_cm_event* ev = next_event(e.ch);
  ASSERT_NE(ev, nullptr);
  rdma_event_channel* other = rdma_create_event_channel();
  ASSERT_NE(other, nullptr);
  expect_waits_for([&] { return rdma_migrate_id(e.id, other); }, [&] { rdma_ack_cm_event(ev); });
  ASSERT_EQ(rdma_migrate_id(e.id, e.ch), 0);
  rdma_destroy_event_channel(other);
}

}  // namespace
