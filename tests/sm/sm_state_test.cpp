// SM election, standby polling, failover, handover, light sweeps and
// traps: two SubnetManagers on one fabric, talking only through SMPs. The
// checks look at the fabric itself (LIDs, MasterSMLID, real LFTs and MFTs)
// and ask SMInfo from a third host, as smpquery would.
#include <array>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fabric/mad/notice.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sm_info.h"
#include "fabric/model/fabric.h"
#include "fabric/model/mcast_check.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/mad_header.h"
#include "sm/subnet_manager.h"
#include "tests/fabric/model/mad_client.h"

namespace ibfab::sm {
namespace {

using fabric::testing::Mad;
using fabric::testing::MadClient;
using sim::Time;

struct TwoSms {
  sim::Simulator sim;
  topo::Topology topology;
  fabric::Fabric fabric;
  std::unique_ptr<SubnetManager> a, b;

  // `a` on H1, `b` on H5 (another leaf), each with its priority.
  TwoSms(uint8_t prio_a, uint8_t prio_b, const std::string& spec = "fat-tree:2:4",
         fabric::FabricOptions fo = {})
      : topology(topo::load_topology(spec)), fabric(sim, topology, fo) {
    a = std::make_unique<SubnetManager>(*fabric.find_hca("H1"), 1, options(prio_a));
    b = std::make_unique<SubnetManager>(*fabric.find_hca("H5"), 1, options(prio_b));
  }
  static SmOptions options(uint8_t priority) {
    SmOptions o;
    o.priority = priority;
    return o;
  }
  void run_for(Time t) { sim.run_until(sim.now() + t); }
  uint64_t guid(const std::string& host) { return fabric.find_hca(host)->port(1).guid(); }
  std::vector<const fabric::Hca*> hosts() {
    std::vector<const fabric::Hca*> out;
    for (uint32_t i = 0; i < fabric.node_count(); ++i)
      if (!fabric.node(i).is_switch()) out.push_back(static_cast<const fabric::Hca*>(&fabric.node(i)));
    return out;
  }
  // Every end port's LID, by node name.
  std::map<std::string, uint16_t> lids() {
    std::map<std::string, uint16_t> m;
    for (uint32_t i = 0; i < fabric.node_count(); ++i) {
      fabric::Node& n = fabric.node(i);
      m[n.name()] = n.is_switch() ? n.port(0).lid : n.port(1).lid;
    }
    return m;
  }
  // Follows the real LFTs, over links that are up, from `from` to `lid`.
  const fabric::Node* walk(const fabric::Hca& from, uint16_t lid) {
    const fabric::Port* at = from.port(1).link_up() ? from.port(1).peer() : nullptr;
    for (int hop = 0; hop < 64 && at; ++hop) {
      const auto& sw = static_cast<const fabric::Switch&>(at->node());
      const uint8_t out = sw.lft(lid);
      if (out == 0) return &sw;
      if (out > sw.num_ports() || !sw.port(out).link_up()) return nullptr;
      const fabric::Port* next = sw.port(out).peer();
      if (!next) return nullptr;
      if (!next->node().is_switch()) return &next->node();
      at = next;
    }
    return nullptr;
  }
  // Every host reaches every other host by LID; the number that do not.
  int broken_routes() {
    int broken = 0;
    for (const fabric::Hca* x : hosts())
      for (const fabric::Hca* y : hosts())
        if (x != y && walk(*x, y->port(1).lid) != y) ++broken;
    return broken;
  }
  // Every port's MasterSMLID is `lid`.
  bool master_sm_lid_is(uint16_t lid) {
    for (const fabric::Hca* h : hosts())
      if (h->port(1).master_sm_lid != lid) return false;
    return true;
  }
  // SubnGet(SMInfo), LID-routed from H8 to `lid`.
  mad::SmInfo sm_info_at(uint16_t lid, uint16_t* status = nullptr) {
    MadClient c(fabric, *fabric.find_hca("H8"), wire::mgmt_class::kSubnLid);
    fabric::MadAddress to;
    to.lid = lid;
    auto r = c.request(MadClient::request_mad(wire::mgmt_class::kSubnLid, 1, wire::mad_method::kGet,
                                              mad::SmInfo::kAttributeId, 0),
                       to);
    EXPECT_TRUE(r.has_value());
    if (!r) return {};
    if (status) *status = MadClient::status(*r);
    return mad::SmInfo::unpack(MadClient::smp_data(*r));
  }
};

TEST(SmState, HigherPriorityBecomesMasterTheOtherStandsBy) {
  TwoSms t(/*a=*/3, /*b=*/5);
  t.a->start();
  t.b->start();
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.b->master());
  ASSERT_EQ(t.a->state(), mad::sm_state::kStandby);
  EXPECT_TRUE(t.b->subnet_up());
  EXPECT_FALSE(t.a->subnet_up());
  // Only the master configured: the standby sent nothing past its discovery.
  const SweepReport& sa = t.a->last_sweep();
  EXPECT_FALSE(sa.master);
  EXPECT_EQ(sa.state, mad::sm_state::kStandby);
  EXPECT_EQ(sa.master_guid, t.guid("H5"));
  EXPECT_EQ(sa.smps_lids + sa.smps_routing + sa.smps_activation, 0u);
  EXPECT_EQ(t.a->smp().sent(), sa.smps_discovery);
  EXPECT_EQ(sa.remote_sms, 1u);
  const SweepReport& sb = t.b->last_sweep();
  EXPECT_TRUE(sb.master);
  EXPECT_EQ(sb.heavy_sweeps, 1u);
  EXPECT_GT(sb.smps_routing, 0u);
  EXPECT_GT(sb.master_since, sb.started) << "master from the end of its discovery";
  EXPECT_LE(sb.master_since, sb.lids_set);
  EXPECT_TRUE(t.master_sm_lid_is(t.b->own_lid()));
  EXPECT_EQ(t.broken_routes(), 0);
  // A third host asks both for their SMInfo.
  const mad::SmInfo ia = t.sm_info_at(t.fabric.find_hca("H1")->port(1).lid);
  const mad::SmInfo ib = t.sm_info_at(t.fabric.find_hca("H5")->port(1).lid);
  EXPECT_EQ(ia.sm_state, mad::sm_state::kStandby);
  EXPECT_EQ(ia.priority, 3);
  EXPECT_EQ(ia.guid, t.guid("H1"));
  EXPECT_EQ(ib.sm_state, mad::sm_state::kMaster);
  EXPECT_EQ(ib.priority, 5);
  EXPECT_EQ(ib.guid, t.guid("H5"));
  EXPECT_EQ(ib.sm_key, 0u);
  EXPECT_GT(ib.act_count, 0u);
}

TEST(SmState, EqualPrioritiesGoToTheLowerGuid) {
  TwoSms t(4, 4);
  t.b->start();  // the order of starting does not matter
  t.a->start();
  t.run_for(Time::s(1));
  const bool a_lower = t.guid("H1") < t.guid("H5");
  SubnetManager& winner = a_lower ? *t.a : *t.b;
  SubnetManager& loser = a_lower ? *t.b : *t.a;
  EXPECT_TRUE(winner.master());
  EXPECT_EQ(loser.state(), mad::sm_state::kStandby);
  EXPECT_EQ(loser.last_sweep().smps_lids, 0u);
  EXPECT_TRUE(t.master_sm_lid_is(winner.own_lid()));
  EXPECT_EQ(t.sm_info_at(t.fabric.find_hca(a_lower ? "H5" : "H1")->port(1).lid).sm_state,
            mad::sm_state::kStandby);
}

TEST(SmState, StandbyTakesOverWhenTheMasterDiesAndLidsStay) {
  TwoSms t(5, 3);
  struct Events : fabric::PortEventListener {
    int reregister = 0;
    void on_port_event(fabric::Hca&, uint8_t, fabric::PortEvent e) override {
      reregister += e == fabric::PortEvent::ClientReregister;
    }
  } ev;
  t.fabric.find_hca("H7")->add_listener(&ev);
  t.a->start();
  t.b->start();
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.a->master());
  ASSERT_EQ(t.b->state(), mad::sm_state::kStandby);
  EXPECT_EQ(ev.reregister, 1);
  t.run_for(Time::s(15));  // the standby polls a live master: nothing changes
  EXPECT_GE(t.b->last_sweep().polls, 1u);
  EXPECT_EQ(t.b->last_sweep().failed_polls, 0u);
  EXPECT_EQ(t.b->state(), mad::sm_state::kStandby);
  EXPECT_GE(t.a->last_sweep().light_sweeps, 1u);
  EXPECT_EQ(t.a->last_sweep().heavy_sweeps, 1u) << "nothing changed: light sweeps only";
  const auto lids = t.lids();

