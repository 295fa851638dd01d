// The SubnetManager's activation phase (the contract is in
// subnet_manager.h): after the LFTs, every port of the subnet goes from
// Init to Armed, then from Armed to Active, as OpenSM's state manager
// drives them. The Armed pass reads each port (a generated batch) and sets
// those in Init to Armed as their answers come; the Active pass (a
// generated batch) sets every port the Armed pass left Armed, from what
// its answers said, with no second read.
#include <array>
#include <span>

#include "fabric/mad/dr_smp.h"
#include "fabric/mad/port_info.h"
#include "fabric/model/fabric.h"
#include "sm/subnet_manager.h"

namespace ibfab::sm {

void SubnetManager::activate(uint8_t target) {
  if (!still_master()) {
    sweeping_ = false;
    return;
  }
  const DiscoveryResult& r = discovery_.result();
  if (target == mad::port_state::kArmed) {
    // Init -> Armed: read each port, set it Armed. The answer to the Set is
    // the port's PortInfo as it now stands: kept for the Active pass, which
    // needs no second read. Ports found Armed already go straight there.
    armed_.clear();
    visits_.clear();
    // Every end of every discovered link, and every switch's port 0.
    for (const DiscoveredLink& l : r.links) {
      const uint32_t a = node_by_guid_.at(l.a_guid), b = node_by_guid_.at(l.b_guid);
      visits_.push_back(PortAt{DrRoute(r.nodes[a].path), l.a_port, a});
      visits_.push_back(PortAt{DrRoute(r.nodes[b].path), l.b_port, b});
    }
    for (uint32_t i = 0; i < r.nodes.size(); ++i)
      if (r.nodes[i].is_switch()) visits_.push_back(PortAt{DrRoute(r.nodes[i].path), 0, i});
    // visits_ stays as it is until the sender is idle, after the last Get:
    // a Get and a Set for each port still in Init.
    progress().begin("activation (Armed)", "SMPs", 2 * visits_.size());
    sender_.generate(visits_.size(), [this](std::size_t i, SmpSender::Request& q) {
      const uint8_t port = visits_[i].port;
      const uint32_t node = visits_[i].node;
      q.method = mad::dr_smp::kMethodGet;
      q.attr = mad::PortInfo::kAttributeId;
      q.modifier = port;
      q.path = visits_[i].route;
      q.cb = [this, port, node](std::span<const uint8_t> smp, uint16_t st) {
        if (smp.empty() || st != 0) return;
        mad::PortInfo pi = mad::PortInfo::unpack(smp_data(smp));
        keep_port_info(node, port, pi);
        pi.client_reregister = false;
        const DrRoute route = DrRoute::of_smp(smp);
        if (pi.port_state == mad::port_state::kArmed) {
          armed_.push_back(ArmedPort{PortAt{route, port, node}, pi});
          return;
        }
        if (pi.port_state != mad::port_state::kInit) return;
        pi.port_state = mad::port_state::kArmed;
        std::array<uint8_t, 64> set{};
        pi.pack(set);
        sender_.set(route.span(), mad::PortInfo::kAttributeId, port, set,
                    [this, port, node](std::span<const uint8_t> ans, uint16_t s2) {
                      if (ans.empty() || s2 != 0) return;
                      mad::PortInfo now = mad::PortInfo::unpack(smp_data(ans));
                      keep_port_info(node, port, now);
                      now.client_reregister = false;
                      if (now.port_state == mad::port_state::kArmed)
                        armed_.push_back(ArmedPort{PortAt{DrRoute::of_smp(ans), port, node}, now});
                    });
      };
    });
    sender_.when_idle([this] { activate(mad::port_state::kActive); });
    return;
  }
  // Armed -> Active, from what the Armed pass learnt (armed_ stays as it is
  // until the sender is idle).
  visits_.clear();
  progress().begin("activation (Active)", "SMPs", armed_.size());
  sender_.generate(armed_.size(), [this](std::size_t i, SmpSender::Request& q) {
    ArmedPort& a = armed_[i];
    a.info.port_state = mad::port_state::kActive;
    q.method = mad::dr_smp::kMethodSet;
    q.attr = mad::PortInfo::kAttributeId;
    q.modifier = a.at.port;
    q.path = a.at.route;
    a.info.pack(q.data);
    q.cb = [this, node = a.at.node, port = a.at.port](std::span<const uint8_t> ans, uint16_t s2) {
      if (ans.empty() || s2 != 0) return;
      ++report_.ports_activated;
      keep_port_info(node, port, mad::PortInfo::unpack(smp_data(ans)));
    };
  });
  sender_.when_idle([this] {
    armed_.clear();
    report_.smps_activation = phase_smps();
    finish();
  });
}

}  // namespace ibfab::sm
