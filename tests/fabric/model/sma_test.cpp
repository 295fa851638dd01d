// The SMA of every node, reached the way an SM reaches it: directed-route
// and LID-routed SMPs sent from an HCA across the modelled fabric.
#include <gtest/gtest.h>

#include <cstring>

#include "fabric/mad/forwarding_tables.h"
#include "fabric/mad/guid_info.h"
#include "fabric/mad/sm_info.h"
#include "fabric/mad/smi.h"
#include "fabric/mad/node_description.h"
#include "fabric/mad/node_info.h"
#include "fabric/mad/pkey_table.h"
#include "fabric/mad/port_info.h"
#include "fabric/mad/sl_to_vl_table.h"
#include "fabric/mad/switch_info.h"
#include "fabric/mad/vl_arbitration_table.h"
#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/mad_client.h"

namespace ibfab::fabric {
namespace {

using testing::Mad;
using testing::MadClient;
namespace st = wire::mad_status;
constexpr uint8_t kGet = 1, kSet = 2;

// line:2 = S1 - S2, H1 on S1, H2 on S2. Find the ports from the topology.
class SmaTest : public ::testing::Test {
 protected:
  SmaTest() : topo(topo::load_topology("line:2")), fabric(sim, topo) {}

  uint8_t port_towards(const char* from, const char* to) {
    Node* a = fabric.find(from);
    for (uint8_t n = 1; n <= a->num_ports(); ++n) {
      Port* peer = a->port(n).peer();
      if (peer && peer->node().name() == to) return n;
    }
    ADD_FAILURE() << "no link " << from << " -> " << to;
    return 0;
  }

  sim::Simulator sim;
  topo::Topology topo;
  Fabric fabric;
};

TEST_F(SmaTest, DirectedRouteNodeInfoFromTheAdjacentSwitch) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  auto r = sm.request(MadClient::dr_smp(kGet, mad::NodeInfo::kAttributeId, 0, {1}));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[3], 0x81) << "GetResp";
  EXPECT_TRUE(wire::load_be16(&(*r)[4]) & 0x8000) << "D bit set on the way back";
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  const auto ni = mad::NodeInfo::unpack(MadClient::smp_data(*r));
  const Switch* s1 = fabric.find_switch("S1");
  EXPECT_EQ(ni.node_type, mad::NodeInfo::kTypeSwitch);
  EXPECT_EQ(ni.node_guid, s1->guid());
  EXPECT_EQ(ni.num_ports, s1->num_ports());
  EXPECT_EQ(ni.local_port_num, fabric.find_hca("H1")->port(1).peer()->number());
  EXPECT_EQ(wire::load_be64(&(*r)[8]) & 0xFFFFFFFF, 0x1234u) << "TID low bits echoed";
}

TEST_F(SmaTest, DirectedRouteAcrossTwoSwitchesToTheFarHost) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  const uint8_t s1_to_s2 = port_towards("S1", "S2");
  const uint8_t s2_to_h2 = port_towards("S2", "H2");
  auto r = sm.request(MadClient::dr_smp(kGet, mad::NodeInfo::kAttributeId, 0, {1, s1_to_s2, s2_to_h2}));
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  const auto ni = mad::NodeInfo::unpack(MadClient::smp_data(*r));
  EXPECT_EQ(ni.node_type, mad::NodeInfo::kTypeCa);
  EXPECT_EQ(ni.node_guid, fabric.find_hca("H2")->guid());
  EXPECT_EQ(ni.port_guid, fabric.find_hca("H2")->port(1).guid());
  // The return path recorded the ingress ports along the way.
  EXPECT_EQ((*r)[192 + 2], port_towards("S2", "S1"));
}

TEST_F(SmaTest, NodeDescriptionIsTheTopologyName) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  auto r = sm.request(MadClient::dr_smp(kGet, mad::NodeDescription::kAttributeId, 0, {1}));
  ASSERT_TRUE(r);
  EXPECT_EQ(mad::NodeDescription::unpack(MadClient::smp_data(*r)).text, "S1");
}

