#pragma once
// The address rdma_cm is given for a scenario's MGID. RoCEv2 joins only
// IPv4 groups (cma.c's cma_iboe_join_multicast: ENOTSUPP for AF_INET6), so
// IPv4 is the default; InfiniBand takes both.
#include <netinet/in.h>
#include <sys/socket.h>

#include <optional>
#include <string>

namespace ibfab::passthrough {

enum class Family { Ipv4, Ipv6 };

std::optional<Family> parse_family(const std::string& text);  // "ipv4", "ipv6"
const char* to_string(Family f);

// "0" (an MGID the SA assigns): the unspecified address. Otherwise, Ipv6:
// the MGID as an IPv6 address; Ipv4: 239.X.Y.Z, X.Y.Z the MGID's last three
// bytes. `mgid` is one the scenario loader accepted.
sockaddr_storage group_address(const std::string& mgid, Family f);

// The MGID rdma_cm joins for group address `a` on a UDP port space id:
// on InfiniBand the kernel's IP mapping (IPv4 ff12:401b:PPPP:: and the
// address's low 28 bits, IPv6 ff12:601b:PPPP and its last 10 bytes; P_Key
// ffff) with rdma_cm's signature (byte 3 is 0x01); on RoCE the IPv4-mapped address, or the IPv6 address itself.
in6_addr rdma_cm_mgid(const sockaddr_storage& a, bool infiniband);

// The address as text ("239.0.0.1", "ff12:4001::1").
std::string address_text(const sockaddr_storage& a);

}  // namespace ibfab::passthrough
