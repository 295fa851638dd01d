// The SA's records of the subnet itself (LinkRecord, SwitchInfoRecord,
// LFT and MFT records, P_KeyTableRecord, GuidInfoRecord, SMInfoRecord, SL2VL
// and VLArbitration records, PathRecord and MultiPathRecord), asked over
// QP1 of a fabric the SM brought up, and checked against the fabric itself
// (test code may read it; the SM never does).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "fabric/mad/sa/guid_info_record.h"
#include "fabric/mad/sa/lft_record.h"
#include "fabric/mad/sa/link_record.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/mft_record.h"
#include "fabric/mad/sa/multi_path_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/sl_to_vl_table_record.h"
#include "fabric/mad/sa/vl_arbitration_table_record.h"
#include "fabric/mad/sa/pkey_table_record.h"
#include "fabric/mad/sa/sm_info_record.h"
#include "fabric/mad/sa/switch_info_record.h"
#include "fabric/model/fabric.h"
#include "fabric/model/switch_node.h"
#include "fabric/topology/topology_spec.h"
#include "sm/subnet_manager.h"
#include "tests/sm/sa_on_fabric.h"

namespace ibfab::sm {
namespace {

using testing::SaOnFabric;
namespace method = wire::mad_method;
namespace st = wire::mad_status;
using testing::Mad;
using testing::SaClient;
namespace mp = mad::mpr_comp;
using wire::RmppHeader;

TEST_F(SaOnFabric, LinkRecordTableHoldsBothDirectionsOfEveryCable) {
  std::set<std::tuple<uint16_t, uint8_t, uint16_t, uint8_t>> want;
  for (uint32_t i = 0; i < fabric.node_count(); ++i) {
    fabric::Node& n = fabric.node(i);
    for (uint8_t p = 1; p <= n.num_ports(); ++p)
      if (const fabric::Port* peer = n.port(p).peer())
        want.emplace(base_lid(n.port(p)), p, base_lid(*peer), peer->number());
  }
  const auto a = query(method::kGetTable, 0, mad::LinkRecord{});
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, st::kOk);
  EXPECT_EQ(a->method, method::kGetTableResp);
  EXPECT_EQ(a->attr_offset, mad::LinkRecord::kAttributeOffset);
  std::set<std::tuple<uint16_t, uint8_t, uint16_t, uint8_t>> got;
  for (std::size_t i = 0; i < a->count(); ++i) {
    const auto r = a->record<mad::LinkRecord>(i);
    got.emplace(r.from_lid, r.from_port, r.to_lid, r.to_port);
  }
  EXPECT_EQ(a->count(), want.size());
  EXPECT_EQ(got, want);
}

TEST_F(SaOnFabric, LinkRecordByEndsAndPorts) {
  const fabric::Port& hp = h(3).port(1);
  const fabric::Port& sw = *hp.peer();
  mad::LinkRecord q;
  q.from_lid = hp.lid;
  auto a = query(method::kGet, mad::lr_comp::kFromLid, q);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, st::kOk);
  auto r = a->record<mad::LinkRecord>(0);
  EXPECT_EQ(r, (mad::LinkRecord{hp.lid, 1, sw.number(), base_lid(sw)}));

  // To the host from its switch: FromLID + FromPort of the switch side.
  q = {};
  q.from_lid = base_lid(sw);
  q.from_port = sw.number();
  a = query(method::kGet, mad::lr_comp::kFromLid | mad::lr_comp::kFromPort, q);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, st::kOk);
  EXPECT_EQ(a->record<mad::LinkRecord>(0), (mad::LinkRecord{base_lid(sw), sw.number(), 1, hp.lid}));

  // Both LIDs: the links between the two nodes only.
  q = {};
  q.from_lid = base_lid(sw);
  q.to_lid = hp.lid;
  a = query(method::kGetTable, mad::lr_comp::kFromLid | mad::lr_comp::kToLid, q);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->count(), 1u);
  EXPECT_EQ(a->record<mad::LinkRecord>(0).from_port, sw.number());

  // A switch has several links: Get is refused with 0x0400.
  q = {};
  q.from_lid = base_lid(sw);
  a = query(method::kGet, mad::lr_comp::kFromLid, q);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, st::kSaTooManyRecords);
  // An unknown LID, or a port with nothing cabled, gives no record.
  q = {};
  q.from_lid = 0xBFFF;
  a = query(method::kGet, mad::lr_comp::kFromLid, q);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, st::kSaNoRecords);
  a = query(method::kGetTable, mad::lr_comp::kFromLid, q);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, st::kOk);
  EXPECT_EQ(a->attr_offset, 0);
  EXPECT_EQ(a->count(), 0u);
}