TEST_F(SmaTest, PortInfoSetLidThenActivateThroughArmed) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Hca& h1 = *fabric.find_hca("H1");
  Mad set = MadClient::dr_smp(kSet, mad::PortInfo::kAttributeId, 1, {});
  mad::PortInfo pi;
  pi.lid = 7;
  pi.master_sm_lid = 7;
  pi.port_state = mad::port_state::kArmed;
  pi.pack(MadClient::smp_data(set));
  auto r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  auto got = mad::PortInfo::unpack(MadClient::smp_data(*r));
  EXPECT_EQ(got.lid, 7);
  EXPECT_EQ(got.port_state, mad::port_state::kArmed);
  EXPECT_EQ(h1.port(1).lid, 7);

  // A Set to the current state is an error and changes nothing.
  pi.port_state = mad::port_state::kArmed;
  pi.lid = 9;
  pi.pack(MadClient::smp_data(set));
  r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kInvalidAttrValue);
  EXPECT_EQ(h1.port(1).lid, 7) << "a rejected Set applies nothing";

  pi.port_state = mad::port_state::kActive;
  pi.lid = 7;
  pi.pack(MadClient::smp_data(set));
  r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  EXPECT_EQ(h1.port(1).state(), PortState::Active);
}

TEST_F(SmaTest, InitIsNotASettableStateAndActiveNeedsArmed) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  for (uint8_t bad : {mad::port_state::kInit, mad::port_state::kActive, uint8_t{9}}) {
    Mad set = MadClient::dr_smp(kSet, mad::PortInfo::kAttributeId, 0, {1});
    mad::PortInfo pi;
    pi.port_state = bad;
    pi.pack(MadClient::smp_data(set));
    auto r = sm.request(set);
    ASSERT_TRUE(r);
    EXPECT_EQ(MadClient::status(*r), st::kInvalidAttrValue) << int(bad);
  }
}

TEST_F(SmaTest, ClientReregisterRaisesAnEventAndReadsBackZero) {
  struct Events : PortEventListener {
    std::vector<PortEvent> seen;
    void on_port_event(Hca&, uint8_t, PortEvent e) override { seen.push_back(e); }
  } events;
  Hca& h2 = *fabric.find_hca("H2");
  h2.add_listener(&events);
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Mad set = MadClient::dr_smp(kSet, mad::PortInfo::kAttributeId, 0,
                              {1, port_towards("S1", "S2"), port_towards("S2", "H2")});
  mad::PortInfo pi;
  pi.lid = 12;
  pi.master_sm_lid = 1;
  pi.client_reregister = true;
  pi.pack(MadClient::smp_data(set));
  auto r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_FALSE(mad::PortInfo::unpack(MadClient::smp_data(*r)).client_reregister);
  EXPECT_EQ(events.seen, (std::vector<PortEvent>{PortEvent::LidChange, PortEvent::SmChange,
                                                 PortEvent::ClientReregister}));
  h2.remove_listener(&events);
}

TEST_F(SmaTest, UnsupportedAttributeMethodAndVersionGetTheirStatus) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Mad m = MadClient::dr_smp(kGet, 0x00FF, 0, {1});
  auto r = sm.request(m);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kMethodAttrUnsupported);

  m = MadClient::dr_smp(0x03 /* Send */, mad::NodeInfo::kAttributeId, 0, {1});
  r = sm.request(m);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kMethodUnsupported);

  m = MadClient::dr_smp(kSet, mad::NodeInfo::kAttributeId, 0, {1});
  r = sm.request(m);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kMethodAttrUnsupported) << "NodeInfo is read-only";

  m = MadClient::dr_smp(kGet, mad::NodeInfo::kAttributeId, 0, {1});
  m[2] = 7;  // class version
  r = sm.request(m);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kBadVersion);

  m = MadClient::dr_smp(kGet, mad::SwitchInfo::kAttributeId, 0, {});
  r = sm.request(m);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kMethodAttrUnsupported) << "an HCA has no SwitchInfo";

  m = MadClient::dr_smp(kGet, mad::PortInfo::kAttributeId, 99, {1});
  r = sm.request(m);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kInvalidAttrValue) << "port out of range";
}

TEST_F(SmaTest, SmInfoWithoutAnSmAgentIsAnsweredUnsupportedByTheMadLayer) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  auto r = sm.request(MadClient::dr_smp(kGet, 0x0020, 0,
                                        {1, port_towards("S1", "S2"), port_towards("S2", "H2")}));
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kMethodAttrUnsupported);
}

