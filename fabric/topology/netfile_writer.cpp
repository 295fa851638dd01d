#include "fabric/topology/netfile_writer.h"

#include <cinttypes>
#include <cstdio>
#include <string>

namespace ibfab::topo {
namespace {

std::string hex(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

// The peer half of a port line: "NAME"[P] plus "(guid) " for an HCA port.
std::string peer_text(const Topology& t, PortRef peer) {
  const NodeDesc& n = t.nodes()[peer.node];
  std::string s = "\"" + n.name + "\"[" + std::to_string(peer.port) + "]";
  if (n.kind == NodeKind::Hca) s += "(" + hex(n.port_guids[peer.port]) + ") ";
  return s;
}

void write_node(std::ostream& out, const Topology& t, uint32_t index) {
  const NodeDesc& n = t.nodes()[index];
  const bool sw = n.kind == NodeKind::Switch;
  out << "\nvendid=0x" << hex(n.vendor_id) << "\ndevid=0x" << hex(n.device_id)
      << "\nsysimgguid=0x" << hex(n.system_guid) << '\n';
  if (sw) {
    out << "switchguid=0x" << hex(n.node_guid) << '(' << hex(n.port_guids[0]) << ")\n";
    out << "Switch\t" << unsigned{n.num_ports} << " \"" << n.name << "\"\t\t# \"" << n.description
        << "\" enhanced port 0 lid 0 lmc 0\n";
  } else {
    out << "caguid=0x" << hex(n.node_guid) << '\n';
    out << "Ca\t" << unsigned{n.num_ports} << " \"" << n.name << "\"\t\t# \"" << n.description << "\"\n";
  }
  for (unsigned p = 1; p <= n.num_ports; ++p) {
    const PortRef here{index, static_cast<uint8_t>(p)};
    const auto link = t.link_at(here);
    if (!link) continue;
    const LinkDesc& l = t.links()[*link];
    const PortRef peer = l.a == here ? l.b : l.a;
    const NodeDesc& pn = t.nodes()[peer.node];
    out << '[' << p << ']';
    if (!sw) out << '(' << hex(n.port_guids[p]) << ") ";
    out << '\t' << peer_text(t, peer) << "\t\t# ";
    if (!sw) out << "lid 0 lmc 0 ";
    out << '"' << pn.description << "\" lid 0 " << l.rate.str() << '\n';
  }
}

}  // namespace

void write_netfile(std::ostream& out, const Topology& t) {
  out << "#\n# Topology file: written by ibfab\n# " << t.switch_count() << " switches, "
      << t.hca_count() << " HCAs, " << t.links().size() << " links\n#\n";
  for (uint32_t i = 0; i < t.nodes().size(); ++i) write_node(out, t, i);
}

}  // namespace ibfab::topo
