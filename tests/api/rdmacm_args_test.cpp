// librdmacm's argument checks and the calls that need an engine but no
// traffic, through the built library on an in-process fabric: each errno is
// the one rdma-core 44 (its own checks) or the kernel's rdma_ucm (the
// engine's) gives.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <infiniband/ib.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

#include "tests/api/rdmacm_fabric.h"

namespace {

using namespace ibfab::testing;

class RdmacmArgs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ibfab::testing::use_embedded_cm_fabric(); }
};

// rdma_join_multicast_ex(3): the mask, then the flags, then the address.
TEST_F(RdmacmArgs, JoinMulticastExChecksMaskFlagsAndAddress) {
  Endpoint e("10.1.0.1");
  ASSERT_EQ(e.bind_status, 0);
  sockaddr_in group = ipv4("239.1.1.1");
  sockaddr_un unix_addr{};
  unix_addr.sun_family = AF_UNIX;
  struct Case {
    uint32_t comp_mask;
    uint32_t join_flags;
    sockaddr* addr;
    int err;
  };
  const uint32_t both = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
  const Case cases[] = {
      {RDMA_CM_JOIN_MC_ATTR_RESERVED, 0, sa(group), ENOTSUP},
      {both | RDMA_CM_JOIN_MC_ATTR_RESERVED, 0, sa(group), ENOTSUP},
      {0xFFFFFFFF, 0, sa(group), ENOTSUP},
      {0, 0, sa(group), EINVAL},
      {RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS, 0, sa(group), EINVAL},
      {RDMA_CM_JOIN_MC_ATTR_ADDRESS, 0, sa(group), EINVAL},
      {both, RDMA_MC_JOIN_FLAG_RESERVED, sa(group), EINVAL},
      {both, 0x100, sa(group), EINVAL},
      {both, 0, reinterpret_cast<sockaddr*>(&unix_addr), EINVAL},
      {both, 0, nullptr, EINVAL},
  };
  for (const Case& c : cases) {
    rdma_cm_join_mc_attr_ex attr{c.comp_mask, c.join_flags, c.addr};
    errno = 0;
    EXPECT_EQ(rdma_join_multicast_ex(e.id, &attr, nullptr), -1) << std::hex << c.comp_mask << " " << c.join_flags;
    EXPECT_EQ(errno, c.err) << std::hex << c.comp_mask << " " << c.join_flags;
  }
  EXPECT_FAILS_WITH(rdma_join_multicast(e.id, nullptr, nullptr), EINVAL);
  EXPECT_FAILS_WITH(rdma_join_multicast(e.id, reinterpret_cast<sockaddr*>(&unix_addr), nullptr), EINVAL);
}

// "Before joining a multicast group, the rdma_cm_id must be bound to an
// RDMA device": the kernel refuses an id neither bound nor resolved.
TEST_F(RdmacmArgs, JoinOnAnUnboundIdIsRefused) {
  Endpoint e(nullptr);
  ASSERT_NE(e.id, nullptr);
  sockaddr_in group = ipv4("239.1.1.1");
  rdma_cm_join_mc_attr_ex attr{RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
                               RDMA_MC_JOIN_FLAG_FULLMEMBER, sa(group)};
  EXPECT_FAILS_WITH(rdma_join_multicast_ex(e.id, &attr, nullptr), EINVAL);
  EXPECT_FAILS_WITH(rdma_join_multicast(e.id, sa(group), nullptr), EINVAL);
  // A refused join leaves nothing to leave.
  EXPECT_FAILS_WITH(rdma_leave_multicast(e.id, sa(group)), EADDRNOTAVAIL);
}

TEST_F(RdmacmArgs, AckOfNullIsEinval) {
  EXPECT_FAILS_WITH(rdma_ack_cm_event(nullptr), EINVAL);
}

// The group is matched by memcmp of the whole address, port included.
TEST_F(RdmacmArgs, LeavingAGroupNeverJoinedIsEaddrnotavail) {
  Endpoint e("10.1.0.1");
  ASSERT_EQ(e.bind_status, 0);
  sockaddr_in group = ipv4("239.1.1.2");
  EXPECT_FAILS_WITH(rdma_leave_multicast(e.id, sa(group)), EADDRNOTAVAIL);
  sockaddr_un unix_addr{};
  unix_addr.sun_family = AF_UNIX;
  EXPECT_FAILS_WITH(rdma_leave_multicast(e.id, reinterpret_cast<sockaddr*>(&unix_addr)), EINVAL);
}