TEST_F(SmaTest, LinearAndMulticastForwardingTablesRoundTrip) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Switch& s1 = *fabric.find_switch("S1");

  Mad set = MadClient::dr_smp(kSet, mad::LinearForwardingTable::kAttributeId, 1, {1});
  mad::LinearForwardingTable lft;
  lft.port.fill(mad::LinearForwardingTable::kNoPort);
  lft.port[5] = 2;  // LID 69
  lft.pack(MadClient::smp_data(set));
  auto r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  EXPECT_EQ(s1.lft(69), 2);
  EXPECT_EQ(s1.lft(68), Switch::kNoRoute);

  // MLID 0xC021 is block 1 index 1; position 0 covers ports 0-15.
  set = MadClient::dr_smp(kSet, mad::MulticastForwardingTable::kAttributeId,
                          mad::mft_attribute_modifier({1, 0}), {1});
  mad::MulticastForwardingTable mft;
  mft.port_mask[1] = 0b0110;
  mft.pack(MadClient::smp_data(set));
  r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  EXPECT_EQ(s1.mft(0xC021, 0), 0b0110);

  auto get = sm.request(MadClient::dr_smp(kGet, mad::MulticastForwardingTable::kAttributeId,
                                          mad::mft_attribute_modifier({1, 0}), {1}));
  ASSERT_TRUE(get);
  EXPECT_EQ(mad::MulticastForwardingTable::unpack(MadClient::smp_data(*get)).port_mask[1], 0b0110);

  auto bad = sm.request(MadClient::dr_smp(kGet, mad::MulticastForwardingTable::kAttributeId,
                                          mad::mft_attribute_modifier({1, 15}), {1}));
  ASSERT_TRUE(bad);
  EXPECT_EQ(MadClient::status(*bad), st::kInvalidAttrValue) << "position beyond the radix";
}

TEST_F(SmaTest, SlToVlTablesPerInputAndOutputPort) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Switch& s1 = *fabric.find_switch("S1");
  // S1, input port 1, output port 2.
  const uint32_t mod = 1u << 8 | 2u;
  auto before = sm.request(MadClient::dr_smp(kGet, mad::SlToVlTable::kAttributeId, mod, {1}));
  ASSERT_TRUE(before);
  ASSERT_EQ(MadClient::status(*before), st::kOk);
  EXPECT_EQ(mad::SlToVlTable::unpack(MadClient::smp_data(*before)), mad::SlToVlTable{}) << "reset: every SL to VL0";
  Mad set = MadClient::dr_smp(kSet, mad::SlToVlTable::kAttributeId, mod, {1});
  mad::SlToVlTable t;
  for (std::size_t sl = 0; sl < 16; ++sl) t.vl[sl] = static_cast<uint8_t>(sl % 8);
  t.pack(MadClient::smp_data(set));
  auto r = sm.request(set);
  ASSERT_TRUE(r);
  ASSERT_EQ(MadClient::status(*r), st::kOk);
  EXPECT_EQ(mad::SlToVlTable::unpack(MadClient::smp_data(*r)), t);
  auto other = sm.request(MadClient::dr_smp(kGet, mad::SlToVlTable::kAttributeId, 2u << 8 | 2u, {1}));
  ASSERT_TRUE(other);
  EXPECT_EQ(mad::SlToVlTable::unpack(MadClient::smp_data(*other)), mad::SlToVlTable{}) << "another input port";
  EXPECT_EQ(s1.port(2).sl_to_vl.at(1)[0], 0x01);
  auto bad = sm.request(MadClient::dr_smp(kGet, mad::SlToVlTable::kAttributeId, s1.num_ports() + 1u, {1}));
  ASSERT_TRUE(bad);
  EXPECT_EQ(MadClient::status(*bad), st::kInvalidAttrValue) << "output port beyond the radix";
  // A CA: the port the SMP came in by.
  Mad ca = MadClient::dr_smp(kSet, mad::SlToVlTable::kAttributeId, 0, {});
  t.pack(MadClient::smp_data(ca));
  ASSERT_EQ(MadClient::status(*sm.request(ca)), st::kOk);
  EXPECT_EQ(fabric.find_hca("H1")->port(1).sl_to_vl.at(0)[7], 0x67);
}

TEST_F(SmaTest, VlArbitrationBlocksOneToFour) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Mad set = MadClient::dr_smp(kSet, mad::VlArbitrationTable::kAttributeId, 3u << 16 | 1u, {1});
  mad::VlArbitrationTable t;
  for (std::size_t k = 0; k < t.entry.size(); ++k) t.entry[k] = {static_cast<uint8_t>(k % 8), static_cast<uint8_t>(k + 1)};
  t.pack(MadClient::smp_data(set));
  auto r = sm.request(set);
  ASSERT_TRUE(r);
  ASSERT_EQ(MadClient::status(*r), st::kOk);
  auto get = sm.request(MadClient::dr_smp(kGet, mad::VlArbitrationTable::kAttributeId, 3u << 16 | 1u, {1}));
  ASSERT_TRUE(get);
  EXPECT_EQ(mad::VlArbitrationTable::unpack(MadClient::smp_data(*get)), t);
  auto low = sm.request(MadClient::dr_smp(kGet, mad::VlArbitrationTable::kAttributeId, 1u << 16 | 1u, {1}));
  ASSERT_TRUE(low);
  EXPECT_EQ(mad::VlArbitrationTable::unpack(MadClient::smp_data(*low)), mad::VlArbitrationTable{});
  for (uint32_t block : {0u, 5u}) {
    auto bad = sm.request(MadClient::dr_smp(kGet, mad::VlArbitrationTable::kAttributeId, block << 16 | 1u, {1}));
    ASSERT_TRUE(bad);
    EXPECT_EQ(MadClient::status(*bad), st::kInvalidAttrValue) << "block " << block;
  }
}