TEST_F(SaOnFabric, LinkRecordTakesOnlyGetAndGetTable) {
  const auto a = query(method::kSet, 0, mad::LinkRecord{});
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, st::kMethodAttrUnsupported);
}

TEST_F(SaOnFabric, SwitchInfoRecordPerSwitchAsProgrammed) {
  const auto sws = switches();
  const auto a = query(method::kGetTable, 0, mad::SwitchInfoRecord{});
  ASSERT_TRUE(a);
  ASSERT_EQ(a->count(), sws.size());
  std::map<uint16_t, mad::SwitchInfo> by_lid;
  uint64_t last_guid = 0;
  for (std::size_t i = 0; i < a->count(); ++i) {
    const auto r = a->record<mad::SwitchInfoRecord>(i);
    by_lid[r.lid] = r.switch_info;
    const fabric::Port* p = port_by_lid(r.lid);
    ASSERT_NE(p, nullptr);
    EXPECT_GT(Subnet::table_key(p->node().guid()), last_guid) << "switches in OpenSM's table order";
    last_guid = Subnet::table_key(p->node().guid());
  }
  for (const fabric::Switch* s : sws) {
    ASSERT_TRUE(by_lid.count(s->port(0).lid)) << s->name();
    const mad::SwitchInfo& si = by_lid[s->port(0).lid];
    EXPECT_EQ(si.linear_fdb_top, s->lft_top) << s->name();
    EXPECT_EQ(si.multicast_fdb_cap, s->multicast_fdb_cap()) << s->name();
  }
  mad::SwitchInfoRecord q;
  q.lid = sws[1]->port(0).lid;
  auto one = query(method::kGet, mad::swir_comp::kLid, q);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, st::kOk);
  EXPECT_EQ(one->record<mad::SwitchInfoRecord>(0).lid, q.lid);
  q.lid = 0;
  one = query(method::kGet, mad::swir_comp::kLid, q);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, st::kSaNoRecords) << "LID 0 matches no switch";
}

TEST_F(SaOnFabric, LftRecordsAreTheProgrammedBlocks) {
  const fabric::Switch& s = *switches()[0];
  mad::LftRecord q;
  q.lid = s.port(0).lid;
  const auto a = query(method::kGetTable, mad::lftr_comp::kLid, q);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->count(), s.lft_top / 64u + 1);
  for (std::size_t b = 0; b < a->count(); ++b) {
    const auto r = a->record<mad::LftRecord>(b);
    EXPECT_EQ(r.lid, s.port(0).lid);
    EXPECT_EQ(r.block, b);
    for (uint16_t k = 0; k < 64; ++k) {
      const auto lid = static_cast<uint16_t>(b * 64 + k);
      if (lid == 0 || lid > s.lft_top) continue;
      EXPECT_EQ(r.lft.port[k], s.lft(lid)) << "LID " << lid;
    }
  }
  q.block = static_cast<uint16_t>(s.lft_top / 64 + 1);
  const auto past = query(method::kGet, mad::lftr_comp::kLid | mad::lftr_comp::kBlock, q);
  ASSERT_TRUE(past);
  EXPECT_EQ(past->status, st::kSaNoRecords);
  const auto all = query(method::kGetTable, 0, mad::LftRecord{});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count(), switches().size() * (s.lft_top / 64u + 1));
}

// Trusted requests only; every block of the table NodeInfo.PartitionCap
// gives the port (OpenSM reads and lists them all), so a Get must name
// the block.
TEST_F(SaOnFabric, PKeyTableRecordsOnlyForTrustedRequests) {
  mad::PKeyTableRecord q;
  q.lid = h(3).port(1).lid;
  auto a = query(method::kGet, mad::pkr_comp::kLid | mad::pkr_comp::kBlock, q);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, st::kSaReqInvalid);
  a = query(method::kGet, mad::pkr_comp::kLid, q, /*sm_key=*/1);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, st::kSaTooManyRecords) << "one record per block";
  const auto& pkeys = h(3).port(1).pkeys;
  ASSERT_EQ(pkeys.size() % 32, 0u);
  for (uint16_t block = 0; block < pkeys.size() / 32; ++block) {
    q.block = block;
    a = query(method::kGet, mad::pkr_comp::kLid | mad::pkr_comp::kBlock, q, /*sm_key=*/1);
    ASSERT_TRUE(a);
    ASSERT_EQ(a->status, st::kOk) << "block " << block;
    const auto r = a->record<mad::PKeyTableRecord>(0);
    EXPECT_EQ(r.lid, q.lid);
    EXPECT_EQ(r.port, 1);
    EXPECT_EQ(r.block, block);
    for (std::size_t k = 0; k < 32; ++k) EXPECT_EQ(r.table.p_key[k], pkeys[block * 32u + k]) << block << ":" << k;
  }
  const auto all = query(method::kGetTable, mad::pkr_comp::kLid, q, /*sm_key=*/1);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->count(), pkeys.size() / 32);
}

