// rdma_cm's addressing rules (api/server/kernel/rdma_cm_addressing.h)
// against the kernel's cma_set_mgid, ip_ib_mc_map and ipv6_ib_mc_map,
// worked by hand, and the SIDR header's round trip.
#include <gtest/gtest.h>
#include <arpa/inet.h>

#include <cstring>

#include "api/server/kernel/rdma_cm_addressing.h"
#include "sm/sa/mcast_groups.h"

namespace ibfab::api::cm {
namespace {

sockaddr_storage v4(const char* ip, uint16_t port = 0) {
  sockaddr_storage s{};
  auto& a = reinterpret_cast<sockaddr_in&>(s);
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ip, &a.sin_addr);
  return s;
}

sockaddr_storage v6(const char* ip, uint16_t port = 0) {
  sockaddr_storage s{};
  auto& a = reinterpret_cast<sockaddr_in6&>(s);
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(port);
  ::inet_pton(AF_INET6, ip, &a.sin6_addr);
  return s;
}

const wire::Gid kBroadcast = sm::McastGroups::ipoib_broadcast_mgid(2, 0xFFFF);

TEST(CmAddressing, Ipv4MapsToTheIpoibMgidWithTheRdmaCmSignatureUnderUdp) {
  // 230.1.2.3: the low 28 bits after ff12:401b:ffff::; byte 3 0x01 under RDMA_PS_UDP.
  EXPECT_EQ(mgid_for(v4("230.1.2.3"), kPsUdp, kBroadcast).str(), "ff12:4001:ffff::601:203");
  EXPECT_EQ(mgid_for(v4("230.1.2.3"), kPsIpoib, kBroadcast).str(), "ff12:401b:ffff::601:203");
  EXPECT_EQ(mgid_for(v4("239.1.1.1"), kPsUdp, kBroadcast).str(), "ff12:4001:ffff::f01:101");
  // The scope and P_Key come from the broadcast group.
  const wire::Gid other = sm::McastGroups::ipoib_broadcast_mgid(5, 0x8001);
  EXPECT_EQ(mgid_for(v4("239.1.1.1"), kPsIpoib, other).str(), "ff15:401b:8001::f01:101");
}

TEST(CmAddressing, Ipv6MapsItsLastTenBytes) {
  EXPECT_EQ(mgid_for(v6("ff0e::1:2:3:4"), kPsIpoib, kBroadcast).str(), "ff12:601b:ffff:0:1:2:3:4");
  EXPECT_EQ(mgid_for(v6("ff0e::1:2:3:4"), kPsUdp, kBroadcast).str(), "ff12:6001:ffff:0:1:2:3:4");
}

TEST(CmAddressing, SaAssignedAfIbAndWildcardAddressesAreNotMapped) {
  EXPECT_EQ(mgid_for(v6("ff12:a01b:ffff::1:0:0:7"), kPsUdp, kBroadcast).str(), "ff12:a01b:ffff:0:1::7");
  sockaddr_storage ib{};
  auto& sib = reinterpret_cast<SockaddrIb&>(ib);
  sib.sib_family = kAfIb;
  ::inet_pton(AF_INET6, "ff0e::1234", sib.sib_addr);
  EXPECT_EQ(mgid_for(ib, kPsUdp, kBroadcast).str(), "ff0e::1234");
  EXPECT_TRUE(mgid_for(v4("0.0.0.0"), kPsUdp, kBroadcast).is_zero());  // the SA picks one
}

TEST(CmAddressing, FamiliesSizesPortsAndServiceIds) {
  EXPECT_EQ(address_size(v4("10.1.0.1")), sizeof(sockaddr_in));
  EXPECT_EQ(address_size(v6("fd00::1")), sizeof(sockaddr_in6));
  sockaddr_storage unix_family{};
  unix_family.ss_family = AF_UNIX;
  EXPECT_EQ(address_size(unix_family), 0u);
  EXPECT_TRUE(is_multicast(v4("239.1.1.1")));
  EXPECT_FALSE(is_multicast(v4("10.1.0.1")));
  sockaddr_storage a = v4("10.1.0.1", 7174);
  EXPECT_EQ(port_of(a), 7174);
  set_port(a, 9);
  EXPECT_EQ(port_of(a), 9);
  EXPECT_EQ(service_id(kPsUdp, 7174), 0x0000000001111C06ull);
  // set_host keeps the family and the port.
  set_host(a, 0x0A010002, {});
  EXPECT_EQ(ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr), 0x0A010002u);
  EXPECT_EQ(port_of(a), 9);
}

TEST(CmAddressing, SidrHeaderRoundTrip) {
  std::array<uint8_t, kHeaderSize> bytes{};
  pack_header(bytes, v4("10.1.0.1", 40000), v4("10.1.0.2", 7174));
  EXPECT_EQ(bytes[0], 0);        // cma_version
  EXPECT_EQ(bytes[1], 4 << 4);   // IPv4
  EXPECT_EQ(bytes[2] << 8 | bytes[3], 40000);  // the source port
  const auto h = unpack_header(bytes);
  ASSERT_TRUE(h);
  const sockaddr_storage src = v4("10.1.0.1");
  EXPECT_EQ(std::memcmp(&reinterpret_cast<const sockaddr_in&>(h->src).sin_addr,
                        &reinterpret_cast<const sockaddr_in&>(src).sin_addr, 4), 0);
  EXPECT_EQ(port_of(h->src), 40000);
  pack_header(bytes, v6("fd00::1"), v6("fd00::2"));
  ASSERT_TRUE(unpack_header(bytes));
  EXPECT_EQ(unpack_header(bytes)->dst.ss_family, AF_INET6);
  bytes[1] = 5 << 4;  // no such IP version
  EXPECT_FALSE(unpack_header(bytes));
}

}  // namespace
}  // namespace ibfab::api::cm
