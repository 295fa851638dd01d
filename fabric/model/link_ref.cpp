#include "fabric/model/link_ref.h"

#include <algorithm>
#include <cctype>

#include "fabric/model/fabric.h"

namespace ibfab::fabric {

bool parse_link_ref(const std::string& text, LinkRef& out) {
  const auto open = text.find('[');
  const auto close = text.find(']', open == std::string::npos ? 0 : open);
  if (open == std::string::npos || open == 0 || close == std::string::npos || close == open + 1) return false;
  const std::string digits = text.substr(open + 1, close - open - 1);
  if (digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return false;
  const int port = std::stoi(digits);
  if (port < 1 || port > 255) return false;
  const std::string rest = text.substr(close + 1);
  LinkRef other;
  if (!rest.empty() &&
      (rest[0] != '-' || !parse_link_ref(rest.substr(1), other) || other.text.find('-') != std::string::npos))
    return false;
  out.far_node = other.node;
  out.far_port = other.port;
  out.node = text.substr(0, open);
  out.port = static_cast<uint8_t>(port);
  out.text = text;
  return true;
}

Link* find_link(const Fabric& fabric, const LinkRef& ref, std::string& problem) {
  const Node* n = fabric.find(ref.node);
  if (!n) {
    problem = "no node '" + ref.node + "' in the topology";
    return nullptr;
  }
  if (ref.port < 1 || ref.port > n->num_ports()) {
    problem = ref.node + " has ports 1.." + std::to_string(n->num_ports()) + ", not " + std::to_string(ref.port);
    return nullptr;
  }
  Link* cable = n->port(ref.port).link();
  if (!cable) {
    problem = "no cable on " + ref.text;
    return nullptr;
  }
  problem = far_end_problem(*cable, *n, ref);
  return problem.empty() ? cable : nullptr;
}

std::string far_end_problem(const Link& cable, const Node& near, const LinkRef& ref) {
  const Port* far = cable.peer_of(&near.port(ref.port));
  if (ref.far_node.empty() || (far->node().name() == ref.far_node && far->number() == ref.far_port)) return "";
  return ref.text + ": " + ref.node + "[" + std::to_string(ref.port) + "] is cabled to " + far->node().name() + "[" +
         std::to_string(far->number()) + "]";
}

}  // namespace ibfab::fabric