TEST_F(SaOnFabric, GuidInfoRecordHoldsThePortGuid) {
  mad::GuidInfoRecord q;
  q.lid = h(3).port(1).lid;
  const auto a = query(method::kGetTable, mad::gir_comp::kLid, q);
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, st::kOk);
  const std::size_t cap = fabric::Port::kGuidCap;
  ASSERT_EQ(a->count(), (cap + 7) / 8);
  const auto r = a->record<mad::GuidInfoRecord>(0);
  EXPECT_EQ(r.lid, q.lid);
  EXPECT_EQ(r.guid_info.guid[0], h(3).port(1).guid());
}

TEST_F(SaOnFabric, SmInfoRecordOfTheMaster) {
  const auto a = query(method::kGet, 0, mad::SmInfoRecord{});
  ASSERT_TRUE(a);
  ASSERT_EQ(a->status, st::kOk);
  const auto r = a->record<mad::SmInfoRecord>(0);
  EXPECT_EQ(r.lid, h(1).port(1).lid);
  EXPECT_EQ(r.sm_info.guid, h(1).port(1).guid());
  EXPECT_EQ(r.sm_info.sm_state, mad::sm_state::kMaster);
  EXPECT_EQ(r.sm_info.sm_key, 0u);
  mad::SmInfoRecord q;
  q.sm_info.sm_state = mad::sm_state::kStandby;
  const auto none = query(method::kGet, mad::smir_comp::kSmState, q);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, st::kSaNoRecords);
}

TEST_F(SaOnFabric, MftRecordsAreWhatTheSwitchesHold) {
  EXPECT_EQ(query(method::kGetTable, 0, mad::MftRecord{})->count(), 0u) << "no group has members yet";
  // Three hosts join one new group (not H2, whose QP1 the fixture's client holds).
  mad::McMemberRecord m;
  m.mgid = *wire::Gid::parse("ff15::1234");
  m.q_key = 0x11111111;
  m.p_key = 0xFFFF;
  m.join_state = 1;
  for (int host : {3, 5, 7}) {
    testing::SaClient c(fabric, h(host), sm.own_lid());
    m.port_gid = wire::Gid::from(sm.subnet().prefix, h(host).port(1).guid());
    const auto join = testing::ask(c, testing::SaClient::make(method::kSet, mad::mcm_comp::kCreateRequiredMask, m));
    ASSERT_TRUE(join);
    ASSERT_EQ(join->status, st::kOk);
  }
  sim.run();
  const auto a = query(method::kGetTable, 0, mad::MftRecord{});
  ASSERT_TRUE(a);
  ASSERT_GT(a->count(), 0u);
  std::size_t with_ports = 0;
  for (std::size_t k = 0; k < a->count(); ++k) {
    const auto r = a->record<mad::MftRecord>(k);
    const fabric::Port* p0 = port_by_lid(r.lid);
    ASSERT_NE(p0, nullptr);
    ASSERT_TRUE(p0->node().is_switch());
    const auto& sw = static_cast<const fabric::Switch&>(p0->node());
    EXPECT_LE(r.position, sw.num_ports() / 16);
    for (uint16_t e = 0; e < 32; ++e) {
      const auto mlid = static_cast<uint16_t>(0xC000 + r.block * 32 + e);
      EXPECT_EQ(r.mft.port_mask[e], sw.mft(mlid, r.position)) << sw.name() << " MLID " << mlid;
      with_ports += r.mft.port_mask[e] != 0;
    }
  }
  EXPECT_GT(with_ports, 0u) << "the group's tree shows";
  // SwitchInfoRecords keep the MulticastFDBTop of the sweep, as OpenSM's.
  const auto si = query(method::kGetTable, 0, mad::SwitchInfoRecord{});
  ASSERT_TRUE(si);
  for (std::size_t k = 0; k < si->count(); ++k)
    EXPECT_EQ(si->record<mad::SwitchInfoRecord>(k).switch_info.multicast_fdb_top, 0xBFFF);
  mad::MftRecord q;
  q.position = 15;
  EXPECT_EQ(query(method::kGet, mad::mftr_comp::kPosition, q)->status, st::kSaNoRecords) << "past the last position";
}

