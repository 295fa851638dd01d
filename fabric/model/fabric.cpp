#include "fabric/model/fabric.h"

#include <algorithm>

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/crc.h"
#include "fabric/wire/lrh.h"
#include "fabric/wire/packet_codec.h"
#include "fabric/wire/pcap_writer.h"

namespace ibfab::fabric {

const char* to_string(DropReason r) {
  switch (r) {
    case DropReason::None: return "none";
    case DropReason::LinkDown: return "link-down";
    case DropReason::TooLarge: return "too-large";
    case DropReason::Loss: return "loss";
    case DropReason::NotActive: return "not-active";
    case DropReason::HoqLifetime: return "hoq-lifetime";
    case DropReason::NoRoute: return "no-route";
    case DropReason::kCount: break;
  }
  return "?";
}

uint64_t Fabric::Stats::total_dropped() const {
  uint64_t n = 0;
  for (uint64_t d : dropped) n += d;
  return n;
}

Fabric::Fabric(sim::Simulator& sim, const topo::Topology& topology, FabricOptions options)
    : sim_(&sim), options_(options) {
  const auto& descs = topology.nodes();
  const auto& links = topology.links();
  sim::Progress& progress = sim.progress();
  progress.begin("model build", "nodes and cables", descs.size() + links.size());
  nodes_.reserve(descs.size());
  by_name_.reserve(descs.size());
  for (uint32_t i = 0; i < descs.size(); ++i) {
    if (descs[i].kind == topo::NodeKind::Switch) nodes_.push_back(std::make_unique<Switch>(*this, i, descs[i]));
    else nodes_.push_back(std::make_unique<Hca>(*this, i, descs[i]));
    by_name_.emplace(nodes_.back()->name(), nodes_.back().get());
    progress.advance();
  }
  links_.reserve(links.size());
  for (uint32_t i = 0; i < links.size(); ++i) {
    const topo::LinkDesc& d = links[i];
    Port* a = &nodes_[d.a.node]->port(d.a.port);
    Port* b = &nodes_[d.b.node]->port(d.b.port);
    links_.push_back(std::make_unique<Link>(i, a, b, d.rate, d.propagation, sim::mix64(options_.seed, i)));
    a->attach(links_.back().get());
    b->attach(links_.back().get());
    progress.advance();
  }
  captured_.assign(links_.size(), false);
}

Fabric::~Fabric() { sim_->clear(); }

Node* Fabric::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Hca* Fabric::find_hca(std::string_view name) const {
  Node* n = find(name);
  return n && !n->is_switch() ? static_cast<Hca*>(n) : nullptr;
}

Switch* Fabric::find_switch(std::string_view name) const {
  Node* n = find(name);
  return n && n->is_switch() ? static_cast<Switch*>(n) : nullptr;
}

void Fabric::capture(wire::PcapWriter* writer, std::vector<uint32_t> links) {
  pcap_ = writer;
  std::fill(captured_.begin(), captured_.end(), links.empty());
  for (uint32_t id : links)
    if (id < captured_.size()) captured_[id] = true;
}

sim::Time Fabric::transmit(Port& out, PacketRef pkt, sim::Time ready) {
  Link* link = out.link();
  const uint8_t* b = pkt.bytes().data();
  const bool vl15 = (b[0] >> 4) == wire::Lrh::kVlManagement;
  if (!link || !out.node().up() || !out.link_up()) {
    out.counters.xmit_discards++;
    count_drop(DropReason::LinkDown);
    return ready;
  }
  // SMPs cross links in any logical state; everything else needs Active.
  if (!vl15 && out.state() != PortState::Active) {
    out.counters.xmit_discards++;
    count_drop(DropReason::NotActive);
    return ready;
  }
  const sim::Time start = std::max(ready, out.busy_until);
  const uint32_t size = pkt.size();
  if (start - ready > out.hoq_lifetime()) {
    out.counters.xmit_discards++;
    count_drop(DropReason::HoqLifetime);
    return ready;
  }
  const Transit t = link->carry(pkt.id(), size, start);
  if (t.drop == DropReason::TooLarge || t.drop == DropReason::LinkDown) {
    out.counters.xmit_discards++;
    count_drop(t.drop);
    return ready;
  }
  out.busy_until = start + t.serialisation;
  const uint16_t dlid = wire::load_be16(&b[wire::Lrh::kDlidOffset]);
  PortCounters& c = out.counters;
  c.xmit_pkts++;
  c.xmit_data += (size - 2) / 4;
  if (wire::is_multicast_lid(dlid)) c.multicast_xmit_pkts++;
  else c.unicast_xmit_pkts++;
  ++stats_.transmitted;
  Port* peer = link->peer_of(&out);
  const sim::Time left = out.busy_until;
  if (t.drop == DropReason::Loss) {
    // Corrupted on the wire: the receiver's CRC check rejects it.
    peer->counters.rcv_errors++;
    count_drop(DropReason::Loss);
    return left;
  }
  sim_->schedule_at(left + t.propagation,
                    [this, peer, link, p = std::move(pkt)]() mutable { arrive(*peer, *link, std::move(p)); });
  return left;
}

void Fabric::deliver(Port& in, PacketRef pkt) {
  if (!in.node().up()) return;
  if (in.link()) arrive(in, *in.link(), std::move(pkt));
}

void Fabric::arrive(Port& in, Link& link, PacketRef pkt) {
  if (!in.link_up()) {  // the link, or a node at either end, went down meanwhile
    count_drop(DropReason::LinkDown);
    return;
  }
  if (pkt.size() < wire::kMinPacketSize) {  // not even LRH, BTH and CRCs
    in.counters.rcv_errors++;
    return;
  }
  const uint8_t* b = pkt.bytes().data();
  const uint16_t dlid = wire::load_be16(&b[wire::Lrh::kDlidOffset]);
  PortCounters& c = in.counters;
  c.rcv_pkts++;
  c.rcv_data += (pkt.size() - 2) / 4;
  if (wire::is_multicast_lid(dlid)) c.multicast_rcv_pkts++;
  else c.unicast_rcv_pkts++;
  ++stats_.delivered;
  if (pcap_ && captured_[link.id()]) {
    pkt.seal();
    pcap_->write(sim_->now(), pkt.bytes());
  }
  sim::Trace& tr = sim_->trace();
  if (sim::RunDigest* d = tr.digest()) {
    // Every byte up to the ICRC: the CRCs are a function of the others,
    // and stay stale on a patched packet until something observes it.
    d->event(sim_->now(), in.node().index(), sim::kind_tag("rx"));
    d->fold(uint64_t{in.number()} << 32 | pkt.size());
    d->fold(pkt.id());
    d->fold_bytes(pkt.bytes().first(pkt.size() - wire::kIcrcSize - wire::kVcrcSize));
  }
  if (tr.enabled()) {
    tr.emit(sim_->now(), in.node().name(), "rx port=%u pkt=%llu len=%u dlid=0x%04x slid=0x%04x vl=%u",
            in.number(), static_cast<unsigned long long>(pkt.id()), pkt.size(), dlid,
            wire::load_be16(&b[wire::Lrh::kSlidOffset]), b[0] >> 4);
  }
  in.node().receive(in, std::move(pkt));
}

void Fabric::link_changed(Link& link, bool up) {
  for (int side = 0; side < 2; ++side) {
    Port* p = link.end(side);
    if (!up) {
      const bool was_active = p->logical_state() == PortState::Active;  // state() already says Down
      p->set_state(PortState::Init);  // it retrains into Init when the link returns
      p->counters.link_downed++;
      if (was_active) p->node().port_event(*p, PortEvent::Error);
    }
    if (p->node().is_switch()) static_cast<Switch&>(p->node()).note_port_state_change();
  }
  sim::Trace& tr = sim_->trace();
  if (sim::RunDigest* d = tr.digest()) {
    d->event(sim_->now(), link.id(), sim::kind_tag("link"));
    d->fold(up);
  }
  if (tr.enabled()) {
    tr.emit(sim_->now(), "fabric", "link %u %s[%u]-%s[%u] %s", link.id(), link.end(0)->node().name().c_str(),
            link.end(0)->number(), link.end(1)->node().name().c_str(), link.end(1)->number(), up ? "up" : "down");
  }
}

void Fabric::set_link_up(Link& link, bool up) {
  if (link.up() == up) return;
  const bool was_physical = link.end(0)->link_up();
  link.set_up(up);
  link.end(0)->refresh_phys();
  link.end(1)->refresh_phys();
  if (was_physical != link.end(0)->link_up()) link_changed(link, up);
}

void Fabric::set_node_up(Node& node, bool up) {
  if (node.up() == up) return;
  std::vector<std::pair<Link*, bool>> before;
  for (uint8_t n = 1; n <= node.num_ports(); ++n) {
    if (Link* l = node.port(n).link()) before.emplace_back(l, node.port(n).link_up());
  }
  node.set_up(up);
  for (auto [l, was] : before) {
    l->end(0)->refresh_phys();
    l->end(1)->refresh_phys();
    if (l->end(0)->link_up() != was) link_changed(*l, !was);
  }
  sim::Trace& tr = sim_->trace();
  if (sim::RunDigest* d = tr.digest()) {
    d->event(sim_->now(), node.index(), sim::kind_tag("node"));
    d->fold(up);
  }
  if (tr.enabled()) tr.emit(sim_->now(), node.name(), "node %s", up ? "up" : "down");
}

}  // namespace ibfab::fabric
