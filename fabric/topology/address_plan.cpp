#include "fabric/topology/address_plan.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <stdexcept>

#include "fabric/topology/address_override.h"

namespace ibfab::topo {
namespace {

// The last HCA number with a default IPv4 address: 10.p.255.255 is the
// /16's broadcast address.
constexpr uint32_t kMaxIpv4Host = 0xfffe;

// Where a sockaddr points, as a key of this plan: IPv4 (IPv4-mapped IPv6
// included) or IPv6.
struct Destination {
  bool ipv6 = false;
  uint32_t ipv4 = 0;  // host order
  std::array<uint8_t, 16> ipv6_addr{};
};

std::optional<Destination> destination(const sockaddr* addr) {
  if (addr == nullptr) return std::nullopt;
  Destination d;
  if (addr->sa_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, addr, sizeof in);
    d.ipv4 = ntohl(in.sin_addr.s_addr);
    return d;
  }
  if (addr->sa_family != AF_INET6) return std::nullopt;
  sockaddr_in6 in6{};
  std::memcpy(&in6, addr, sizeof in6);
  std::memcpy(d.ipv6_addr.data(), in6.sin6_addr.s6_addr, 16);
  if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr)) {
    uint32_t net = 0;
    std::memcpy(&net, d.ipv6_addr.data() + 12, 4);
    d.ipv4 = ntohl(net);
    return d;
  }
  d.ipv6 = true;
  return d;
}

bool same_ipv4_subnet(uint32_t a, uint32_t b, uint8_t prefix) {
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (a & mask) == (b & mask);
}

bool same_ipv6_subnet(const std::array<uint8_t, 16>& a, const std::array<uint8_t, 16>& b, uint8_t prefix) {
  const unsigned whole = prefix / 8u;
  if (std::memcmp(a.data(), b.data(), whole) != 0) return false;
  const unsigned bits = prefix % 8u;
  if (bits == 0) return true;
  const auto mask = static_cast<uint8_t>(0xff << (8 - bits));
  return ((a[whole] ^ b[whole]) & mask) == 0;
}

// Key of a port's address of one family in the constructor's map of which
// override set it.
uint64_t source_key(std::size_t port_index, bool ipv6) { return uint64_t{port_index} * 2 + (ipv6 ? 1 : 0); }

}  // namespace

std::size_t AddressPlan::Ipv6Hash::operator()(const std::array<uint8_t, 16>& a) const {
  uint64_t hi = 0;
  uint64_t lo = 0;
  std::memcpy(&hi, a.data(), 8);
  std::memcpy(&lo, a.data() + 8, 8);
  return std::hash<uint64_t>{}(hi ^ (lo * 0x9e3779b97f4a7c15ull));
}

AddressPlan::AddressPlan(const Topology& topology, const AddressOptions& options)
    : mcast_route_port_(options.mcast_route_port) {
  if (mcast_route_port_ && (*mcast_route_port_ == 0 || *mcast_route_port_ > kMaxHcaPorts))
    throw std::invalid_argument("multicast route port " + std::to_string(*mcast_route_port_) +
                                ": an HCA's ports are 1 and 2");
  const std::vector<NodeDesc>& nodes = topology.nodes();
  first_.reserve(nodes.size() + 1);
  ports_.reserve(topology.hca_count() * kMaxHcaPorts);
  uint32_t host = 0;
  for (uint32_t n = 0; n < nodes.size(); ++n) {
    first_.push_back(static_cast<uint32_t>(ports_.size()));
    if (nodes[n].kind != NodeKind::Hca) continue;
    ++host;
    for (uint8_t p = 1; p <= nodes[n].num_ports; ++p) {
      PortAddress a;
      a.node = n;
      a.port = p;
      if (host <= kMaxIpv4Host) a.ipv4 = 10u << 24 | uint32_t{p} << 16 | host;
      a.ipv6[0] = 0xfd;
      a.ipv6[7] = p;
      for (int i = 0; i < 4; ++i) a.ipv6[15 - i] = static_cast<uint8_t>(host >> (8 * i));
      ports_.push_back(a);
    }
  }
  first_.push_back(static_cast<uint32_t>(ports_.size()));

  std::unordered_map<uint64_t, std::size_t> sources;  // source_key -> index in options.overrides
  for (std::size_t i = 0; i < options.overrides.size(); ++i) {
    const std::string& text = options.overrides[i];
    const AddressOverride o = parse_address_override(topology, text);
    const std::size_t at = first_[o.node] + o.port - 1u;
    const auto [it, fresh] = sources.emplace(source_key(at, o.ipv6), i);
    if (!fresh)
      throw std::invalid_argument("address override '" + text + "': " +
                                  topology.port_name({o.node, o.port}) + " already has an " +
                                  (o.ipv6 ? "IPv6" : "IPv4") + " override ('" +
                                  options.overrides[it->second] + "')");
    PortAddress& a = ports_[at];
    if (o.ipv6) {
      a.ipv6 = o.ipv6_addr;
      a.prefix6 = o.prefix;
    } else {
      a.ipv4 = o.ipv4;
      a.prefix4 = o.prefix;
    }
  }
  index(topology, options.overrides, sources);
}

