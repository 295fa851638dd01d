#pragma once
// One address override of an AddressPlan (address_plan.h), parsed:
// "NODE[:PORT]=ADDRESS[/PREFIX]".
//
//   NODE     a node name of the topology (an HCA). When the whole text
//            before '=' is not a node name and ends in ":DIGITS", those
//            digits are the port (default 1).
//   ADDRESS  dotted-quad IPv4 or IPv6 text (inet_pton); a unicast host
//            address: not unspecified, loopback, multicast, IPv4 broadcast
//            or IPv4-mapped.
//   PREFIX   decimal, 1..32 (IPv4, default 16) or 1..128 (IPv6, default 64).
// The text is split at its last '=' (an address holds none).
#include <array>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "fabric/topology/topology.h"

namespace ibfab::topo {

struct AddressOverride {
  uint32_t node = 0;  // Topology::nodes() index
  uint8_t port = 1;
  bool ipv6 = false;
  uint32_t ipv4 = 0;  // host order (ipv6 == false)
  std::array<uint8_t, 16> ipv6_addr{};
  uint8_t prefix = 16;
};

// Throws std::invalid_argument "address override 'TEXT': problem" for an
// unknown node, a switch, a port the HCA does not have, text that is not an
// address, a non-unicast address, or a bad prefix.
AddressOverride parse_address_override(const Topology& topology, const std::string& text);

// The overrides of an address file (`ibfab serve --ip-file`): one
// "NODE[:PORT]=ADDRESS[/PREFIX]" per line, as --ip takes it; space around
// it, blank lines and everything after '#' are ignored. Throws
// std::invalid_argument "NAME:LINE: ..." for a line that is no override
// (no '=', or space inside); what is wrong with an override itself,
// parse_address_override says when the plan is built.
std::vector<std::string> read_address_overrides(std::istream& in, const std::string& name);

}  // namespace ibfab::topo
