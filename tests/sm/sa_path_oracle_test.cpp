// PathRecords checked against the fabric itself, not against the SA's own
// computation: a SubnetManager brings up fat-tree:2:4 whose links run at
// five different rates and whose ports have five different MTUCaps, then
// every PathRecord the SA answers is compared with a walk of the switches'
// LFTs as the model holds them (fabric::Switch::lft), the MTUCap of every
// port the walk crosses and the nominal rate of every cable it crosses.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fabric/mad/sa/path_record.h"
#include "fabric/model/fabric.h"
#include "fabric/model/link.h"
#include "fabric/model/switch_node.h"
#include "fabric/topology/topology_spec.h"
#include "sm/subnet_manager.h"
#include "tests/sm/sa_rate_oracle.h"
#include "tests/sm/sa_table_client.h"

namespace ibfab::sm {
namespace {

using testing::SaClient;
using testing::tenths_of_sa_rate;
namespace method = wire::mad_method;
namespace st = wire::mad_status;
namespace pr = mad::pr_comp;

// Nominal Gb/s of a cable (lanes x the IBTA's per-lane figure), in tenths.
int tenths_of_link(const fabric::LinkRate& r) {
  int lane = 0;
  switch (r.speed) {
    case fabric::LinkSpeed::SDR: lane = 25; break;
    case fabric::LinkSpeed::DDR: lane = 50; break;
    case fabric::LinkSpeed::QDR: lane = 100; break;
    case fabric::LinkSpeed::FDR: lane = 140; break;
    case fabric::LinkSpeed::EDR: lane = 250; break;
    case fabric::LinkSpeed::HDR: lane = 500; break;
    case fabric::LinkSpeed::NDR: lane = 1000; break;
  }
  const int lanes[] = {1, 2, 4, 8, 12};
  return lane * lanes[static_cast<int>(r.width)];
}

// fat-tree:2:4 re-cabled so that its links take turns at five rates.
topo::Topology mixed_rates() {
  const topo::Topology base = topo::load_topology("fat-tree:2:4");
  const char* rates[] = {"4xEDR", "4xQDR", "4xFDR", "4xDDR", "1xQDR"};
  topo::Topology t;
  for (const topo::NodeDesc& n : base.nodes()) t.add_node(n);
  for (std::size_t i = 0; i < base.links().size(); ++i) {
    const topo::LinkDesc& l = base.links()[i];
    t.connect(l.a, l.b, *fabric::LinkRate::parse(rates[i % 5]), l.propagation);
  }
  return t;
}

struct SaPathOracle : ::testing::Test {
  sim::Simulator sim;
  topo::Topology topology{mixed_rates()};
  fabric::Fabric fabric{sim, topology};
  std::optional<SubnetManager> sm;
  std::optional<SaClient> client;

  void SetUp() override {
    const uint8_t caps[] = {5, 4, 3, 5, 2, 4, 5};
    int k = 0;
    for (uint32_t i = 0; i < fabric.node_count(); ++i) {
      fabric::Node& n = fabric.node(i);
      for (uint8_t p = 1; p <= n.num_ports(); ++p) {
        // A port's NeighborMTU starts within its MTUCap, as on hardware.
        n.port(p).mtu_cap = caps[k++ % 7];
        n.port(p).neighbor_mtu = n.port(p).mtu_cap;
      }
    }
    sm.emplace(*fabric.find_hca("H1"), 1, SmOptions{});
    sm->sweep();
    sim.run();
    ASSERT_TRUE(sm->subnet_up()) << sm->last_sweep().error;
    client.emplace(fabric, h(2), sm->own_lid());
  }
  fabric::Hca& h(int i) const { return *fabric.find_hca("H" + std::to_string(i)); }

  // The end port a LID names: an HCA port, or a switch's port 0.
  const fabric::Port* end_port(uint16_t lid) const {
    for (uint32_t i = 0; i < fabric.node_count(); ++i) {
      fabric::Node& n = fabric.node(i);
      for (uint8_t p = n.is_switch() ? 0 : 1; p <= (n.is_switch() ? 0 : n.num_ports()); ++p)
        if (n.port(p).owns_lid(lid)) return &n.port(p);
    }
    return nullptr;
  }

