#pragma once
// The IP addresses of a fabric's HCA ports, as IPoIB interfaces would carry
// them, and each host's routing table. Pure data over a Topology: rdma_cm
// (api/server) resolves addresses with it, `ibfab topo show --addresses`
// and `ibfab serve` list it.
//
// Defaults (ibfab's choice; docs/COMPATIBILITY.md): the h-th HCA of the
// topology (h = 1, 2, ... in node order) has on port p
//   IPv4 10.p.(h >> 8).(h & 255)/16   (port p's subnet 10.p.0.0/16)
//   IPv6 fd00:0:0:p::h/64             (a unique local /64 per port number)
// Overrides: "NODE[:PORT]=ADDRESS[/PREFIX]" replaces the port's address of
// that family (port 1 when none is named; the prefix defaults to 16 for
// IPv4 and 64 for IPv6).
//
// Routing (what `ip route get` would answer on the host): a destination in
// the subnet of one of the host's ports goes out of the lowest-numbered
// such port; a multicast destination (224.0.0.0/4, ff00::/8) goes out of
// the multicast route's port (default 1; "none": there is no such route,
// and resolving a multicast address then needs a source address, as
// rdma_resolve_addr(3) says). Anything else has no route.
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

struct PortAddress {
  uint32_t node = 0;   // Topology::nodes() index
  uint8_t port = 0;
  uint32_t ipv4 = 0;   // host order
  uint8_t prefix4 = 16;
  std::array<uint8_t, 16> ipv6{};
  uint8_t prefix6 = 64;
};

struct AddressOptions {
  std::vector<std::string> overrides;  // "NODE[:PORT]=ADDRESS[/PREFIX]"
  std::optional<uint8_t> mcast_route_port = 1;  // nullopt: no multicast route
};

class AddressPlan {
 public:
  AddressPlan() = default;
  // Throws std::invalid_argument naming the bad override (unknown node or
  // port, not an address, a prefix out of range, an address given twice).
  AddressPlan(const Topology& topology, const AddressOptions& options);

  // The port carrying `addr` (AF_INET or AF_INET6), or nullptr.
  const PortAddress* find(const sockaddr* addr) const;
  // Port `port` of node `node`, or nullptr (a switch, no such port).
  const PortAddress* of(uint32_t node, uint8_t port) const;
  // The port of `node` a packet to `dst` leaves by, or nullopt (no route).
  std::optional<uint8_t> route(uint32_t node, const sockaddr* dst) const;

  // Every port's addresses, one line each: "NODE PORT IPV4/LEN IPV6/LEN".
  std::vector<std::string> lines(const Topology& topology) const;
  const std::vector<PortAddress>& ports() const { return ports_; }

  // Text form of an address (inet_ntop).
  static std::string ipv4_text(uint32_t host_order);
  static std::string ipv6_text(const std::array<uint8_t, 16>& a);

 private:
  std::vector<PortAddress> ports_;          // by (node, port), nodes in topology order
  std::vector<uint32_t> first_;             // node -> first index in ports_ (+ count via next node)
  std::optional<uint8_t> mcast_route_port_ = 1;
};

}  // namespace ibfab::topo
