#include "api/server/kernel/rdma_cm_addressing.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ibfab::api::cm {
namespace {

const sockaddr_in& v4(const sockaddr_storage& a) { return reinterpret_cast<const sockaddr_in&>(a); }
const sockaddr_in6& v6(const sockaddr_storage& a) { return reinterpret_cast<const sockaddr_in6&>(a); }
const SockaddrIb& ib(const sockaddr_storage& a) { return reinterpret_cast<const SockaddrIb&>(a); }

// An IPoIB multicast GID's first six bytes: ff1S:VV1b:PPPP, with the
// broadcast group's scope S and P_Key P, VV 0x40 (IPv4) or 0x60 (IPv6).
void ipoib_prefix(wire::Gid& g, uint8_t version, const wire::Gid& broadcast) {
  g.raw[0] = 0xFF;
  g.raw[1] = static_cast<uint8_t>(0x10 | (broadcast.raw[1] & 0xF));
  g.raw[2] = version;
  g.raw[3] = 0x1B;
  g.raw[4] = broadcast.raw[4];
  g.raw[5] = broadcast.raw[5];
}

}  // namespace

std::size_t address_size(const sockaddr_storage& a) {
  switch (a.ss_family) {
    case AF_INET: return sizeof(sockaddr_in);
    case AF_INET6: return sizeof(sockaddr_in6);
    case kAfIb: return sizeof(SockaddrIb);
    default: return 0;
  }
}

bool is_any(const sockaddr_storage& a) {
  switch (a.ss_family) {
    case AF_INET: return v4(a).sin_addr.s_addr == htonl(INADDR_ANY);
    case AF_INET6: return IN6_IS_ADDR_UNSPECIFIED(&v6(a).sin6_addr);
    case kAfIb: return std::all_of(std::begin(ib(a).sib_addr), std::end(ib(a).sib_addr), [](uint8_t b) { return b == 0; });
    default: return false;
  }
}

bool is_multicast(const sockaddr_storage& a) {
  switch (a.ss_family) {
    case AF_INET: return IN_MULTICAST(ntohl(v4(a).sin_addr.s_addr));
    case AF_INET6: return IN6_IS_ADDR_MULTICAST(&v6(a).sin6_addr);
    case kAfIb: return ib(a).sib_addr[0] == 0xFF;
    default: return false;
  }
}

uint16_t port_of(const sockaddr_storage& a) {
  switch (a.ss_family) {
    case AF_INET: return ntohs(v4(a).sin_port);
    case AF_INET6: return ntohs(v6(a).sin6_port);
    case kAfIb: return static_cast<uint16_t>(be64toh(ib(a).sib_sid));
    default: return 0;
  }
}

void set_port(sockaddr_storage& a, uint16_t port) {
  switch (a.ss_family) {
    case AF_INET: reinterpret_cast<sockaddr_in&>(a).sin_port = htons(port); break;
    case AF_INET6: reinterpret_cast<sockaddr_in6&>(a).sin6_port = htons(port); break;
    case kAfIb: {
      auto& s = reinterpret_cast<SockaddrIb&>(a);
      s.sib_sid = htobe64((be64toh(s.sib_sid) & ~uint64_t{0xFFFF}) | port);
      break;
    }
    default: break;
  }
}

void set_host(sockaddr_storage& a, uint32_t ipv4, const std::array<uint8_t, 16>& ipv6) {
  if (a.ss_family == AF_INET) reinterpret_cast<sockaddr_in&>(a).sin_addr.s_addr = htonl(ipv4);
  else if (a.ss_family == AF_INET6) std::memcpy(reinterpret_cast<sockaddr_in6&>(a).sin6_addr.s6_addr, ipv6.data(), 16);
}

