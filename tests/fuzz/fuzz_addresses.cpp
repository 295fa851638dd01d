// libFuzzer target for address files and overrides (`ibfab serve
// --ip-file`, `--ip`) on fat-tree:2:4. Any input either gives a plan or
// throws std::invalid_argument; anything else (another exception, a
// sanitizer report) is a bug. A plan that builds has every HCA port in it,
// no address twice, and finds each port by each of its addresses.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "fabric/topology/address_override.h"
#include "fabric/topology/address_plan.h"
#include "fabric/topology/topology_spec.h"

namespace {

const ibfab::topo::Topology& topology() {
  static const ibfab::topo::Topology t = ibfab::topo::load_topology("fat-tree:2:4");
  return t;
}

bool found_as(const ibfab::topo::AddressPlan& plan, const sockaddr* addr, const ibfab::topo::PortAddress& p) {
  const ibfab::topo::PortAddress* got = plan.find(addr);
  return got && got->node == p.node && got->port == p.port;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  ibfab::topo::AddressOptions options;
  try {
    options.overrides = ibfab::topo::read_address_overrides(in, "fuzz.txt");
  } catch (const std::invalid_argument&) {
    return 0;
  }
  ibfab::topo::AddressPlan plan;
  try {
    plan = ibfab::topo::AddressPlan(topology(), options);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (plan.ports().size() != topology().hca_count()) std::abort();  // one port per HCA in fat-tree:2:4
  std::set<uint32_t> v4;
  std::set<std::array<uint8_t, 16>> v6;
  for (const ibfab::topo::PortAddress& p : plan.ports()) {
    sockaddr_in a4{};
    a4.sin_family = AF_INET;
    a4.sin_addr.s_addr = htonl(p.ipv4);
    if (p.ipv4 == 0 || !v4.insert(p.ipv4).second) std::abort();
    if (!found_as(plan, reinterpret_cast<const sockaddr*>(&a4), p)) std::abort();
    sockaddr_in6 a6{};
    a6.sin6_family = AF_INET6;
    std::copy(p.ipv6.begin(), p.ipv6.end(), a6.sin6_addr.s6_addr);
    if (!v6.insert(p.ipv6).second) std::abort();
    if (!found_as(plan, reinterpret_cast<const sockaddr*>(&a6), p)) std::abort();
  }
  return 0;
}