TEST_F(RdmacmArgs, NonBlockingChannelGivesEagain) {
  rdma_event_channel* ch = rdma_create_event_channel();
  ASSERT_NE(ch, nullptr);
  ASSERT_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
  rdma_cm_event* event = nullptr;
  EXPECT_FAILS_WITH(rdma_get_cm_event(ch, &event), EAGAIN);
  EXPECT_EQ(event, nullptr);
  pollfd p{ch->fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  EXPECT_FAILS_WITH(rdma_get_cm_event(ch, nullptr), EINVAL);
  rdma_destroy_event_channel(ch);
}

TEST_F(RdmacmArgs, GetaddrinfoPassiveAndActive) {
  rdma_addrinfo* res = cm_addrinfo("10.1.0.1", "7174", true);
  ASSERT_NE(res, nullptr);
  EXPECT_EQ(res->ai_flags, RAI_PASSIVE);
  EXPECT_EQ(res->ai_family, AF_INET);
  EXPECT_EQ(res->ai_qp_type, IBV_QPT_UD);
  EXPECT_EQ(res->ai_port_space, RDMA_PS_UDP);
  ASSERT_EQ(res->ai_src_len, sizeof(sockaddr_in));
  const auto* src = reinterpret_cast<const sockaddr_in*>(res->ai_src_addr);
  EXPECT_EQ(src->sin_port, htons(7174));
  EXPECT_EQ(src->sin_addr.s_addr, ipv4("10.1.0.1").sin_addr.s_addr);
  EXPECT_EQ(res->ai_dst_addr, nullptr);
  EXPECT_EQ(res->ai_route_len, 0u);
  rdma_freeaddrinfo(res);

  res = cm_addrinfo("10.1.0.2", "7471", false, RDMA_PS_TCP);
  ASSERT_NE(res, nullptr);
  EXPECT_EQ(res->ai_flags, 0);
  EXPECT_EQ(res->ai_qp_type, IBV_QPT_RC);
  EXPECT_EQ(res->ai_port_space, RDMA_PS_TCP);
  ASSERT_EQ(res->ai_dst_len, sizeof(sockaddr_in));
  EXPECT_EQ(reinterpret_cast<const sockaddr_in*>(res->ai_dst_addr)->sin_port, htons(7471));
  EXPECT_EQ(res->ai_src_addr, nullptr);
  rdma_freeaddrinfo(res);
}

TEST_F(RdmacmArgs, GetaddrinfoFailures) {
  rdma_addrinfo* res = nullptr;
  EXPECT_FAILS_WITH(rdma_getaddrinfo(nullptr, nullptr, nullptr, &res), EINVAL);
  rdma_addrinfo hints{};
  hints.ai_flags = RAI_NUMERICHOST;
  // libc's failure comes back as its EAI_* code.
  EXPECT_EQ(rdma_getaddrinfo("not-an-address", "7174", &hints, &res), EAI_NONAME);
  EXPECT_EQ(res, nullptr);
}

// An AF_IB answer from a numeric IPv6 address: the GID and a service id
// from the port space and port.
TEST_F(RdmacmArgs, GetaddrinfoAfIb) {
  rdma_addrinfo hints{};
  hints.ai_flags = RAI_NUMERICHOST | RAI_FAMILY;
  hints.ai_family = AF_IB;
  hints.ai_port_space = RDMA_PS_UDP;
  rdma_addrinfo* res = nullptr;
  ASSERT_EQ(rdma_getaddrinfo("fe80::2:c903:0:1", "7174", &hints, &res), 0);
  EXPECT_EQ(res->ai_family, AF_IB);
  ASSERT_EQ(res->ai_dst_len, sizeof(sockaddr_ib));
  const auto* sib = reinterpret_cast<const sockaddr_ib*>(res->ai_dst_addr);
  EXPECT_EQ(sib->sib_family, AF_IB);
  EXPECT_EQ(sib->sib_pkey, htobe16(0xFFFF));
  EXPECT_EQ(be64toh(sib->sib_sid), (uint64_t{RDMA_PS_UDP} << 16) + 7174);
  EXPECT_EQ(be64toh(sib->sib_sid_mask), RDMA_IB_IP_PS_MASK | RDMA_IB_IP_PORT_MASK);
  EXPECT_EQ(sib->sib_addr.sib_raw[0], 0xFE);
  EXPECT_EQ(sib->sib_addr.sib_raw[15], 0x01);
  rdma_freeaddrinfo(res);
}

// rdma-core refuses an address of a family it does not size before asking
// the kernel: EINVAL, not EAFNOSUPPORT. An address no port carries is the
// kernel's EADDRNOTAVAIL.
TEST_F(RdmacmArgs, BindChecksTheAddress) {
  Endpoint e(nullptr);
  ASSERT_NE(e.id, nullptr);
  sockaddr_un unix_addr{};
  unix_addr.sun_family = AF_UNIX;
  EXPECT_FAILS_WITH(rdma_bind_addr(e.id, reinterpret_cast<sockaddr*>(&unix_addr)), EINVAL);
  EXPECT_FAILS_WITH(rdma_bind_addr(e.id, nullptr), EINVAL);
  sockaddr_in nowhere = ipv4("10.9.9.9");
  EXPECT_FAILS_WITH(rdma_bind_addr(e.id, sa(nowhere)), EADDRNOTAVAIL);
}

// After a bind the id shows its device, port, PD, addresses and GIDs.
TEST_F(RdmacmArgs, BindFillsTheId) {
  Endpoint e("10.1.0.1", 7471);
  ASSERT_EQ(e.bind_status, 0);
  rdma_cm_id* id = e.id;
  ASSERT_NE(id->verbs, nullptr);
  EXPECT_NE(id->pd, nullptr);
  EXPECT_EQ(id->port_num, 1);
  EXPECT_EQ(id->route.addr.src_sin.sin_family, AF_INET);
  EXPECT_EQ(id->route.addr.src_sin.sin_addr.s_addr, ipv4("10.1.0.1").sin_addr.s_addr);
  EXPECT_EQ(rdma_get_src_port(id), htons(7471));
  EXPECT_EQ(rdma_get_dst_port(id), 0);
  EXPECT_EQ(rdma_get_local_addr(id), &id->route.addr.src_addr);
  EXPECT_EQ(id->route.addr.addr.ibaddr.pkey, htobe16(0xFFFF));
  ibv_gid gid{};
  ASSERT_EQ(ibv_query_gid(id->verbs, 1, 0, &gid), 0);
  EXPECT_EQ(std::memcmp(gid.raw, id->route.addr.addr.ibaddr.sgid.raw, 16), 0);
  // Another host's address binds to that host's device.
  Endpoint other("10.1.0.2");
  ASSERT_EQ(other.bind_status, 0);
  ASSERT_NE(other.id->verbs, nullptr);
  EXPECT_NE(ibv_get_device_guid(other.id->verbs->device), ibv_get_device_guid(id->verbs->device));
}

TEST_F(RdmacmArgs, SetOption) {
  Endpoint e(nullptr);
  ASSERT_NE(e.id, nullptr);
  uint8_t tos = 0x20;
  int on = 1;
  EXPECT_EQ(rdma_set_option(e.id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos), 0);
  EXPECT_EQ(rdma_set_option(e.id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &on, sizeof on), 0);
  EXPECT_EQ(rdma_set_option(e.id, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY, &on, sizeof on), 0);
  struct Case {
    int level, name;
    void* value;
    size_t len;
    int err;
  };
  const Case cases[] = {
      {RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &on, sizeof on, EINVAL},
      {RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &tos, sizeof tos, EINVAL},
      {RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &tos, sizeof tos, EINVAL},  // a UD id
      {RDMA_OPTION_ID, 99, &on, sizeof on, ENOSYS},
      {RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &on, sizeof on, EINVAL},  // not a whole ibv_path_data
      {RDMA_OPTION_IB, 99, &on, sizeof on, ENOSYS},
      {7, 0, &on, sizeof on, ENOSYS},
      {RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, nullptr, 1, EFAULT},
  };
  for (const Case& c : cases) {
    errno = 0;
    EXPECT_EQ(rdma_set_option(e.id, c.level, c.name, c.value, c.len), -1) << c.level << " " << c.name;
    EXPECT_EQ(errno, c.err) << c.level << " " << c.name;
  }
}

// RDMA_OPTION_IB_PATH in place of rdma_resolve_route (as librdmacm uses
// the routes ibacm gives rdma_getaddrinfo): the primary, bidirectional GMP
// path among those given becomes the route as it is (the SA is not asked:
// LID 0x77 is no port of this fabric), and ROUTE_RESOLVED follows. Before
// the address is resolved, or with no such path given: EINVAL.
TEST_F(RdmacmArgs, AnIbPathGivenIsTheRoute) {
  Endpoint e("10.1.0.1");
  ASSERT_EQ(e.bind_status, 0);
  ibv_path_data paths[2]{};
  paths[0].flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_ALTERNATE | IBV_PATH_FLAG_BIDIRECTIONAL;
  paths[1].flags = IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY | IBV_PATH_FLAG_BIDIRECTIONAL;
  ibv_path_record& p = paths[1].path;
  p.dgid.raw[0] = 0xfe;
  p.dgid.raw[15] = 0x42;
  p.dlid = htobe16(0x77);
  p.slid = htobe16(0x1);
  p.pkey = htobe16(0xffff);
  p.qosclass_sl = htobe16(5);
  p.mtu = (2 << 6) | IBV_MTU_2048;
  p.rate = (2 << 6) | 7;
  // The address is not resolved yet.
  EXPECT_FAILS_WITH(rdma_set_option(e.id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, paths, sizeof paths), EINVAL);
  sockaddr_in dst = ipv4("10.1.0.2");
  ASSERT_EQ(rdma_resolve_addr(e.id, nullptr, sa(dst), 2000), 0);
  expect_event(e.ch, RDMA_CM_EVENT_ADDR_RESOLVED);
  // An alternate path only.
  EXPECT_FAILS_WITH(rdma_set_option(e.id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, paths, sizeof paths[0]), EINVAL);
  ASSERT_EQ(rdma_set_option(e.id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, paths, sizeof paths), 0);
  expect_event(e.ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
  ASSERT_EQ(e.id->route.num_paths, 1);
  const ibv_sa_path_rec& r = e.id->route.path_rec[0];
  EXPECT_EQ(be16toh(r.dlid), 0x77);
  EXPECT_EQ(r.sl, 5);
  EXPECT_EQ(r.mtu, IBV_MTU_2048);
  EXPECT_EQ(r.rate, 7);
  EXPECT_EQ(r.dgid.raw[15], 0x42);
  // The route is resolved already.
  EXPECT_FAILS_WITH(rdma_set_option(e.id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, paths, sizeof paths), EINVAL);
}

TEST_F(RdmacmArgs, GetDevices) {
  int n = 0;
  ibv_context** list = rdma_get_devices(&n);
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(n, 8);  // fat-tree:2:4 has eight hosts
  for (int i = 0; i < n; ++i) EXPECT_NE(list[i], nullptr);
  EXPECT_EQ(list[n], nullptr);
  rdma_free_devices(list);
}

// An id made with no channel waits in each call for the call's event.
TEST_F(RdmacmArgs, SynchronousIdWaitsForItsEvents) {
  rdma_cm_id* id = nullptr;
  ASSERT_EQ(rdma_create_id(nullptr, &id, nullptr, RDMA_PS_UDP), 0);
  ASSERT_NE(id->channel, nullptr);
  sockaddr_in src = ipv4("10.1.0.1");
  sockaddr_in dst = ipv4("10.1.0.2", 7174);
  ASSERT_EQ(rdma_resolve_addr(id, sa(src), sa(dst), 2000), 0);
  ASSERT_NE(id->event, nullptr);
  EXPECT_EQ(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
  EXPECT_NE(id->verbs, nullptr);
  EXPECT_EQ(rdma_get_dst_port(id), htons(7174));
  ASSERT_EQ(rdma_resolve_route(id, 2000), 0);
  EXPECT_EQ(id->event->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
  EXPECT_EQ(id->route.num_paths, 1);
  EXPECT_EQ(rdma_destroy_id(id), 0);  // acks the last event itself
}

// rdma_migrate_id: the id's next events come on the new channel.
TEST_F(RdmacmArgs, MigratedIdReportsOnItsNewChannel) {
  Endpoint e("10.1.0.1");
  ASSERT_EQ(e.bind_status, 0);
  rdma_event_channel* other = rdma_create_event_channel();
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(rdma_migrate_id(e.id, other), 0);
  EXPECT_EQ(e.id->channel, other);
  sockaddr_in dst = ipv4("10.1.0.2");
  ASSERT_EQ(rdma_resolve_addr(e.id, nullptr, sa(dst), 2000), 0);
  expect_event(other, RDMA_CM_EVENT_ADDR_RESOLVED);
  pollfd p{e.ch->fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);
  ASSERT_EQ(rdma_migrate_id(e.id, e.ch), 0);
  rdma_destroy_event_channel(other);
}

}  // namespace
