// NodeRecord and PortInfoRecord carry every field the SM read, as OpenSM's
// SA does, asked over QP1 of a fabric the SM brought up and checked
// against the fabric itself.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "tests/sm/sa_on_fabric.h"

namespace ibfab::sm {
namespace {

using testing::SaOnFabric;
namespace method = wire::mad_method;
namespace st = wire::mad_status;
namespace nr = mad::nr_comp;
namespace pir = mad::pir_comp;

TEST_F(SaOnFabric, NodeRecordsCarryTheWholeNodeInfoAndDescription) {
  const auto a = query(method::kGetTable, 0, mad::NodeRecord{});
  ASSERT_TRUE(a);
  std::size_t end_ports = 0;
  for (uint32_t i = 0; i < fabric.node_count(); ++i)
    end_ports += fabric.node(i).is_switch() ? 1 : fabric.node(i).num_ports();
  ASSERT_EQ(a->count(), end_ports) << "one per switch, one per CA port";
  uint64_t last = 0;
  for (std::size_t k = 0; k < a->count(); ++k) {
    const auto r = a->record<mad::NodeRecord>(k);
    EXPECT_GE(Subnet::table_key(r.node_info.node_guid), last) << "OpenSM's node table order";
    last = Subnet::table_key(r.node_info.node_guid);
    const fabric::Port* p = port_by_lid(r.lid);
    ASSERT_NE(p, nullptr) << r.lid;
    const fabric::Node& n = p->node();
    EXPECT_EQ(r.node_info.node_guid, n.guid());
    EXPECT_EQ(r.node_info.port_guid, p->guid());
    EXPECT_EQ(r.node_info.local_port_num, p->number());
    EXPECT_EQ(r.node_info.num_ports, n.num_ports());
    EXPECT_EQ(r.node_info.system_image_guid, n.system_guid());
    EXPECT_EQ(r.node_info.vendor_id, n.vendor_id());
    EXPECT_EQ(r.node_info.device_id, n.device_id());
    EXPECT_EQ(r.node_info.base_version, 1);
    EXPECT_EQ(r.node_info.class_version, 1);
    EXPECT_EQ(r.node_description.text, n.description());
  }
  mad::NodeRecord q;
  q.node_description.text = h(4).description();
  const auto one = query(method::kGet, nr::kNodeDescription, q);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, st::kOk);
  EXPECT_EQ(one->record<mad::NodeRecord>(0).node_info.node_guid, h(4).guid());
  q.node_info.num_ports = 99;
  EXPECT_EQ(query(method::kGet, nr::kNumPorts, q)->status, st::kSaNoRecords);
}

TEST_F(SaOnFabric, PortInfoRecordsOfEverySwitchPortAndCaPort) {
  const auto a = query(method::kGetTable, 0, mad::PortInfoRecord{});
  ASSERT_TRUE(a);
  std::set<std::pair<uint16_t, uint8_t>> want, got;
  for (uint32_t i = 0; i < fabric.node_count(); ++i) {
    const fabric::Node& n = fabric.node(i);
    for (uint8_t p = n.is_switch() ? 0 : 1; p <= n.num_ports(); ++p) want.emplace(base_lid(n.port(p)), p);
  }
  for (std::size_t k = 0; k < a->count(); ++k) {
    const auto r = a->record<mad::PortInfoRecord>(k);
    got.emplace(r.endport_lid, r.port_num);
    const fabric::Port* end = port_by_lid(r.endport_lid);
    ASSERT_NE(end, nullptr);
    const fabric::Port& p = end->node().port(r.port_num);
    EXPECT_EQ(r.port_info.port_state, static_cast<uint8_t>(p.state())) << end->node().name() << "/" << int(r.port_num);
    EXPECT_EQ(r.port_info.local_port_num, end->node().is_switch() ? r.port_info.local_port_num : r.port_num);
    EXPECT_EQ(r.port_info.m_key, 0u);
    if (r.port_num != 0 && p.link()) EXPECT_EQ(r.port_info.neighbor_mtu, p.neighbor_mtu);
    if (!end->node().is_switch() || r.port_num == 0) {
      EXPECT_EQ(r.port_info.lid, p.lid);
      EXPECT_EQ(r.port_info.master_sm_lid, h(1).port(1).lid);
    }
  }
  EXPECT_EQ(got, want);

  // One switch port by EndportLID + PortNum; a state filter.
  const fabric::Port& leaf = *h(3).port(1).peer();
  mad::PortInfoRecord q;
  q.endport_lid = base_lid(leaf);
  q.port_num = leaf.number();
  const auto one = query(method::kGet, pir::kEndportLid | pir::kPortNum, q);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, st::kOk);
  EXPECT_EQ(one->record<mad::PortInfoRecord>(0).port_info.port_state, mad::port_state::kActive);
  q.port_info.port_state = mad::port_state::kDown;
  const auto down = query(method::kGetTable, pir::kEndportLid | pir::kPortState, q);
  ASSERT_TRUE(down);
  for (std::size_t k = 0; k < down->count(); ++k) {
    const auto r = down->record<mad::PortInfoRecord>(k);
    EXPECT_EQ(leaf.node().port(r.port_num).state(), fabric::PortState::Down) << int(r.port_num);
  }
  q.options = 0x80;
  const auto opt = query(method::kGet, pir::kEndportLid | pir::kPortNum | pir::kOptions, q);
  ASSERT_TRUE(opt);
  EXPECT_EQ(opt->record<mad::PortInfoRecord>(0).options, 0x80) << "Options echoed when masked";
}

}  // namespace
}  // namespace ibfab::sm