  // Hops between two nodes over the cables, breadth first.
  int distance(const fabric::Node& from, const fabric::Node& to) const {
    std::map<const fabric::Node*, int> d{{&from, 0}};
    std::queue<const fabric::Node*> q;
    q.push(&from);
    while (!q.empty()) {
      const fabric::Node* n = q.front();
      q.pop();
      if (n == &to) return d[n];
      for (uint8_t p = 1; p <= n->num_ports(); ++p) {
        const fabric::Port* peer = const_cast<fabric::Node*>(n)->port(p).peer();
        if (peer && d.emplace(&peer->node(), d[n] + 1).second) q.push(&peer->node());
      }
    }
    return -1;
  }

  struct Walk {
    bool reached = false;
    int links = 0;
    uint8_t mtu = 0;   // smallest MTUCap of the ports crossed
    int tenths = 0;    // slowest cable crossed
  };
  // Follows the model's LFTs from `src` towards `dlid` until the end port
  // `dst`, as a packet would.
  static Walk walk(const fabric::Port& src, const fabric::Port& dst, uint16_t dlid) {
    Walk w;
    w.mtu = std::min(src.mtu_cap, dst.mtu_cap);
    w.tenths = 1 << 30;
    const fabric::Port* at = &src;
    for (int guard = 0; guard < 64; ++guard) {
      if (at == &dst) {
        w.reached = true;
        return w;
      }
      const fabric::Port* out = at;
      if (at->node().is_switch()) {
        const auto& sw = static_cast<const fabric::Switch&>(at->node());
        const uint8_t p = sw.lft(dlid);
        if (p > sw.num_ports()) return w;
        out = &const_cast<fabric::Switch&>(sw).port(p);
        w.mtu = std::min(w.mtu, out->mtu_cap);
        if (out == &dst) continue;  // the switch itself, port 0
      }
      const fabric::Port* in = out->peer();
      if (!in) return w;
      w.tenths = std::min(w.tenths, tenths_of_link(out->link()->rate()));
      ++w.links;
      w.mtu = std::min(w.mtu, in->mtu_cap);
      at = in;
      if (in->node().is_switch() && &dst == &in->node().port(0)) at = &dst;
    }
    return w;
  }
};

TEST_F(SaPathOracle, EveryRecordMatchesAWalkOfTheModelsLfts) {
  const auto all = testing::ask(*client, SaClient::make(method::kGetTable, 0, mad::PathRecord{}));
  ASSERT_TRUE(all);
  ASSERT_EQ(all->status, st::kOk);
  std::set<std::pair<uint16_t, uint16_t>> seen;
  std::size_t end_ports = 0, host_pairs = 0;
  std::set<uint8_t> mtus;
  std::set<int> rates;
  for (uint32_t i = 0; i < fabric.node_count(); ++i)
    end_ports += fabric.node(i).is_switch() ? 1 : fabric.node(i).num_ports();
  for (std::size_t k = 0; k < all->count(); ++k) {
    const auto p = all->record<mad::PathRecord>(k);
    const fabric::Port* s = end_port(p.slid);
    const fabric::Port* d = end_port(p.dlid);
    ASSERT_TRUE(s && d) << p.slid << "->" << p.dlid;
    EXPECT_TRUE(seen.emplace(p.slid, p.dlid).second) << "one record per pair";
    EXPECT_EQ(p.slid, s->lid) << "base LIDs";
    EXPECT_EQ(p.dlid, d->lid);
    EXPECT_EQ(p.sgid.guid(), s->guid());
    EXPECT_EQ(p.dgid.guid(), d->guid());
    EXPECT_EQ(p.sgid.prefix(), s->gid_prefix);
    const Walk w = walk(*s, *d, p.dlid);
    ASSERT_TRUE(w.reached) << p.slid << "->" << p.dlid << ": the LFTs lead nowhere";
    EXPECT_EQ(w.links, distance(s->node(), d->node())) << "minhop: a shortest path";
    // From a switch, the SA (as OpenSM's pr_rcv_get_path_parms, in its
    // reading) starts from port 0 and does not count the first egress port,
    // so it may answer more than the cables carry: there, no less.
    if (s->node().is_switch())
      EXPECT_GE(p.mtu, w.mtu) << p.slid << "->" << p.dlid;
    else
      EXPECT_EQ(p.mtu, w.mtu) << p.slid << "->" << p.dlid;
    // A switch end counts its port 0, whose PortInfo carries no link (the
    // SA takes 2.5 Gb/s there, as OpenSM does; real.sa_path_diff compares
    // those with OpenSM): the rate is checked between hosts.
    if (s != d && !s->node().is_switch() && !d->node().is_switch()) {
      EXPECT_EQ(tenths_of_sa_rate(p.rate), w.tenths) << p.slid << "->" << p.dlid;
      rates.insert(w.tenths);
    }
    mtus.insert(w.mtu);
    EXPECT_EQ(p.p_key, 0xFFFF) << "the default partition only";
    EXPECT_EQ(p.sl, 0);
    EXPECT_TRUE(p.reversible);
    EXPECT_EQ(p.mtu_selector, mad::selector::kExactly);
    EXPECT_EQ(p.rate_selector, mad::selector::kExactly);
    host_pairs += !s->node().is_switch() && !d->node().is_switch();
  }
  EXPECT_EQ(all->count(), end_ports * end_ports) << "every end port reaches every other";
  EXPECT_EQ(host_pairs, 64u);
  // The fabric's variety shows in the answers, so the minima were tested.
  EXPECT_GE(mtus.size(), 3u);
  EXPECT_GE(rates.size(), 3u);
}

// A Get naming both ends: SL, P_Key, TClass, FlowLabel and HopLimit as the
// request asked, LIDs and GIDs those of the two ports, MTU and rate those of
// the walk, or lower when a selector asks for less.
TEST_F(SaPathOracle, AGetKeepsWhatTheRequestAsked) {
  for (int a = 1; a <= 8; ++a) {
    for (int b = 1; b <= 8; ++b) {
      const fabric::Port& s = h(a).port(1);
      const fabric::Port& d = h(b).port(1);
      const Walk w = walk(s, d, d.lid);
      ASSERT_TRUE(w.reached);
      mad::PathRecord q;
      q.sgid = wire::Gid::from(s.gid_prefix, s.guid());
      q.dgid = wire::Gid::from(d.gid_prefix, d.guid());
      q.sl = static_cast<uint8_t>((a + b) % 16);
      q.p_key = 0xFFFF;
      q.tclass = static_cast<uint8_t>(a * 16 + b);
      q.flow_label = static_cast<uint32_t>(a * 4096 + b);
      q.hop_limit = static_cast<uint8_t>(a + b);
      q.mtu_selector = mad::selector::kLessThan;
      q.mtu = static_cast<uint8_t>(w.mtu + 1);
      const uint64_t mask = pr::kSgid | pr::kDgid | pr::kSl | pr::kPKey | pr::kTClass |
                            pr::kFlowLabel | pr::kHopLimit | pr::kMtuSelector | pr::kMtu;
      const auto r = testing::ask(*client, SaClient::make(method::kGet, mask, q));
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, st::kOk) << a << "->" << b;
      const auto p = r->record<mad::PathRecord>(0);
      EXPECT_EQ(p.slid, s.lid);
      EXPECT_EQ(p.dlid, d.lid);
      EXPECT_EQ(p.sgid, q.sgid);
      EXPECT_EQ(p.dgid, q.dgid);
      EXPECT_EQ(p.sl, q.sl);
      EXPECT_EQ(p.p_key, q.p_key);
      EXPECT_EQ(p.tclass, q.tclass);
      EXPECT_EQ(p.flow_label, q.flow_label);
      EXPECT_EQ(p.hop_limit, q.hop_limit);
      EXPECT_LT(p.mtu, q.mtu);
      EXPECT_EQ(p.mtu, w.mtu) << "the largest below the selector's";
      if (a != b) EXPECT_EQ(tenths_of_sa_rate(p.rate), w.tenths);
      // More than the path carries: no path.
      q.mtu_selector = mad::selector::kGreaterThan;
      q.mtu = w.mtu;
      const auto none = testing::ask(*client, SaClient::make(method::kGet, mask, q));
      ASSERT_TRUE(none);
      EXPECT_EQ(none->status, st::kSaNoRecords) << a << "->" << b;
    }
  }
}

}  // namespace
}  // namespace ibfab::sm