wire::Gid mgid_for(const sockaddr_storage& addr, uint16_t ps, const wire::Gid& broadcast) {
  wire::Gid g;
  if (is_any(addr)) return g;
  if (addr.ss_family == kAfIb) {
    std::memcpy(g.raw.data(), ib(addr).sib_addr, 16);
    return g;
  }
  if (addr.ss_family == AF_INET6) {
    const uint8_t* a = v6(addr).sin6_addr.s6_addr;
    uint32_t first;
    std::memcpy(&first, a, 4);
    if ((ntohl(first) & 0xFFF0FFFF) == 0xFF10A01B) {  // an SA-assigned MGID, used as it is
      std::memcpy(g.raw.data(), a, 16);
      return g;
    }
    // ipv6_ib_mc_map: ff1S:601b:PPPP then the address's bytes 6..15.
    ipoib_prefix(g, 0x60, broadcast);
    std::memcpy(&g.raw[6], a + 6, 10);
  } else {
    // ip_ib_mc_map: ff1S:401b:PPPP::, then the address's low 28 bits.
    const uint32_t ip = ntohl(v4(addr).sin_addr.s_addr);
    ipoib_prefix(g, 0x40, broadcast);
    g.raw[12] = static_cast<uint8_t>((ip >> 24) & 0x0F);
    g.raw[13] = static_cast<uint8_t>(ip >> 16);
    g.raw[14] = static_cast<uint8_t>(ip >> 8);
    g.raw[15] = static_cast<uint8_t>(ip);
  }
  if (ps == kPsUdp) g.raw[3] = 0x01;  // the RDMA CM signature
  return g;
}

void pack_header(std::span<uint8_t, kHeaderSize> out, const sockaddr_storage& src, const sockaddr_storage& dst) {
  std::fill(out.begin(), out.end(), 0);
  out[0] = 0;  // cma_version
  const uint16_t port = htons(port_of(src));
  std::memcpy(&out[2], &port, 2);
  if (src.ss_family == AF_INET6) {
    out[1] = 6 << 4;
    std::memcpy(&out[4], v6(src).sin6_addr.s6_addr, 16);
    std::memcpy(&out[20], v6(dst).sin6_addr.s6_addr, 16);
  } else {
    out[1] = 4 << 4;
    std::memcpy(&out[16], &v4(src).sin_addr, 4);
    std::memcpy(&out[32], &v4(dst).sin_addr, 4);
  }
}

std::optional<HeaderAddresses> unpack_header(std::span<const uint8_t, kHeaderSize> in) {
  if (in[0] != 0) return std::nullopt;
  HeaderAddresses h;
  uint16_t port;
  std::memcpy(&port, &in[2], 2);
  if (in[1] >> 4 == 4) {
    auto& s = reinterpret_cast<sockaddr_in&>(h.src);
    auto& d = reinterpret_cast<sockaddr_in&>(h.dst);
    s.sin_family = d.sin_family = AF_INET;
    s.sin_port = port;
    std::memcpy(&s.sin_addr, &in[16], 4);
    std::memcpy(&d.sin_addr, &in[32], 4);
    return h;
  }
  if (in[1] >> 4 == 6) {
    auto& s = reinterpret_cast<sockaddr_in6&>(h.src);
    auto& d = reinterpret_cast<sockaddr_in6&>(h.dst);
    s.sin6_family = d.sin6_family = AF_INET6;
    s.sin6_port = port;
    std::memcpy(s.sin6_addr.s6_addr, &in[4], 16);
    std::memcpy(d.sin6_addr.s6_addr, &in[20], 16);
    return h;
  }
  return std::nullopt;
}

int64_t port_address(const topo::AddressPlan& plan, uint32_t node, uint32_t port, CmPortAddress& out) {
  if (port == 0 || port > 0xFF) return -ENODEV;
  const topo::PortAddress* pa = plan.of(node, static_cast<uint8_t>(port));
  if (!pa) return -ENODEV;
  out.ipv4 = pa->ipv4;
  out.prefix4 = pa->prefix4;
  out.prefix6 = pa->prefix6;
  std::memcpy(out.ipv6, pa->ipv6.data(), sizeof out.ipv6);
  sockaddr_in group{};
  group.sin_family = AF_INET;
  group.sin_addr.s_addr = htonl(0xE0000001);  // 224.0.0.1: any multicast destination routes alike
  out.multicast_route = plan.route(node, reinterpret_cast<const sockaddr*>(&group)) == port;
  return 0;
}

}  // namespace ibfab::api::cm