  const Time killed = t.sim.now();
  t.a->stop();
  EXPECT_EQ(t.a->state(), mad::sm_state::kNotActive);
  uint16_t st = 0;
  t.sm_info_at(t.fabric.find_hca("H1")->port(1).lid, &st);
  EXPECT_EQ(st, wire::mad_status::kMethodAttrUnsupported) << "a dead SM does not answer SMInfo";
  const SmOptions o;
  t.run_for(o.poll_interval * static_cast<int64_t>(o.poll_retries + 1));
  ASSERT_TRUE(t.b->master());
  ASSERT_TRUE(t.b->subnet_up());
  const SweepReport& r = t.b->last_sweep();
  EXPECT_TRUE(r.master);
  EXPECT_GE(r.failed_polls, o.poll_retries);
  EXPECT_GT(r.master_since, killed);
  EXPECT_LE(r.master_since - killed, o.poll_interval * static_cast<int64_t>(o.poll_retries + 1));
  EXPECT_EQ(t.lids(), lids) << "hosts keep their LIDs across the failover";
  EXPECT_TRUE(t.master_sm_lid_is(t.b->own_lid()));
  EXPECT_EQ(t.broken_routes(), 0);
  EXPECT_EQ(ev.reregister, 2) << "the new master's first sweep sets ClientReregister";
  EXPECT_EQ(t.sm_info_at(t.b->own_lid()).sm_state, mad::sm_state::kMaster);
  t.fabric.find_hca("H7")->remove_listener(&ev);
}

