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
// IPv4 and 64 for IPv6). NODE is a node name as the topology spells it; a
// name that itself ends in ":DIGITS" is taken whole.
// Past the 65534th HCA the /16 runs out: those ports have no default IPv4
// address (ipv4 == 0; an override can give one), only IPv6.
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is looked up and routed as
// the IPv4 address a.b.c.d.
//
// Routing (what `ip route get` would answer on the host): a destination in
// the subnet of one of the host's ports goes out of the lowest-numbered
// such port; a multicast destination (224.0.0.0/4, ff00::/8) goes out of
// the multicast route's port (default 1; "none": there is no such route,
// and resolving a multicast address then needs a source address, as
// rdma_resolve_addr(3) says). Anything else has no route.
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

struct PortAddress {
  uint32_t node = 0;   // Topology::nodes() index
  uint8_t port = 0;
  uint32_t ipv4 = 0;   // host order; 0: no IPv4 address
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
  // port, not an address, a prefix out of range, an address given twice),
  // or for a multicast route port other than 1..kMaxHcaPorts. O(ports +
  // overrides).
  AddressPlan(const Topology& topology, const AddressOptions& options);

  // The port carrying `addr` (AF_INET or AF_INET6), or nullptr. O(1).
  const PortAddress* find(const sockaddr* addr) const;
  // Port `port` of node `node`, or nullptr (a switch, no such port). O(1).
  const PortAddress* of(uint32_t node, uint8_t port) const;
  // The port of `node` a packet to `dst` leaves by, or nullopt (no route).
  // O(ports of the node).
  std::optional<uint8_t> route(uint32_t node, const sockaddr* dst) const;

  // Every port's addresses, one line each: "NODE PORT IPV4/LEN IPV6/LEN"
  // ("-" for a port without an IPv4 address).
  std::vector<std::string> lines(const Topology& topology) const;
  const std::vector<PortAddress>& ports() const { return ports_; }

  // Text form of an address (inet_ntop).
  static std::string ipv4_text(uint32_t host_order);
  static std::string ipv6_text(const std::array<uint8_t, 16>& a);

 private:
  struct Ipv6Hash {
    std::size_t operator()(const std::array<uint8_t, 16>& a) const;
  };
  // Indexes ports_ by address; throws (naming the override in `sources`
  // that made the two ports share one) when an address is taken twice.
  void index(const Topology& topology, const std::vector<std::string>& overrides,
             const std::unordered_map<uint64_t, std::size_t>& sources);

  std::vector<PortAddress> ports_;          // by (node, port), nodes in topology order
  std::vector<uint32_t> first_;             // node -> first index in ports_ (+ count via next node)
  std::optional<uint8_t> mcast_route_port_ = 1;
  std::unordered_map<uint32_t, uint32_t> by_ipv4_;                       // address -> ports_ index
  std::unordered_map<std::array<uint8_t, 16>, uint32_t, Ipv6Hash> by_ipv6_;  // address -> ports_ index
};

}  // namespace ibfab::topo
