#include "fabric/topology/address_override.h"

#include <arpa/inet.h>

#include <optional>
#include <stdexcept>
#include <string_view>

namespace ibfab::topo {
namespace {

// Decimal digits only, at most three (every valid value is below 256).
std::optional<unsigned> small_number(std::string_view s) {
  if (s.empty() || s.size() > 3) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

// Why `a` (host order) cannot be a port's address, or nullptr.
const char* ipv4_problem(uint32_t a) {
  if (a == 0) return "is the unspecified address";
  if (a >> 24 == 127) return "is a loopback address";
  if (a >> 28 == 0xe) return "is a multicast address";
  if (a == 0xffffffffu) return "is the broadcast address";
  return nullptr;
}

const char* ipv6_problem(const std::array<uint8_t, 16>& a) {
  if (a[0] == 0xff) return "is a multicast address";
  bool zero_to_9 = true;  // bytes 0..9 zero: ::, ::1 and ::ffff:0:0/96 live there
  for (int i = 0; i < 10; ++i) zero_to_9 = zero_to_9 && a[i] == 0;
  if (!zero_to_9) return nullptr;
  if (a[10] == 0xff && a[11] == 0xff) return "is an IPv4-mapped address (give the IPv4 address)";
  bool zero_to_14 = a[10] == 0 && a[11] == 0;
  for (int i = 12; i < 15; ++i) zero_to_14 = zero_to_14 && a[i] == 0;
  if (zero_to_14 && a[15] == 0) return "is the unspecified address";
  if (zero_to_14 && a[15] == 1) return "is the loopback address";
  return nullptr;
}

}  // namespace

AddressOverride parse_address_override(const Topology& topology, const std::string& text) {
  auto fail = [&](const std::string& problem) -> std::invalid_argument {
    return std::invalid_argument("address override '" + text + "': " + problem);
  };
  const std::string_view all = text;
  const std::size_t eq = all.rfind('=');
  if (eq == std::string_view::npos) throw fail("expected NODE[:PORT]=ADDRESS[/PREFIX]");
  const std::string_view left = all.substr(0, eq);
  const std::string_view right = all.substr(eq + 1);
  if (left.empty()) throw fail("no node before '='");

  AddressOverride o;
  std::optional<uint32_t> node = topology.find(left);
  std::string_view name = left;
  if (!node) {
    const std::size_t colon = left.rfind(':');
    if (colon != std::string_view::npos && colon + 1 < left.size() &&
        left.substr(colon + 1).find_first_not_of("0123456789") == std::string_view::npos) {
      name = left.substr(0, colon);
      node = topology.find(name);
      const std::string_view digits = left.substr(colon + 1);
      const std::optional<unsigned> port = small_number(digits);
      if (node && (!port || *port > 255))
        throw fail("'" + std::string(name) + "' has no port " + std::string(digits));
      if (port) o.port = static_cast<uint8_t>(*port);
    }
  }
  if (!node) throw fail("no node named '" + std::string(name) + "'");
  const NodeDesc& n = topology.nodes()[*node];
  if (n.kind != NodeKind::Hca) throw fail("'" + n.name + "' is a switch: only HCA ports have addresses");
  if (o.port == 0 || o.port > n.num_ports)
    throw fail("'" + n.name + "' has no port " + std::to_string(o.port) + " (its ports: 1" +
               (n.num_ports > 1 ? " and 2)" : ")"));
  o.node = *node;

  const std::size_t slash = right.find('/');
  const std::string address(right.substr(0, slash));
  if (address.empty()) throw fail("no address after '='");
  o.ipv6 = address.find(':') != std::string::npos;
  const unsigned max_prefix = o.ipv6 ? 128 : 32;
  o.prefix = o.ipv6 ? 64 : 16;
  if (o.ipv6) {
    if (::inet_pton(AF_INET6, address.c_str(), o.ipv6_addr.data()) != 1)
      throw fail("'" + address + "' is not an IPv6 address");
    if (const char* p = ipv6_problem(o.ipv6_addr)) throw fail(address + " " + p);
  } else {
    in_addr a{};
    if (::inet_pton(AF_INET, address.c_str(), &a) != 1)
      throw fail("'" + address + "' is not an IPv4 address (a.b.c.d) or an IPv6 address");
    o.ipv4 = ntohl(a.s_addr);
    if (const char* p = ipv4_problem(o.ipv4)) throw fail(address + " " + p);
  }
  if (slash != std::string_view::npos) {
    const std::string_view p = right.substr(slash + 1);
    const std::optional<unsigned> prefix = small_number(p);
    if (!prefix || *prefix == 0 || *prefix > max_prefix)
      throw fail("prefix '/" + std::string(p) + "' is not a length from 1 to " + std::to_string(max_prefix));
    o.prefix = static_cast<uint8_t>(*prefix);
  }
  return o;
}

std::vector<std::string> read_address_overrides(std::istream& in, const std::string& name) {
  std::vector<std::string> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view text(line);
    text = text.substr(0, text.find('#'));
    const std::size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    text = text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
    if (text.find('=') == std::string_view::npos || text.find_first_of(" \t") != std::string_view::npos)
      throw std::invalid_argument(name + ":" + std::to_string(number) + ": expected NODE[:PORT]=ADDRESS[/PREFIX], got '" +
                                  std::string(text) + "'");
    out.emplace_back(text);
  }
  return out;
}

}  // namespace ibfab::topo
