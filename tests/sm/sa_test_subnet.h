#pragma once
// Test helpers: Subnets for the SA tests, written by hand or read off a
// fabric configured by hand (tests/fabric/model/hand_config.h). Test code
// may read the fabric directly; the SM itself never does.
#include <cstdint>
#include <vector>

#include "fabric/model/fabric.h"
#include "sm/subnet.h"

namespace ibfab::sm::testing {

inline void add_port(Subnet& s, SubnetPort p) {
  const auto index = static_cast<uint32_t>(s.ports.size());
  for (uint32_t l = 0; l < (1u << p.lmc); ++l) s.port_by_lid[static_cast<uint16_t>(p.lid + l)] = index;
  s.port_by_guid[p.guid] = index;
  s.ports.push_back(std::move(p));
}

inline SubnetPort make_port(uint64_t guid, uint16_t lid, std::vector<uint16_t> pkeys,
                            uint8_t mtu = 5, uint8_t rate = 7) {
  SubnetPort p;
  p.guid = guid;
  p.node_guid = guid - 1;
  p.lid = lid;
  p.port = 1;
  p.neighbor_mtu = mtu;
  p.rate = rate;
  p.pkeys = std::move(pkeys);
  return p;
}

// The Subnet an SM would have built for `f` after configure_by_hand():
// every HCA port and switch port 0 with its LID, MTU, rate and P_Keys, and
// every node with its NodeInfo, NodeDescription, and per end port the
// PortInfo fields the SM sets (LID, LMC, MasterSMLID, GID prefix, IsSM on
// the SM's port, state Active). The SM sits on `sm_hca` port 1.
inline Subnet subnet_from_fabric(const fabric::Fabric& f, const fabric::Hca& sm_hca) {
  Subnet s;
  s.prefix = sm_hca.port(1).gid_prefix;
  s.sm_lid = sm_hca.port(1).lid;
  s.sm_port_guid = sm_hca.port(1).guid();
  s.mcast_fdb_cap = f.options().multicast_fdb_cap;
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    const fabric::Node& n = f.node(i);
    SubnetNode sn;
    sn.info.node_type = n.is_switch() ? mad::NodeInfo::kTypeSwitch : mad::NodeInfo::kTypeCa;
    sn.info.num_ports = n.num_ports();
    sn.info.node_guid = n.guid();
    sn.info.system_image_guid = n.system_guid();
    sn.description = n.description();
    sn.ports.resize(n.num_ports() + 1u);
    sn.port_guids.assign(n.num_ports() + 1u, 0);
    s.node_by_guid[n.guid()] = static_cast<uint32_t>(s.nodes.size());
    s.nodes.push_back(std::move(sn));
  }
  for (uint32_t i = 0; i < f.node_count(); ++i) {
    const fabric::Node& n = f.node(i);
    const uint8_t first = n.is_switch() ? 0 : 1;
    const uint8_t last = n.is_switch() ? 0 : n.num_ports();
    for (uint8_t pn = first; pn <= last; ++pn) {
      const fabric::Port& port = n.port(pn);
      SubnetPort p;
      p.guid = port.guid();
      p.node_guid = n.guid();
      p.lid = port.lid;
      p.lmc = port.lmc;
      p.port = pn;
      p.is_switch = n.is_switch();
      p.neighbor_mtu = port.neighbor_mtu;
      const fabric::Link* link = n.is_switch() ? nullptr : port.link();
      p.rate = link ? link->rate().sa_rate() : 7;
      p.pkeys = port.pkeys.empty() ? std::vector<uint16_t>{0xFFFF} : port.pkeys;
      SubnetNode& sn = s.nodes[s.node_by_guid.at(n.guid())];
      sn.port_guids[pn] = port.guid();
      SubnetNodePort& np = sn.ports[pn];
      np.known = true;
      np.info.gid_prefix = s.prefix;
      np.info.lid = port.lid;
      np.info.lmc = port.lmc;
      np.info.master_sm_lid = s.sm_lid;
      np.info.capability_mask = port.guid() == s.sm_port_guid ? mad::port_cap::kIsSM : 0;
      np.info.local_port_num = pn;
      np.info.neighbor_mtu = port.neighbor_mtu;
      np.info.port_state = mad::port_state::kActive;
      add_port(s, std::move(p));
    }
  }
  return s;
}

}  // namespace ibfab::sm::testing
