// rdma_cm's address resolution (api/server/kernel/rdma_cm.h): multicast
// destinations through the host's routing table, unicast ones that time
// out or have no route, and the addresses a port shows (the plan's, with
// its overrides).
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include <cerrno>
#include <cstring>

#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

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
}  // namespace ibfab::api::cm_test