void AddressPlan::index(const Topology& topology, const std::vector<std::string>& overrides,
                        const std::unordered_map<uint64_t, std::size_t>& sources) {
  // Defaults are unique, so a clash involves at least one override: name
  // the one behind the later port, else the earlier's.
  auto clash = [&](uint32_t earlier, uint32_t later, bool ipv6) {
    auto it = sources.find(source_key(later, ipv6));
    uint32_t other = earlier;
    if (it == sources.end()) {
      it = sources.find(source_key(earlier, ipv6));
      other = later;
    }
    const PortAddress& a = ports_[later];
    const std::string text = ipv6 ? ipv6_text(a.ipv6) : ipv4_text(a.ipv4);
    return std::invalid_argument("address override '" + overrides.at(it->second) + "': " + text +
                                 " is also the address of " +
                                 topology.port_name({ports_[other].node, ports_[other].port}));
  };
  by_ipv4_.reserve(ports_.size());
  by_ipv6_.reserve(ports_.size());
  for (uint32_t i = 0; i < ports_.size(); ++i) {
    const PortAddress& a = ports_[i];
    if (a.ipv4 != 0) {
      const auto [it, fresh] = by_ipv4_.emplace(a.ipv4, i);
      if (!fresh) throw clash(it->second, i, false);
    }
    const auto [it, fresh] = by_ipv6_.emplace(a.ipv6, i);
    if (!fresh) throw clash(it->second, i, true);
  }
}

const PortAddress* AddressPlan::find(const sockaddr* addr) const {
  const std::optional<Destination> d = destination(addr);
  if (!d) return nullptr;
  if (d->ipv6) {
    const auto it = by_ipv6_.find(d->ipv6_addr);
    return it == by_ipv6_.end() ? nullptr : &ports_[it->second];
  }
  const auto it = by_ipv4_.find(d->ipv4);
  return it == by_ipv4_.end() ? nullptr : &ports_[it->second];
}

const PortAddress* AddressPlan::of(uint32_t node, uint8_t port) const {
  if (node + std::size_t{1} >= first_.size() || port == 0) return nullptr;
  const uint32_t at = first_[node] + port - 1u;
  return at < first_[node + 1] ? &ports_[at] : nullptr;
}

std::optional<uint8_t> AddressPlan::route(uint32_t node, const sockaddr* dst) const {
  const std::optional<Destination> d = destination(dst);
  if (!d || node + std::size_t{1} >= first_.size()) return std::nullopt;
  const bool multicast = d->ipv6 ? d->ipv6_addr[0] == 0xff : d->ipv4 >> 28 == 0xe;
  if (multicast) {
    if (mcast_route_port_ && of(node, *mcast_route_port_)) return mcast_route_port_;
    return std::nullopt;
  }
  for (uint32_t i = first_[node]; i < first_[node + 1]; ++i) {
    const PortAddress& a = ports_[i];
    const bool in_subnet = d->ipv6 ? same_ipv6_subnet(a.ipv6, d->ipv6_addr, a.prefix6)
                                   : a.ipv4 != 0 && same_ipv4_subnet(a.ipv4, d->ipv4, a.prefix4);
    if (in_subnet) return a.port;
  }
  return std::nullopt;
}

std::vector<std::string> AddressPlan::lines(const Topology& topology) const {
  std::vector<std::string> out;
  out.reserve(ports_.size());
  for (const PortAddress& a : ports_) {
    std::string line = topology.nodes().at(a.node).name + " " + std::to_string(a.port) + " ";
    line += a.ipv4 == 0 ? std::string("-") : ipv4_text(a.ipv4) + "/" + std::to_string(a.prefix4);
    line += " " + ipv6_text(a.ipv6) + "/" + std::to_string(a.prefix6);
    out.push_back(std::move(line));
  }
  return out;
}

std::string AddressPlan::ipv4_text(uint32_t host_order) {
  in_addr a{};
  a.s_addr = htonl(host_order);
  char buf[INET_ADDRSTRLEN];
  return ::inet_ntop(AF_INET, &a, buf, sizeof buf);
}

std::string AddressPlan::ipv6_text(const std::array<uint8_t, 16>& a) {
  char buf[INET6_ADDRSTRLEN];
  return ::inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
}

}  // namespace ibfab::topo