// PathRecords walk the SM's routes: every end port (switches included)
// reaches every other, with the MTU and rate of the ports crossed.
TEST_F(SaOnFabric, PathRecordsWalkTheRoutes) {
  const auto all = query(method::kGetTable, 0, mad::PathRecord{});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->status, st::kOk);
  std::size_t end_ports = 0;
  for (uint32_t i = 0; i < fabric.node_count(); ++i)
    end_ports += fabric.node(i).is_switch() ? 1 : fabric.node(i).num_ports();
  EXPECT_EQ(all->count(), end_ports * end_ports) << "every source to every destination";
  const uint8_t host_rate = h(3).port(1).link()->rate().sa_rate();
  for (std::size_t k = 0; k < all->count(); ++k) {
    const auto p = all->record<mad::PathRecord>(k);
    const fabric::Port* s = port_by_lid(p.slid);
    const fabric::Port* d = port_by_lid(p.dlid);
    ASSERT_TRUE(s && d);
    EXPECT_EQ(p.mtu, std::min(s->mtu_cap, d->mtu_cap)) << p.slid << "->" << p.dlid;
    if (!s->node().is_switch() && !d->node().is_switch())
      EXPECT_EQ(p.rate, host_rate) << p.slid << "->" << p.dlid;
    EXPECT_EQ(p.packet_life_time, s == d ? 0 : 0x12);
  }
  // A switch to itself: one path, lifetime 0.
  mad::PathRecord q;
  q.slid = q.dlid = switches()[0]->port(0).lid;
  const auto self = query(method::kGet, mad::pr_comp::kSlid | mad::pr_comp::kDlid, q);
  ASSERT_TRUE(self);
  EXPECT_EQ(self->status, st::kOk);
}

// SL2VL and VLArbitration records: the SM's (empty) QoS tables, one per CA
// port and per switch port pair or port, as OpenSM with QoS off answers.
TEST_F(SaOnFabric, QosTableRecordsCoverEveryPort) {
  std::size_t hosts = 0, sl2vl = 0, vlarb = 0;
  for (uint32_t i = 0; i < fabric.node_count(); ++i) {
    const fabric::Node& n = fabric.node(i);
    const std::size_t ports = n.num_ports() + 1u;
    if (n.is_switch()) {
      sl2vl += ports * ports;
      vlarb += 4 * ports;
    } else {
      hosts += n.num_ports();
      sl2vl += n.num_ports();
      vlarb += 4 * n.num_ports();
    }
  }
  const auto s = query(method::kGetTable, 0, mad::SlToVlTableRecord{});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count(), sl2vl);
  const auto v = query(method::kGetTable, 0, mad::VlArbitrationTableRecord{});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->count(), vlarb);
  for (std::size_t k = 0; k < v->count(); ++k) {
    const auto r = v->record<mad::VlArbitrationTableRecord>(k);
    EXPECT_GE(r.block, 1);
    EXPECT_LE(r.block, 4);
    EXPECT_EQ(r.table, mad::VlArbitrationTable{});
  }
  // One switch, one output port, one input port.
  mad::SlToVlTableRecord q;
  q.lid = switches()[0]->port(0).lid;
  q.output_port = 2;
  q.input_port = 1;
  const auto one = query(method::kGet, mad::slvr_comp::kLid | mad::slvr_comp::kOutputPort |
                                           mad::slvr_comp::kInputPort, q);
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, st::kOk);
  EXPECT_EQ(one->record<mad::SlToVlTableRecord>(0).output_port, 2);
  EXPECT_EQ(one->record<mad::SlToVlTableRecord>(0).input_port, 1);
  // A host: its port, whatever PortNum says; block 3 only.
  mad::VlArbitrationTableRecord h3;
  h3.lid = h(3).port(1).lid;
  h3.port = 7;
  h3.block = 3;
  const auto vh = query(method::kGet, mad::vlar_comp::kLid | mad::vlar_comp::kOutputPort | mad::vlar_comp::kBlock, h3);
  ASSERT_TRUE(vh);
  ASSERT_EQ(vh->status, st::kOk);
  EXPECT_EQ(vh->record<mad::VlArbitrationTableRecord>(0).port, 1);
  EXPECT_EQ(hosts, 8u);
}

