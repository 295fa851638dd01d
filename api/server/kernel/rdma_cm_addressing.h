#pragma once
// rdma_cm's addressing rules, as the kernel's cma.c applies them: socket
// addresses (AF_INET, AF_INET6, AF_IB), the MGID an address maps to, the
// service ID of a port space and port, and the 36-byte header rdma_cm puts
// before the private data of a SIDR REQ; and the IPoIB addresses a port
// shows (CmQueryAddress), from the fabric's address plan.
//
// Pure functions of their arguments: no room of the host side is needed to
// use them.
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "api/client/cm_protocol.h"
#include "fabric/topology/address_plan.h"
#include "fabric/wire/gid.h"

namespace ibfab::api::cm {

inline constexpr int kAfIb = 27;             // AF_IB
inline constexpr uint32_t kUdpQkey = 0x01234567;  // RDMA_UDP_QKEY
inline constexpr uint16_t kPsIpoib = 0x0002, kPsIb = 0x013F, kPsTcp = 0x0106, kPsUdp = 0x0111;

// struct sockaddr_ib (rdma-core's <rdma/rdma_cma.h> defines it for AF_IB).
struct SockaddrIb {
  uint16_t sib_family;
  uint16_t sib_pkey;     // network order
  uint32_t sib_flowinfo; // network order
  uint8_t sib_addr[16];
  uint64_t sib_sid;      // network order
  uint64_t sib_sid_mask;
  uint64_t sib_scope_id;
};
static_assert(sizeof(SockaddrIb) == 48);

// Size of a supported address (sockaddr_in, sockaddr_in6, sockaddr_ib), or
// 0 for any other family.
std::size_t address_size(const sockaddr_storage& a);
bool is_any(const sockaddr_storage& a);        // INADDR_ANY, in6addr_any, a zero GID
bool is_multicast(const sockaddr_storage& a);  // 224/4, ff00::/8, a multicast GID
uint16_t port_of(const sockaddr_storage& a);   // host order (AF_IB: the SID's low 16 bits)
void set_port(sockaddr_storage& a, uint16_t port);
// Replaces the host part of an AF_INET (`ipv4`, host order) or AF_INET6
// (`ipv6`) address, keeping its family and port.
void set_host(sockaddr_storage& a, uint32_t ipv4, const std::array<uint8_t, 16>& ipv6);

// The MGID rdma_cm joins for `addr` in port space `ps`, given the port's
// IPoIB broadcast MGID (its scope and P_Key): cma_set_mgid. A wildcard
// address gives a zero MGID (the SA assigns one).
wire::Gid mgid_for(const sockaddr_storage& addr, uint16_t ps, const wire::Gid& broadcast);

// The service ID of port space `ps` and `port`: ps << 16 | port.
inline uint64_t service_id(uint16_t ps, uint16_t port) { return uint64_t{ps} << 16 | port; }

// rdma_cm's header in front of a SIDR REQ's private data (struct cma_hdr).
inline constexpr std::size_t kHeaderSize = 36;
void pack_header(std::span<uint8_t, kHeaderSize> out, const sockaddr_storage& src, const sockaddr_storage& dst);
// The source and destination addresses a header carries (ports included),
// or nullopt if it is not a version-0 IPv4/IPv6 header.
struct HeaderAddresses {
  sockaddr_storage src{};
  sockaddr_storage dst{};
};
std::optional<HeaderAddresses> unpack_header(std::span<const uint8_t, kHeaderSize> in);

// CmQueryAddress: the IPoIB addresses of `port` of host `node` (a node
// index) as `plan` gives them, and whether the host's multicast route
// leaves by that port. 0, or -ENODEV for a port the plan does not have.
int64_t port_address(const topo::AddressPlan& plan, uint32_t node, uint32_t port, CmPortAddress& out);

}  // namespace ibfab::api::cm
