#pragma once
// A cable named as people write it: by one of its ends, "S1[3]", or by both,
// "S1[3]-H1[1]" (scenario actions, `serve --fault`, `run --pcap-link`), and
// the cable of a fabric such a name stands for.
#include <cstdint>
#include <string>

namespace ibfab::fabric {

class Fabric;
class Link;
class Node;

struct LinkRef {
  std::string node;
  uint8_t port = 0;
  std::string far_node;  // the other end, if written ("" if not)
  uint8_t far_port = 0;
  std::string text;  // as written, for messages
};

// Parses "NODE[PORT]" or "NODE[PORT]-NODE[PORT]" (PORT 1..255); false on
// anything else, `out` then unchanged. The far end, when given, is kept to
// be checked against the cable (find_link).
bool parse_link_ref(const std::string& text, LinkRef& out);

// The cable on `ref`'s near end: null, with `problem` saying why, when the
// node is not in `fabric`, has no such port, the port has no cable, or
// `ref` names a far end the cable does not reach.
Link* find_link(const Fabric& fabric, const LinkRef& ref, std::string& problem);

// `cable` is on `near`'s port `ref.port`: "" when `ref` names no far end or
// names the cable's, else what the far end really is.
std::string far_end_problem(const Link& cable, const Node& near, const LinkRef& ref);

}  // namespace ibfab::fabric