// A GetMulti(MultiPathRecord) comes by RMPP, as one DATA segment.
Mad multipath_request(const mad::MultiPathRecord& m, uint64_t mask) {
  Mad q = SaClient::make(method::kGetMulti, mask, m);
  q[RmppHeader::kOffset] = RmppHeader::kVersion;
  q[RmppHeader::kOffset + 1] = RmppHeader::kTypeData;
  q[RmppHeader::kOffset + 2] = RmppHeader::kFlagActive | RmppHeader::kFlagFirst | RmppHeader::kFlagLast;
  wire::store_be32(&q[RmppHeader::kOffset + 4], 1);
  wire::store_be32(&q[RmppHeader::kOffset + 8], 20 + mad::MultiPathRecord::kSize);
  return q;
}

TEST_F(SaOnFabric, MultiPathRecordIsAckedThenAnsweredWithPathRecords) {
  mad::MultiPathRecord m;
  m.sgid_count = 2;
  m.dgid_count = 2;
  m.gids[0] = wire::Gid::from(sm.subnet().prefix, h(2).port(1).guid());
  m.gids[1] = wire::Gid::from(sm.subnet().prefix, h(3).port(1).guid());
  m.gids[2] = wire::Gid::from(sm.subnet().prefix, h(5).port(1).guid());
  m.gids[3] = wire::Gid::from(sm.subnet().prefix, h(8).port(1).guid());
  const std::size_t first = client->received.size();
  ASSERT_TRUE(client->send(multipath_request(m, mp::kSgidCount | mp::kDgidCount)));
  ASSERT_TRUE(client->wait_for(first + 2));
  const Mad& ack = client->received[first];
  EXPECT_EQ(ack[RmppHeader::kOffset + 1], RmppHeader::kTypeAck) << "the request segment is ACKed";
  EXPECT_EQ(wire::load_be32(&ack[RmppHeader::kOffset + 4]), 1u);
  const Mad& resp = client->received[first + 1];
  const mad::ConstSaBuffer r(resp.data(), resp.size());
  EXPECT_EQ(mad::sa_method(r), method::kGetMultiResp);
  EXPECT_EQ(mad::sa_attribute_id(r), mad::PathRecord::kAttributeId);
  ASSERT_EQ(mad::sa_status(r), st::kOk);
  EXPECT_EQ(resp[RmppHeader::kOffset + 1], RmppHeader::kTypeData);
  // Two segments hold 4 paths of 64 bytes; the first carries 3.
  std::set<std::pair<uint16_t, uint16_t>> pairs;
  const auto data = mad::sa_data(r);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto p = mad::PathRecord::unpack(data.subspan(i * 64, 64));
    pairs.emplace(p.slid, p.dlid);
  }
  EXPECT_TRUE(pairs.count({h(2).port(1).lid, h(5).port(1).lid}));
  EXPECT_TRUE(pairs.count({h(2).port(1).lid, h(8).port(1).lid}));
  EXPECT_TRUE(pairs.count({h(3).port(1).lid, h(5).port(1).lid}));

  // Errors: counts not masked; a multicast source GID; NumbPath limits.
  const auto status_of = [&](const mad::MultiPathRecord& q, uint64_t mask) {
    const std::size_t n = client->received.size();
    EXPECT_TRUE(client->send(multipath_request(q, mask)));
    EXPECT_TRUE(client->wait_for(n + 2));
    return mad::sa_status(mad::ConstSaBuffer(client->received[n + 1].data(), 256));
  };
  EXPECT_EQ(status_of(m, mp::kSgidCount), st::kSaInsufficientComponents);
  mad::MultiPathRecord mc = m;
  mc.gids[0] = *wire::Gid::parse("ff12:401b:ffff::ffff:ffff");
  EXPECT_EQ(status_of(mc, mp::kSgidCount | mp::kDgidCount), st::kSaInvalidGid);
  // Not by RMPP: 0x0200; not GetMulti: 0x000C.
  const auto plain = testing::ask(*client, SaClient::make(method::kGetMulti, mp::kSgidCount | mp::kDgidCount, m));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, st::kSaReqInvalid);
  Mad get = multipath_request(m, mp::kSgidCount | mp::kDgidCount);
  get[3] = method::kGet;
  const std::size_t n = client->received.size();
  ASSERT_TRUE(client->send(get));
  ASSERT_TRUE(client->wait_for(n + 2));
  EXPECT_EQ(mad::sa_status(mad::ConstSaBuffer(client->received[n + 1].data(), 256)), st::kMethodAttrUnsupported);
}

}  // namespace
}  // namespace ibfab::sm