TEST(SmState, MasterHandsOverToABetterStandby) {
  TwoSms t(5, 3);
  t.b->start();  // the weaker SM comes first and configures the subnet
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.b->master());
  const auto lids = t.lids();
  t.a->start();  // finds a master: goes Standby whatever its priority
  t.run_for(Time::s(1));
  EXPECT_EQ(t.a->state(), mad::sm_state::kStandby);
  // The master's next heavy sweep finds the better standby and hands over.
  t.b->sweep();
  t.run_for(Time::s(1));
  EXPECT_TRUE(t.a->master());
  EXPECT_EQ(t.b->state(), mad::sm_state::kStandby);
  EXPECT_EQ(t.b->last_sweep().master_guid, t.guid("H1"));
  EXPECT_TRUE(t.a->subnet_up());
  EXPECT_EQ(t.lids(), lids);
  EXPECT_TRUE(t.master_sm_lid_is(t.a->own_lid()));
  EXPECT_EQ(t.broken_routes(), 0);
}

// The first link between two switches, found in the fabric.
fabric::Link* switch_link(fabric::Fabric& f, const std::string& sw) {
  fabric::Switch& s = *f.find_switch(sw);
  for (uint8_t p = 1; p <= s.num_ports(); ++p)
    if (s.port(p).peer() && s.port(p).peer()->node().is_switch() && s.port(p).link_up()) return s.port(p).link();
  return nullptr;
}

// Switches that send no traps: the SM's light sweep sees SwitchInfo's
// PortStateChange and re-sweeps.
TEST(SmState, LightSweepNoticesALinkDownAndTheHeavySweepReroutes) {
  fabric::FabricOptions quiet;
  quiet.switch_traps = false;
  TwoSms t(5, 3, "fat-tree:2:4", quiet);
  t.a->start();
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.a->master());
  ASSERT_EQ(t.broken_routes(), 0);
  fabric::Link* l = switch_link(t.fabric, "S1");
  ASSERT_NE(l, nullptr);
  t.fabric.set_link_up(*l, false);
  EXPECT_GT(t.broken_routes(), 0) << "the old routes used the link";
  t.run_for(SmOptions{}.sweep_interval);
  const SweepReport& r = t.a->last_sweep();
  EXPECT_GE(r.light_sweeps, 1u);
  EXPECT_EQ(r.heavy_sweeps, 2u);
  EXPECT_EQ(t.broken_routes(), 0);
  // Nothing changes after that: light sweeps only.
  t.run_for(SmOptions{}.sweep_interval * 3);
  EXPECT_EQ(t.a->last_sweep().heavy_sweeps, 2u);
}

