#include "tools/passthrough/group_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace ibfab::passthrough {

std::optional<Family> parse_family(const std::string& text) {
  if (text == "ipv4") return Family::Ipv4;
  if (text == "ipv6") return Family::Ipv6;
  return std::nullopt;
}

const char* to_string(Family f) { return f == Family::Ipv4 ? "ipv4" : "ipv6"; }

sockaddr_storage group_address(const std::string& mgid, Family f) {
  sockaddr_storage a{};
  in6_addr gid{};
  if (mgid != "0") inet_pton(AF_INET6, mgid.c_str(), &gid);
  if (f == Family::Ipv6) {
    auto& s = reinterpret_cast<sockaddr_in6&>(a);
    s.sin6_family = AF_INET6;
    s.sin6_addr = gid;
  } else {
    auto& s = reinterpret_cast<sockaddr_in&>(a);
    s.sin_family = AF_INET;
    if (mgid != "0") {
      const uint8_t* g = gid.s6_addr;
      s.sin_addr.s_addr = htonl(uint32_t{239} << 24 | uint32_t{g[13]} << 16 | uint32_t{g[14]} << 8 | g[15]);
    }
  }
  return a;
}

in6_addr rdma_cm_mgid(const sockaddr_storage& a, bool infiniband) {
  in6_addr g{};
  if (a.ss_family == AF_INET6) {
    g = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    if (infiniband) {  // ff12:601b:PPPP, then the address's last 10 bytes
      static constexpr uint8_t kHead[6] = {0xff, 0x12, 0x60, 0x01, 0xff, 0xff};
      std::memcpy(g.s6_addr, kHead, sizeof kHead);
    }
    return g;
  }
  const uint32_t v4 = ntohl(reinterpret_cast<const sockaddr_in&>(a).sin_addr.s_addr);
  if (infiniband) {
    static constexpr uint8_t kHead[6] = {0xff, 0x12, 0x40, 0x01, 0xff, 0xff};
    std::memcpy(g.s6_addr, kHead, sizeof kHead);
    g.s6_addr[12] = static_cast<uint8_t>(v4 >> 24 & 0x0f);
  } else {
    g.s6_addr[10] = g.s6_addr[11] = 0xff;
    g.s6_addr[12] = static_cast<uint8_t>(v4 >> 24);
  }
  g.s6_addr[13] = static_cast<uint8_t>(v4 >> 16);
  g.s6_addr[14] = static_cast<uint8_t>(v4 >> 8);
  g.s6_addr[15] = static_cast<uint8_t>(v4);
  return g;
}

std::string address_text(const sockaddr_storage& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, buf, sizeof buf);
  else
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, buf, sizeof buf);
  return buf;
}

}  // namespace ibfab::passthrough
