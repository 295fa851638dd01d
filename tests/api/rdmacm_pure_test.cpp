// librdmacm's calls that do not need the fabric (api/rdmacm): rdma_event_str,
// the rsocket API (not provided: ENOSYS) and the connection manager with no
// engine to reach (no IBFAB_NODE or IBFAB_TOPOLOGY), which fails as
// rdma-core 44 fails on a host without the kernel's rdma_cm. Checked against
// rdma-core's librdmacm.so.1 where it is installed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <rdma/rsocket.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tests/api/system_library.h"

namespace {

// rdma-core's librdmacm.so.1 as an oracle, loaded privately next to ours.
class RdmacmOracle : public ibfab::testing::SystemLibrary {
 protected:
  RdmacmOracle() : SystemLibrary(IBFAB_SYSTEM_RDMACM) {}
};

// Every enumerator of rdma_cm_event_type and the unknown values around them.
constexpr int kFirstEvent = -3, kLastEvent = 40;

// --- rdma_event_str ---------------------------------------------------------

TEST(RdmacmStrings, EventNamesAreTheEnumerators) {
  EXPECT_STREQ(rdma_event_str(RDMA_CM_EVENT_ADDR_RESOLVED), "RDMA_CM_EVENT_ADDR_RESOLVED");
  EXPECT_STREQ(rdma_event_str(RDMA_CM_EVENT_MULTICAST_JOIN), "RDMA_CM_EVENT_MULTICAST_JOIN");
  EXPECT_STREQ(rdma_event_str(RDMA_CM_EVENT_TIMEWAIT_EXIT), "RDMA_CM_EVENT_TIMEWAIT_EXIT");
  EXPECT_STREQ(rdma_event_str(static_cast<rdma_cm_event_type>(RDMA_CM_EVENT_TIMEWAIT_EXIT + 1)), "UNKNOWN EVENT");
  EXPECT_STREQ(rdma_event_str(static_cast<rdma_cm_event_type>(-1)), "UNKNOWN EVENT");
}

TEST_F(RdmacmOracle, EventStrMatchesRdmaCore) {
  auto* original = REAL(rdma_event_str);
  ASSERT_NE(original, nullptr);
  for (int value = kFirstEvent; value <= kLastEvent; ++value) {
    const auto event = static_cast<rdma_cm_event_type>(value);
    EXPECT_STREQ(rdma_event_str(event), original(event)) << value;
  }
}

// --- rsockets ---------------------------------------------------------------

// Each call returns -1 in its own type and sets errno to ENOSYS.
TEST(RdmacmRsocket, EveryCallFailsWithEnosys) {
  char buf[8] = {};
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  sockaddr_storage addr{};
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  socklen_t len = sizeof addr;
  pollfd pfd{0, POLLIN, 0};
  int opt = 0;
  socklen_t optlen = sizeof opt;

  const std::vector<std::pair<const char*, std::function<long long()>>> calls = {
      {"rsocket", [&] { return rsocket(AF_INET, SOCK_STREAM, 0); }},
      {"rbind", [&] { return rbind(3, sa, len); }},
      {"rlisten", [&] { return rlisten(3, 1); }},
      {"raccept", [&] { return raccept(3, sa, &len); }},
      {"rconnect", [&] { return rconnect(3, sa, len); }},
      {"rshutdown", [&] { return rshutdown(3, SHUT_RDWR); }},
      {"rclose", [&] { return rclose(3); }},
      {"rrecv", [&] { return rrecv(3, buf, sizeof buf, 0); }},
      {"rrecvfrom", [&] { return rrecvfrom(3, buf, sizeof buf, 0, sa, &len); }},
      {"rrecvmsg", [&] { return rrecvmsg(3, &msg, 0); }},
      {"rsend", [&] { return rsend(3, buf, sizeof buf, 0); }},
      {"rsendto", [&] { return rsendto(3, buf, sizeof buf, 0, sa, len); }},
      {"rsendmsg", [&] { return rsendmsg(3, &msg, 0); }},
      {"rread", [&] { return rread(3, buf, sizeof buf); }},
      {"rreadv", [&] { return rreadv(3, &iov, 1); }},
      {"rwrite", [&] { return rwrite(3, buf, sizeof buf); }},
      {"rwritev", [&] { return rwritev(3, &iov, 1); }},
      {"rpoll", [&] { return rpoll(&pfd, 1, 0); }},
      {"rselect", [&] { return rselect(0, nullptr, nullptr, nullptr, nullptr); }},
      {"rgetpeername", [&] { return rgetpeername(3, sa, &len); }},
      {"rgetsockname", [&] { return rgetsockname(3, sa, &len); }},
      {"rsetsockopt", [&] { return rsetsockopt(3, SOL_RDMA, RDMA_SQSIZE, &opt, optlen); }},
      {"rgetsockopt", [&] { return rgetsockopt(3, SOL_RDMA, RDMA_SQSIZE, &opt, &optlen); }},
      {"rfcntl", [&] { return rfcntl(3, F_GETFL); }},
      {"riomap", [&] { return riomap(3, buf, sizeof buf, 0, 0, -1); }},
      {"riounmap", [&] { return riounmap(3, buf, sizeof buf); }},
  };
  for (const auto& [name, call] : calls) {
    errno = 0;
    EXPECT_EQ(call(), -1) << name;
    EXPECT_EQ(errno, ENOSYS) << name;
  }
  errno = 0;
  EXPECT_EQ(riowrite(3, buf, sizeof buf, 0, 0), static_cast<std::size_t>(-1));
  EXPECT_EQ(errno, ENOSYS);
}

// --- The connection manager without an engine --------------------------------

TEST(RdmacmNoEngine, NoDevicesAndNoEventChannel) {
  int num = 7;
  errno = 0;
  EXPECT_EQ(rdma_get_devices(&num), nullptr);
  EXPECT_EQ(errno, ENODEV);
  EXPECT_EQ(num, 0);
  errno = 0;
  EXPECT_EQ(rdma_get_devices(nullptr), nullptr);
  EXPECT_EQ(errno, ENODEV);

  errno = 0;
  EXPECT_EQ(rdma_create_event_channel(), nullptr);
  EXPECT_EQ(errno, ENODEV);
}

TEST(RdmacmNoEngine, ReleasingNothingIsHarmless) {
  rdma_free_devices(nullptr);
  rdma_destroy_event_channel(nullptr);
  rdma_freeaddrinfo(nullptr);
  errno = 0;
  EXPECT_EQ(rdma_ack_cm_event(nullptr), -1);
  EXPECT_EQ(errno, EINVAL);
}

// Every int call fails with -1 and ENODEV, before reading its arguments.
TEST(RdmacmNoEngine, EveryIntCallFailsWithEnodev) {
  rdma_cm_id* id = nullptr;
  rdma_cm_event* event = nullptr;
  rdma_addrinfo* info = nullptr;
  sockaddr_storage addr{};
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  ibv_qp_attr qp_attr{};
  int mask = 0;
  ibv_ece ece{};
  rdma_cm_join_mc_attr_ex mc{};

  const std::vector<std::pair<const char*, std::function<int()>>> calls = {
      {"rdma_create_id", [&] { return rdma_create_id(nullptr, &id, nullptr, RDMA_PS_UDP); }},
      {"rdma_create_ep", [&] { return rdma_create_ep(&id, nullptr, nullptr, nullptr); }},
      {"rdma_destroy_id", [&] { return rdma_destroy_id(nullptr); }},
      {"rdma_migrate_id", [&] { return rdma_migrate_id(nullptr, nullptr); }},
      {"rdma_set_option", [&] { return rdma_set_option(nullptr, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &mask, 1); }},
      {"rdma_get_cm_event", [&] { return rdma_get_cm_event(nullptr, &event); }},
      {"rdma_getaddrinfo", [&] { return rdma_getaddrinfo("127.0.0.1", "7471", nullptr, &info); }},
      {"rdma_bind_addr", [&] { return rdma_bind_addr(nullptr, sa); }},
      {"rdma_resolve_addr", [&] { return rdma_resolve_addr(nullptr, nullptr, sa, 2000); }},
      {"rdma_resolve_route", [&] { return rdma_resolve_route(nullptr, 2000); }},
      {"rdma_create_qp", [&] { return rdma_create_qp(nullptr, nullptr, nullptr); }},
      {"rdma_create_qp_ex", [&] { return rdma_create_qp_ex(nullptr, nullptr); }},
      {"rdma_init_qp_attr", [&] { return rdma_init_qp_attr(nullptr, &qp_attr, &mask); }},
      {"rdma_create_srq", [&] { return rdma_create_srq(nullptr, nullptr, nullptr); }},
      {"rdma_create_srq_ex", [&] { return rdma_create_srq_ex(nullptr, nullptr); }},
      {"rdma_connect", [&] { return rdma_connect(nullptr, nullptr); }},
      {"rdma_establish", [&] { return rdma_establish(nullptr); }},
      {"rdma_listen", [&] { return rdma_listen(nullptr, 1); }},
      {"rdma_get_request", [&] { return rdma_get_request(nullptr, &id); }},
      {"rdma_accept", [&] { return rdma_accept(nullptr, nullptr); }},
      {"rdma_reject", [&] { return rdma_reject(nullptr, nullptr, 0); }},
      {"rdma_reject_ece", [&] { return rdma_reject_ece(nullptr, nullptr, 0); }},
      {"rdma_notify", [&] { return rdma_notify(nullptr, IBV_EVENT_COMM_EST); }},
      {"rdma_disconnect", [&] { return rdma_disconnect(nullptr); }},
      {"rdma_set_local_ece", [&] { return rdma_set_local_ece(nullptr, &ece); }},
      {"rdma_get_remote_ece", [&] { return rdma_get_remote_ece(nullptr, &ece); }},
      {"rdma_join_multicast", [&] { return rdma_join_multicast(nullptr, sa, nullptr); }},
      {"rdma_join_multicast_ex", [&] { return rdma_join_multicast_ex(nullptr, &mc, nullptr); }},
      {"rdma_leave_multicast", [&] { return rdma_leave_multicast(nullptr, sa); }},
  };
  for (const auto& [name, call] : calls) {
    errno = 0;
    EXPECT_EQ(call(), -1) << name;
    EXPECT_EQ(errno, ENODEV) << name;
  }
  EXPECT_EQ(id, nullptr);
  EXPECT_EQ(event, nullptr);
  EXPECT_EQ(info, nullptr);
}

TEST(RdmacmNoEngine, VoidCallsAndPortsAreHarmless) {
  rdma_destroy_ep(nullptr);
  rdma_destroy_qp(nullptr);
  rdma_destroy_srq(nullptr);
  EXPECT_EQ(rdma_get_src_port(nullptr), 0);
  EXPECT_EQ(rdma_get_dst_port(nullptr), 0);
}

// On a host without the kernel's rdma_cm, rdma-core fails the same way.
TEST_F(RdmacmOracle, WithoutRdmaCmRdmaCoreFailsTheSameWay) {
  if (access("/dev/infiniband/rdma_cm", F_OK) == 0) GTEST_SKIP() << "this host has the kernel's rdma_cm";
  int num = 7;
  errno = 0;
  EXPECT_EQ(REAL(rdma_get_devices)(&num), nullptr);
  EXPECT_EQ(errno, ENODEV);
  EXPECT_EQ(num, 0);
  errno = 0;
  EXPECT_EQ(REAL(rdma_create_event_channel)(), nullptr);
  EXPECT_EQ(errno, ENODEV);
  errno = 0;
  EXPECT_EQ(REAL(rdma_ack_cm_event)(nullptr), -1);
  EXPECT_EQ(errno, EINVAL);
}

}  // namespace
