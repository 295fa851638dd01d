#include "tools/cli/host_snapshot.h"

#include <algorithm>
#include <stdexcept>

#include "tools/cli/engine_connection.h"

namespace ibfab::cli {

HostSnapshot take_snapshot(const std::string& socket, const std::string& node) {
  HostSnapshot s;
  {
    EngineConnection control(socket, node, api::ConnectionKind::Control);
    s.node = control.ask<api::NodeReply>(api::MsgType::QueryNode, nullptr, 0, api::MsgType::NodeReply);
    if (s.node.status != 0) throw std::runtime_error("the engine has no HCA for host '" + node + "'");
  }
  EngineConnection cm(socket, node, api::ConnectionKind::Cm);
  const uint32_t ports = std::min<uint32_t>(s.node.num_ports, api::kMaxPorts);
  for (uint32_t port = 1; port <= ports; ++port) {
    api::CmIdRequest q;
    q.arg = port;
    const api::CmReply r = cm.ask<api::CmReply>(api::MsgType::CmQueryAddress, &q, sizeof q, api::MsgType::CmReply);
    s.addresses.push_back(r.value == 0 ? r.address : api::CmPortAddress{});
  }
  return s;
}

}  // namespace ibfab::cli
