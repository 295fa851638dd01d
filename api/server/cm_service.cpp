#include "api/server/cm_service.h"

#include <cerrno>

#include "fabric/model/hca.h"

namespace ibfab::api {

CmService::CmService(fabric::Fabric& fabric, const topo::AddressPlan& plan, bool every_host_local)
    : stacks_(fabric.node_count()),
      ib_cm_(fabric, rdma_cm_),
      rdma_cm_(fabric, plan, stacks_, ib_cm_, ucma_, every_host_local),
      ucma_(rdma_cm_, plan) {
  for (uint32_t i = 0; i < fabric.node_count(); ++i) {
    if (fabric.node(i).is_switch()) continue;
    auto& hca = static_cast<fabric::Hca&>(fabric.node(i));
    stacks_.add(hca, [&](uint8_t port) { ib_cm_.attach(hca, port); });
    hca.add_listener(this);
  }
}

CmService::~CmService() {
  stacks_.for_each([this](const HostStack& s) { s.hca->remove_listener(this); });
}

void CmService::on_port_event(fabric::Hca& hca, uint8_t port, fabric::PortEvent event) {
  PortStack& ps = stacks_.port(hca, port);
  if (event == fabric::PortEvent::Active) {
    ps.ipoib->join();
    return;
  }
  if (event == fabric::PortEvent::PkeyChange) return;
  ps.mcast->reset(-ENETRESET);
  rdma_cm_.forget_joins(hca, port);
  ps.ipoib->restart();
}

}  // namespace ibfab::api