// Switches that do: both ends of the cable send Trap 128 to the master,
// which re-sweeps at once, answers each with TrapRepress (the switches
// take it), and routes around the cable within a millisecond.
TEST(SmState, Trap128FromTheSwitchesTriggersAHeavySweepAtOnce) {
  TwoSms t(5, 3);
  t.a->start();
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.a->master());
  const uint64_t heavy = t.a->last_sweep().heavy_sweeps;
  fabric::Link* l = switch_link(t.fabric, "S1");
  ASSERT_NE(l, nullptr);
  uint64_t dropped_before = 0;
  for (uint32_t i = 0; i < t.fabric.node_count(); ++i)
    for (uint8_t p = 0; p <= t.fabric.node(i).num_ports(); ++p) dropped_before += t.fabric.node(i).port(p).counters.vl15_dropped;
  t.fabric.set_link_up(*l, false);
  t.run_for(Time::ms(1));
  uint64_t traps = 0, dropped = 0;
  for (uint32_t i = 0; i < t.fabric.node_count(); ++i) {
    const fabric::Node& n = t.fabric.node(i);
    if (n.is_switch()) traps += static_cast<const fabric::Switch&>(n).traps_sent;
    for (uint8_t p = 0; p <= n.num_ports(); ++p) dropped += n.port(p).counters.vl15_dropped;
  }
  EXPECT_EQ(traps, 2u) << "one per end of the cable";
  EXPECT_GT(t.a->last_sweep().heavy_sweeps, heavy);
  EXPECT_EQ(t.a->last_sweep().light_sweeps, 0u) << "no light sweep was needed";
  EXPECT_EQ(t.broken_routes(), 0);
  EXPECT_EQ(dropped, dropped_before) << "TrapRepress is taken by the switch, not dropped";
}

wire::Gid test_mgid() {
  wire::Gid g;
  g.raw[0] = 0xFF;
  g.raw[1] = 0x12;
  g.raw[2] = 0x40;
  g.raw[3] = 0x01;
  g.raw[15] = 0x42;
  return g;
}

TEST(SmState, MulticastTreesAreReroutedAfterALinkFailure) {
  TwoSms t(5, 3);
  t.a->start();
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.a->master());
  McastGroups& groups = *t.a->groups();
  const Subnet& subnet = t.a->subnet();
  const std::vector<std::string> members = {"H2", "H3", "H6", "H8"};
  std::vector<const fabric::Port*> ports;
  for (const std::string& h : members) {
    const fabric::Hca& hca = *t.fabric.find_hca(h);
    ports.push_back(&hca.port(1));
    mad::McMemberRecord rec;
    rec.mgid = test_mgid();
    rec.port_gid = wire::Gid::from(subnet.prefix, hca.port(1).guid());
    rec.q_key = 0x11111111;
    rec.p_key = 0xFFFF;
    rec.join_state = 1;
    const McastResult res = groups.join(subnet.port_by_guid.at(hca.port(1).guid()), rec,
                                        mad::mcm_comp::kCreateRequiredMask);
    ASSERT_EQ(res.status, 0) << h;
  }
  t.run_for(Time::ms(10));
  const uint16_t mlid = groups.find(test_mgid())->rec.mlid;
  ASSERT_TRUE(fabric::check_multicast(t.fabric, mlid, ports).ok);
  // A switch-to-switch link the tree uses.
  fabric::Link* used = nullptr;
  for (uint32_t i = 0; i < t.fabric.node_count() && !used; ++i) {
    fabric::Node& n = t.fabric.node(i);
    if (!n.is_switch()) continue;
    const auto& sw = static_cast<const fabric::Switch&>(n);
    for (uint8_t p = 1; p <= sw.num_ports() && !used; ++p)
      if ((sw.mft(mlid, static_cast<uint8_t>(p / 16)) >> (p % 16) & 1) && sw.port(p).peer() &&
          sw.port(p).peer()->node().is_switch())
        used = sw.port(p).link();
  }
  ASSERT_NE(used, nullptr);
  t.fabric.set_link_up(*used, false);
  EXPECT_FALSE(fabric::check_multicast(t.fabric, mlid, ports).ok) << "the tree crossed the link";
  t.run_for(SmOptions{}.sweep_interval + Time::s(1));
  EXPECT_EQ(t.a->last_sweep().heavy_sweeps, 2u);
  const fabric::McastCheck c = fabric::check_multicast(t.fabric, mlid, ports);
  EXPECT_TRUE(c.ok) << c.problem;
}