TEST_F(SmaTest, SwitchInfoReportsCapsAndClearsPortStateChange) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Switch& s1 = *fabric.find_switch("S1");
  fabric.set_link_up(*fabric.find_hca("H1")->port(1).link(), false);
  fabric.set_link_up(*fabric.find_hca("H1")->port(1).link(), true);
  EXPECT_TRUE(s1.port_state_change);
  auto r = sm.request(MadClient::dr_smp(kGet, mad::SwitchInfo::kAttributeId, 0, {1}));
  ASSERT_TRUE(r);
  auto si = mad::SwitchInfo::unpack(MadClient::smp_data(*r));
  EXPECT_EQ(si.linear_fdb_cap, 0xC000);
  EXPECT_EQ(si.multicast_fdb_cap, fabric.options().multicast_fdb_cap);
  EXPECT_TRUE(si.port_state_change);
  Mad set = MadClient::dr_smp(kSet, mad::SwitchInfo::kAttributeId, 0, {1});
  si.port_state_change = true;  // write 1 to clear
  si.linear_fdb_top = 100;
  si.pack(MadClient::smp_data(set));
  r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_FALSE(s1.port_state_change);
  EXPECT_EQ(s1.lft_top, 100);
}

TEST_F(SmaTest, PKeyTableSetOnAnHca) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Mad set = MadClient::dr_smp(kSet, mad::PKeyTable::kAttributeId, 0, {});
  mad::PKeyTable t;
  t.p_key[0] = 0xFFFF;
  t.p_key[1] = 0x8001;
  t.pack(MadClient::smp_data(set));
  auto r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  EXPECT_EQ(fabric.find_hca("H1")->port(1).pkeys[1], 0x8001);
  auto bad = sm.request(MadClient::dr_smp(kGet, mad::PKeyTable::kAttributeId, 4, {}));
  ASSERT_TRUE(bad);
  EXPECT_EQ(MadClient::status(*bad), st::kInvalidAttrValue) << "block past PartitionCap";
}

TEST_F(SmaTest, GuidInfoKeepsThePortGuidReadOnlyAndStoresAliases) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  Hca& h1 = *fabric.find_hca("H1");
  Mad set = MadClient::dr_smp(kSet, mad::GuidInfo::kAttributeId, 0, {});
  mad::GuidInfo g;
  g.guid[0] = 0x1111;  // ignored: index 0 is the port GUID
  g.guid[1] = 0xA11A5;
  g.pack(MadClient::smp_data(set));
  auto r = sm.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  const auto got = mad::GuidInfo::unpack(MadClient::smp_data(*r));
  EXPECT_EQ(got.guid[0], h1.port(1).guid());
  EXPECT_EQ(got.guid[1], 0xA11A5u);
  auto bad = sm.request(MadClient::dr_smp(kGet, mad::GuidInfo::kAttributeId, 1, {}));
  ASSERT_TRUE(bad);
  EXPECT_EQ(MadClient::status(*bad), st::kInvalidAttrValue) << "GUIDCap is 8: one block";
}

// An SM agent on H2 that answers SMInfo Get itself.
struct SmInfoAgent : MadAgent {
  Fabric* fabric;
  Hca* hca;
  uint32_t id = 0;
  int seen = 0;
  void on_mad(Port&, const MadAddress& from, std::span<const uint8_t> mad) override {
    ++seen;
    Mad reply;
    std::memcpy(reply.data(), mad.data(), 256);
    mad::SmInfo info;
    info.guid = hca->guid();
    info.priority = 5;
    info.sm_state = mad::sm_state::kMaster;
    info.pack(MadClient::smp_data(reply));
    mad::smi_make_response(mad::SmpBuffer(reply.data(), 256));
    hca->send_mad(id, from, reply);
  }
};

