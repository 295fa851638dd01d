// The PMA answers PortCounters from counters that really count.
#include <gtest/gtest.h>

#include "fabric/mad/class_port_info.h"
#include "fabric/mad/pma.h"
#include "fabric/mad/port_counters.h"
#include "fabric/mad/port_counters_extended.h"
#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"
#include "tests/fabric/model/mad_client.h"

namespace ibfab::fabric {
namespace {

using testing::Mad;
using testing::MadClient;

class PmaTest : public ::testing::Test {
 protected:
  PmaTest() : topo(topo::load_topology("line:2")), fabric(sim, topo) { testing::configure_by_hand(fabric); }
  Mad pma_get(uint16_t attr, uint8_t port_select) {
    Mad m = MadClient::request_mad(mad::kPerfMgtClass, 1, 0x01, attr, 0);
    m[mad::kPmaDataOffset + 1] = port_select;
    return m;
  }
  sim::Simulator sim;
  topo::Topology topo;
  Fabric fabric;
};

TEST_F(PmaTest, PortCountersCountTheTrafficThatCrossedThePort) {
  Hca& h1 = *fabric.find_hca("H1");
  Hca& h2 = *fabric.find_hca("H2");
  MadClient perf(fabric, h1, mad::kPerfMgtClass);
  MadAddress to;
  to.lid = h2.port(1).lid;
  to.qpn = 1;
  auto r = perf.request(pma_get(mad::PortCounters::kAttributeId, 1), to);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[3], 0x81);
  EXPECT_EQ(MadClient::status(*r), 0);
  auto pc = mad::PortCounters::unpack(std::span<const uint8_t>(r->data() + mad::kPmaDataOffset, 192));
  // H2 has received exactly our request (a 290-byte packet) so far, and
  // sent nothing before answering.
  EXPECT_EQ(pc.port_rcv_pkts, 1u);
  EXPECT_EQ(pc.port_rcv_data, (290u - 2) / 4);
  EXPECT_EQ(pc.port_xmit_pkts, 0u);
  r = perf.request(pma_get(mad::PortCounters::kAttributeId, 1), to);
  pc = mad::PortCounters::unpack(std::span<const uint8_t>(r->data() + mad::kPmaDataOffset, 192));
  EXPECT_EQ(pc.port_rcv_pkts, 2u);
  EXPECT_EQ(pc.port_xmit_pkts, 1u);
}

TEST_F(PmaTest, SetClearsOnlyTheSelectedCounters) {
  Hca& h1 = *fabric.find_hca("H1");
  MadClient perf(fabric, h1, mad::kPerfMgtClass);
  h1.port(1).counters.rcv_pkts = 50;
  h1.port(1).counters.xmit_pkts = 60;
  MadAddress to;
  to.lid = h1.port(1).lid;  // ourselves, by loopback
  to.qpn = 1;
  Mad set = pma_get(mad::PortCounters::kAttributeId, 1);
  set[3] = 0x02;
  wire::store_be16(&set[mad::kPmaDataOffset + 2], mad::counter_select::kPortXmitPkts);
  auto r = perf.request(set, to);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), 0);
  EXPECT_EQ(h1.port(1).counters.xmit_pkts, 0u);
  EXPECT_EQ(h1.port(1).counters.rcv_pkts, 50u) << "untouched; a looped-back MAD never crosses the wire";
}

TEST_F(PmaTest, ClassPortInfoAdvertisesExtendedCountersAndAllPortSelect) {
  Hca& h1 = *fabric.find_hca("H1");
  MadClient perf(fabric, h1, mad::kPerfMgtClass);
  MadAddress to;
  to.lid = fabric.find_switch("S1")->port(0).lid;
  to.qpn = 1;
  auto r = perf.request(pma_get(mad::ClassPortInfo::kAttributeId, 0), to);
  ASSERT_TRUE(r);
  auto cpi = mad::ClassPortInfo::unpack(std::span<const uint8_t>(r->data() + mad::kPmaDataOffset, 192));
  EXPECT_TRUE(cpi.capability_mask & mad::pma_cap::kAllPortSelect);
  EXPECT_TRUE(cpi.capability_mask & mad::pma_cap::kIsExtendedWidthSupported);

  // AllPortSelect on the switch sums its ports.
  r = perf.request(pma_get(mad::PortCountersExtended::kAttributeId, 0xFF), to);
  ASSERT_TRUE(r);
  auto e = mad::PortCountersExtended::unpack(std::span<const uint8_t>(r->data() + mad::kPmaDataOffset, 192));
  EXPECT_GE(e.port_rcv_pkts, 2u);
  EXPECT_GE(e.port_xmit_pkts, 1u);
}

TEST_F(PmaTest, BadPortSelectAndUnknownAttributesGetStatus) {
  Hca& h1 = *fabric.find_hca("H1");
  MadClient perf(fabric, h1, mad::kPerfMgtClass);
  MadAddress to;
  to.lid = fabric.find_hca("H2")->port(1).lid;
  to.qpn = 1;
  auto r = perf.request(pma_get(mad::PortCounters::kAttributeId, 9), to);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), wire::mad_status::kInvalidAttrValue);
  r = perf.request(pma_get(0x0099, 1), to);
  ASSERT_TRUE(r);
  EXPECT_EQ(MadClient::status(*r), wire::mad_status::kMethodAttrUnsupported);
}

TEST_F(PmaTest, AGmpWithTheWrongQKeyIsDroppedAndCounted) {
  Hca& h1 = *fabric.find_hca("H1");
  Hca& h2 = *fabric.find_hca("H2");
  MadClient perf(fabric, h1, mad::kPerfMgtClass);
  MadAddress to;
  to.lid = h2.port(1).lid;
  to.qpn = 1;
  to.qkey = 0x1234;
  EXPECT_FALSE(perf.request(pma_get(mad::PortCounters::kAttributeId, 1), to));
  EXPECT_EQ(h2.port(1).q_key_violations, 1);
}

}  // namespace
}  // namespace ibfab::fabric