// Sends a Trap 128 to the master as a switch would, and takes the
// TrapRepress.
struct TrapSender : fabric::MadAgent {
  fabric::Hca& hca;
  uint32_t id = 0;
  std::vector<Mad> got;
  explicit TrapSender(fabric::Hca& h) : hca(h) {
    fabric::Hca::AgentSpec spec;
    spec.mgmt_class = wire::mgmt_class::kSubnLid;
    spec.methods[0] = uint64_t{1} << wire::mad_method::kTrapRepress;
    id = h.register_agent(spec, this);
  }
  ~TrapSender() override { hca.unregister_agent(id); }
  void on_mad(fabric::Port&, const fabric::MadAddress&, std::span<const uint8_t> mad) override {
    Mad m;
    std::copy(mad.begin(), mad.begin() + 256, m.begin());
    got.push_back(m);
  }
  void send(uint16_t to_lid) {
    Mad m = MadClient::request_mad(wire::mgmt_class::kSubnLid, 1, wire::mad_method::kTrap,
                                   mad::Notice::kAttributeId, 0);
    mad::Notice n;
    n.is_generic = true;
    n.type = mad::notice_type::kUrgent;
    n.producer_type = mad::producer_type::kSwitch;
    n.trap_number = mad::trap_number::kLinkStateChanged;
    n.issuer_lid = hca.port(1).lid;
    // An SMP's data holds the Notice's first 64 of its 80 bytes (no IssuerGID).
    std::array<uint8_t, mad::Notice::kSize> notice{};
    n.pack(notice);
    const std::span<uint8_t> data = MadClient::smp_data(m);
    std::copy_n(notice.begin(), data.size(), data.begin());
    fabric::MadAddress a;
    a.lid = to_lid;
    hca.send_mad(id, a, m);
  }
};

TEST(SmState, Trap128MakesTheMasterSweepAndIsRepressed) {
  TwoSms t(5, 3);
  t.a->start();
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.a->master());
  TrapSender trap(*t.fabric.find_hca("H6"));
  ASSERT_NE(trap.id, 0u);
  trap.send(t.a->own_lid());
  t.run_for(Time::ms(100));  // far less than the sweep interval
  ASSERT_EQ(trap.got.size(), 1u);
  EXPECT_EQ(trap.got[0][3], wire::mad_method::kTrapRepress);
  EXPECT_EQ(t.a->last_sweep().heavy_sweeps, 2u);
  EXPECT_EQ(t.a->last_sweep().light_sweeps, 0u);
}

TEST(SmState, SmInfoSetDisableAndDiscover) {
  TwoSms t(5, 3);
  t.a->start();
  t.run_for(Time::s(1));
  ASSERT_TRUE(t.a->master());
  MadClient c(t.fabric, *t.fabric.find_hca("H8"), wire::mgmt_class::kSubnLid);
  fabric::MadAddress to;
  to.lid = t.a->own_lid();
  auto set = [&](uint32_t modifier) {
    auto r = c.request(MadClient::request_mad(wire::mgmt_class::kSubnLid, 1, wire::mad_method::kSet,
                                              mad::SmInfo::kAttributeId, modifier),
                       to);
    EXPECT_TRUE(r.has_value());
    return r ? mad::SmInfo::unpack(MadClient::smp_data(*r)) : mad::SmInfo{};
  };
  EXPECT_EQ(set(mad::sm_info_modifier::kDisable).sm_state, mad::sm_state::kNotActive);
  EXPECT_EQ(t.a->state(), mad::sm_state::kNotActive);
  EXPECT_EQ(set(mad::sm_info_modifier::kDiscover).sm_state, mad::sm_state::kDiscovering);
  t.run_for(Time::s(1));
  EXPECT_TRUE(t.a->master());
}

}  // namespace
}  // namespace ibfab::sm