TEST_F(SmaTest, SmInfoGoesToTheRegisteredSmAgentNotTheSma) {
  Hca& h2 = *fabric.find_hca("H2");
  SmInfoAgent agent;
  agent.fabric = &fabric;
  agent.hca = &h2;
  Hca::AgentSpec spec;
  spec.mgmt_class = wire::mgmt_class::kSubnDirected;
  spec.methods[0] = 1u << kGet | 1u << kSet;
  agent.id = h2.register_agent(spec, &agent);
  ASSERT_NE(agent.id, 0u);
  EXPECT_EQ(h2.register_agent(spec, &agent), 0u) << "one agent per class/version/method";
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  auto r = sm.request(MadClient::dr_smp(kGet, 0x0020, 0, {1, port_towards("S1", "S2"), port_towards("S2", "H2")}));
  ASSERT_TRUE(r);
  EXPECT_EQ(agent.seen, 1);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  const auto info = mad::SmInfo::unpack(MadClient::smp_data(*r));
  EXPECT_EQ(info.guid, h2.guid());
  EXPECT_EQ(info.sm_state, mad::sm_state::kMaster);
  // NodeInfo on the same port still goes to the SMA, not the agent.
  auto ni = sm.request(MadClient::dr_smp(kGet, mad::NodeInfo::kAttributeId, 0,
                                         {1, port_towards("S1", "S2"), port_towards("S2", "H2")}));
  ASSERT_TRUE(ni);
  EXPECT_EQ(agent.seen, 1);
  h2.unregister_agent(agent.id);
}

TEST_F(SmaTest, LidRoutedSmpAfterTheFabricIsProgrammed) {
  // Program LIDs and routes by DR SMPs, then reach H2 by LID.
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  MadClient lid_sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnLid);
  const uint8_t s1s2 = port_towards("S1", "S2"), s2h2 = port_towards("S2", "H2");
  const uint8_t s2s1 = port_towards("S2", "S1"), s1h1 = port_towards("S1", "H1");
  auto set_lid = [&](std::vector<uint8_t> path, uint32_t port, uint16_t lid) {
    Mad m = MadClient::dr_smp(kSet, mad::PortInfo::kAttributeId, port, path);
    mad::PortInfo pi;
    pi.lid = lid;
    pi.pack(MadClient::smp_data(m));
    ASSERT_EQ(MadClient::status(*sm.request(m)), st::kOk);
  };
  set_lid({}, 1, 1);                 // H1
  set_lid({1}, 0, 2);                // S1
  set_lid({1, s1s2}, 0, 3);          // S2
  set_lid({1, s1s2, s2h2}, 1, 4);    // H2
  auto set_lft = [&](std::vector<uint8_t> path, std::vector<std::pair<uint16_t, uint8_t>> routes) {
    Mad m = MadClient::dr_smp(kSet, mad::LinearForwardingTable::kAttributeId, 0, path);
    mad::LinearForwardingTable t;
    t.port.fill(mad::LinearForwardingTable::kNoPort);
    for (auto [lid, port] : routes) t.port[lid] = port;
    t.pack(MadClient::smp_data(m));
    ASSERT_EQ(MadClient::status(*sm.request(m)), st::kOk);
  };
  set_lft({1}, {{1, s1h1}, {2, 0}, {3, s1s2}, {4, s1s2}});
  set_lft({1, s1s2}, {{1, s2s1}, {2, s2s1}, {3, 0}, {4, s2h2}});

  Mad get = MadClient::request_mad(wire::mgmt_class::kSubnLid, 1, kGet, mad::NodeInfo::kAttributeId, 0);
  MadAddress to;
  to.lid = 4;
  auto r = lid_sm.request(get, to);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), st::kOk);
  EXPECT_EQ(mad::NodeInfo::unpack(MadClient::smp_data(*r)).node_guid, fabric.find_hca("H2")->guid());
  EXPECT_EQ(lid_sm.sources.back().lid, 4) << "the answer comes from H2's LID";

  to.lid = 3;  // S2's management port
  r = lid_sm.request(get, to);
  ASSERT_TRUE(r);
  EXPECT_EQ(mad::NodeInfo::unpack(MadClient::smp_data(*r)).node_guid, fabric.find_switch("S2")->guid());
}

TEST_F(SmaTest, MalformedDirectedRoutesAreDroppedAndCounted) {
  MadClient sm(fabric, *fabric.find_hca("H1"), wire::mgmt_class::kSubnDirected);
  // Port 40 does not exist on S1 (36 ports).
  EXPECT_FALSE(sm.request(MadClient::dr_smp(kGet, mad::NodeInfo::kAttributeId, 0, {1, 40})));
  Port& s1_in = *fabric.find_hca("H1")->port(1).peer();
  EXPECT_EQ(s1_in.counters.vl15_dropped, 1u);
}

}  // namespace
}  // namespace ibfab::fabric
