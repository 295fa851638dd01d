// The SA end to end: SA MADs over QP1 from clients on other hosts of a
// hand-configured fabric (line:2:2, the SA on H1) to SaAgent and back.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "fabric/mad/class_port_info.h"
#include "fabric/mad/notice.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "fabric/mad/sa/sa_class_port_info.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/rmpp_header.h"
#include "sim/rng.h"
#include "sm/sa/path_records.h"
#include "sm/sa/sa_agent.h"
#include "tests/fabric/model/hand_config.h"
#include "tests/sm/sa_client.h"
#include "tests/sm/sa_fake_routing.h"
#include "tests/sm/sa_rate_oracle.h"
#include "tests/sm/sa_table_client.h"
#include "tests/sm/sa_test_subnet.h"

namespace ibfab::sm {
namespace {

using testing::Mad;
using testing::SaClient;
namespace method = wire::mad_method;
namespace st = wire::mad_status;
namespace comp = mad::mcm_comp;
using wire::RmppHeader;

mad::ConstSaBuffer sa(const Mad& m) { return mad::ConstSaBuffer(m.data(), m.size()); }
uint8_t rmpp_type(const Mad& m) { return m[RmppHeader::kOffset + 1]; }
uint8_t rmpp_flags(const Mad& m) { return m[RmppHeader::kOffset + 2] & 7; }
uint32_t rmpp_seg(const Mad& m) { return wire::load_be32(&m[RmppHeader::kOffset + 4]); }
uint32_t rmpp_len(const Mad& m) { return wire::load_be32(&m[RmppHeader::kOffset + 8]); }

class SaAgentTest : public ::testing::Test {
 protected:
  explicit SaAgentTest(McastOptions options = {})
      : topo(topo::load_topology("line:2:2")),
        fabric(sim, topo),
        lids(fabric::testing::configure_by_hand(fabric)),
        subnet(testing::subnet_from_fabric(fabric, h(1))),
        routing(subnet.mcast_fdb_cap),
        groups(subnet, routing, options),
        agent(h(1), 1, subnet, groups) {
    agent.set_serving(true);
  }
  fabric::Hca& h(int i) const { return *fabric.find_hca("H" + std::to_string(i)); }
  uint16_t lid(int i) const { return h(i).port(1).lid; }
  wire::Gid gid(int i) const { return wire::Gid::from(subnet.prefix, h(i).port(1).guid()); }
  SaClient client(int i) { return SaClient(fabric, h(i), lid(1)); }

  static wire::Gid mgid(uint16_t n) {
    wire::Gid g;
    g.raw[0] = 0xFF;
    g.raw[1] = 0x15;
    g.raw[14] = static_cast<uint8_t>(n >> 8);
    g.raw[15] = static_cast<uint8_t>(n);
    return g;
  }
  mad::McMemberRecord member(const wire::Gid& group, int host, uint8_t js = 1) const {
    mad::McMemberRecord r;
    r.mgid = group;
    r.port_gid = gid(host);
    r.q_key = 0x11111111;
    r.p_key = 0xFFFF;
    r.join_state = js;
    return r;
  }

  sim::Simulator sim;
  topo::Topology topo;
  fabric::Fabric fabric;
  std::vector<uint16_t> lids;
  Subnet subnet;
  testing::FakeRouting routing;
  McastGroups groups;
  SaAgent agent;
};

TEST_F(SaAgentTest, JoinAndLeaveOverQp1) {
  SaClient c(fabric, h(2), lid(1));
  const Mad set = SaClient::make(method::kSet, comp::kCreateRequiredMask, member(mgid(1), 2));
  const std::optional<Mad> r = c.request(set);
  ASSERT_TRUE(r);
  EXPECT_EQ(mad::sa_method(sa(*r)), method::kGetResp);
  EXPECT_EQ(mad::sa_status(sa(*r)), st::kOk);
  EXPECT_EQ(static_cast<uint32_t>(mad::sa_tid(sa(*r))), 0x77u);
  EXPECT_EQ(mad::sa_attribute_offset(sa(*r)), 7);
  EXPECT_EQ(mad::sa_sm_key(sa(*r)), 0u);
  const auto rec = mad::McMemberRecord::unpack(mad::sa_data(sa(*r)));
  EXPECT_EQ(rec.mlid, 0xC001);  // 0xC000 is the IPoIB broadcast group's
  EXPECT_EQ(rec.join_state, 1);
  EXPECT_EQ(c.sources.back().lid, lid(1));
  EXPECT_EQ(routing.members[0xC001], (std::set<uint64_t>{h(2).port(1).guid()}));

  const Mad del = SaClient::make(method::kDelete, comp::kJoinRequiredMask, member(mgid(1), 2));
  const std::optional<Mad> d = c.request(del);
  ASSERT_TRUE(d);
  EXPECT_EQ(mad::sa_method(sa(*d)), method::kDeleteResp);
  EXPECT_EQ(mad::sa_status(sa(*d)), st::kOk);
  EXPECT_EQ(groups.find(mgid(1)), nullptr);
  EXPECT_EQ(agent.metrics().joins, 1u);
  EXPECT_EQ(agent.metrics().leaves, 1u);

  // An error echoes the request with the status.
  const std::optional<Mad> e = c.request(del);
  ASSERT_TRUE(e);
  EXPECT_EQ(mad::sa_method(sa(*e)), method::kDeleteResp);
  EXPECT_EQ(mad::sa_status(sa(*e)), st::kSaReqInvalid);
  EXPECT_TRUE(std::equal(e->begin() + 56, e->end(), del.begin() + 56));
  EXPECT_EQ(agent.metrics().by_status.at(st::kSaReqInvalid), 1u);
}

TEST_F(SaAgentTest, GetTableOf20GroupsGoesThroughRmppWindows) {
  SaClient c(fabric, h(3), lid(1));
  for (uint16_t n = 1; n <= 20; ++n)
    ASSERT_EQ(groups.join(subnet.port_by_lid.at(lid(3)), member(mgid(n), 3), comp::kCreateRequiredMask)
                  .status,
              st::kOk);
  // 21 groups (with the broadcast one) x 56 bytes = 1176 bytes: 6 segments.
  const Mad q = SaClient::make(method::kGetTable, 0, mad::McMemberRecord{});
  ASSERT_TRUE(c.request(q));
  ASSERT_EQ(c.received.size(), 1u) << "window 1: one segment before the first ACK";
  auto ack = [&](uint32_t seg, uint32_t nwl) {
    Mad a = q;
    a[RmppHeader::kOffset] = 1;
    a[RmppHeader::kOffset + 1] = RmppHeader::kTypeAck;
    a[RmppHeader::kOffset + 2] = RmppHeader::kFlagActive;
    wire::store_be32(&a[RmppHeader::kOffset + 4], seg);
    wire::store_be32(&a[RmppHeader::kOffset + 8], nwl);
    ASSERT_TRUE(c.send(a));
  };
  ack(1, 4);
  ASSERT_TRUE(c.wait_for(4));
  sim.run_until(sim.now() + sim::Time::ms(1));
  EXPECT_EQ(c.received.size(), 4u) << "no segment past NewWindowLast";
  ack(4, 8);
  ASSERT_TRUE(c.wait_for(6));
  ack(6, 6);
  sim.run();
  EXPECT_EQ(agent.rmpp().active(), 0u);
  EXPECT_EQ(agent.rmpp().stats().completed, 1u);
  EXPECT_EQ(agent.rmpp().stats().resent, 0u);
  ASSERT_EQ(c.received.size(), 6u);
  std::vector<uint8_t> payload;
  for (uint32_t i = 0; i < 6; ++i) {
    const Mad& m = c.received[i];
    EXPECT_EQ(mad::sa_method(sa(m)), method::kGetTableResp);
    EXPECT_EQ(mad::sa_attribute_offset(sa(m)), 7);
    EXPECT_EQ(rmpp_type(m), RmppHeader::kTypeData);
    EXPECT_EQ(rmpp_seg(m), i + 1);
    uint8_t flags = RmppHeader::kFlagActive;
    if (i == 0) flags |= RmppHeader::kFlagFirst;
    if (i == 5) flags |= RmppHeader::kFlagLast;
    EXPECT_EQ(rmpp_flags(m), flags);
    EXPECT_EQ(rmpp_len(m), i == 0 ? 6u * 220 - 24 : (i == 5 ? 220u - 24 : 0u));
    payload.insert(payload.end(), m.begin() + 56, m.end());
  }
  payload.resize(1176);
  ASSERT_EQ(mad::sa_records_in(payload, 7), 21u);
  std::set<wire::Gid> seen;
  for (std::size_t i = 0; i < 21; ++i)
    seen.insert(mad::McMemberRecord::unpack(mad::sa_record(payload, 7, i)).mgid);
  for (uint16_t n = 1; n <= 20; ++n) EXPECT_TRUE(seen.count(mgid(n)));
}

TEST_F(SaAgentTest, SingleSegmentTableIsAckedAndResentWithoutAck) {
  SaClient c(fabric, h(2), lid(1));
  mad::McMemberRecord q;
  q.mgid = McastGroups::ipoib_broadcast_mgid(2, 0xFFFF);
  const Mad m = SaClient::make(method::kGetTable, comp::kMgid, q);
  const std::optional<Mad> r = c.request(m);
  ASSERT_TRUE(r);
  EXPECT_EQ(rmpp_flags(*r), RmppHeader::kFlagActive | RmppHeader::kFlagFirst | RmppHeader::kFlagLast);
  EXPECT_EQ(rmpp_len(*r), 220u - 200 + 56);
  EXPECT_EQ(agent.rmpp().active(), 1u);
  // No ACK: the segment comes again after 2 s, then the transfer is dropped.
  sim.run();
  EXPECT_EQ(c.received.size(), 4u);  // 1 + 3 retries
  EXPECT_EQ(agent.rmpp().active(), 0u);
  EXPECT_EQ(agent.rmpp().stats().dropped, 1u);
  // Empty table: status 0, AttributeOffset 0, still RMPP.
  q.mgid = mgid(99);
  const std::optional<Mad> e = c.request(SaClient::make(method::kGetTable, comp::kMgid, q));
  ASSERT_TRUE(e);
  EXPECT_EQ(mad::sa_status(sa(*e)), st::kOk);
  EXPECT_EQ(mad::sa_attribute_offset(sa(*e)), 0);
  Mad a = *e;
  a[3] = method::kGetTable;
  a[RmppHeader::kOffset + 1] = RmppHeader::kTypeAck;
  wire::store_be32(&a[RmppHeader::kOffset + 8], 1);
  ASSERT_TRUE(c.send(a));
  sim.run();
  EXPECT_EQ(agent.rmpp().active(), 0u);
  EXPECT_EQ(agent.rmpp().stats().completed, 1u);
}

TEST_F(SaAgentTest, PathRecordBetweenTwoLids) {
  SaClient c(fabric, h(2), lid(1));
  mad::PathRecord q;
  q.slid = lid(2);
  q.dlid = lid(4);
  const std::optional<Mad> r = c.request(
      SaClient::make(method::kGet, mad::pr_comp::kSlid | mad::pr_comp::kDlid, q));
  ASSERT_TRUE(r);
  ASSERT_EQ(mad::sa_status(sa(*r)), st::kOk);
  const auto p = mad::PathRecord::unpack(mad::sa_data(sa(*r)));
  EXPECT_EQ(p.slid, lid(2));
  EXPECT_EQ(p.dlid, lid(4));
  EXPECT_EQ(p.sgid, gid(2));
  EXPECT_EQ(p.dgid, gid(4));
  EXPECT_EQ(p.p_key, 0xFFFF);
  EXPECT_EQ(p.mtu, h(2).port(1).neighbor_mtu);
  EXPECT_EQ(p.rate, h(2).port(1).link()->rate().sa_rate());
  EXPECT_EQ(p.mtu_selector, 2);
  EXPECT_TRUE(p.reversible);
  EXPECT_EQ(p.packet_life_time, 0x12);
  // By DGID alone: from every source, and a Get takes the first found.
  q = {};
  q.dgid = gid(3);
  const std::optional<Mad> g = c.request(SaClient::make(method::kGet, mad::pr_comp::kDgid, q));
  ASSERT_TRUE(g);
  EXPECT_EQ(mad::PathRecord::unpack(mad::sa_data(sa(*g))).dlid, lid(3));
  // Unknown LID: no record; no mask: every source to every destination,
  // of which a Get takes the first (OpenSM's "world" search).
  q = {};
  q.dlid = 999;
  const std::optional<Mad> none = c.request(SaClient::make(method::kGet, mad::pr_comp::kDlid, q));
  ASSERT_TRUE(none);
  EXPECT_EQ(mad::sa_status(sa(*none)), st::kSaNoRecords);
  const std::optional<Mad> first = c.request(SaClient::make(method::kGet, 0, mad::PathRecord{}));
  ASSERT_TRUE(first);
  EXPECT_EQ(mad::sa_status(sa(*first)), st::kOk);
  const uint64_t lowest = subnet.ports_in_table_order().front()->guid;
  EXPECT_EQ(mad::PathRecord::unpack(mad::sa_data(sa(*first))).dgid.guid(), lowest);
  EXPECT_EQ(mad::PathRecord::unpack(mad::sa_data(sa(*first))).sgid.guid(), lowest);
  std::vector<mad::PathRecord> all;
  ASSERT_EQ(path_records(subnet, groups, subnet.port_by_lid.at(lid(2)), mad::PathRecord{}, 0, 0x12, all),
            st::kOk);
  EXPECT_EQ(all.size(), subnet.ports.size() * subnet.ports.size());
  // ServiceID half-masked.
  const std::optional<Mad> sid =
      c.request(SaClient::make(method::kGet, mad::pr_comp::kServiceIdMsb, mad::PathRecord{}));
  ASSERT_TRUE(sid);
  EXPECT_EQ(mad::sa_status(sa(*sid)), st::kSaInsufficientComponents);
}

TEST_F(SaAgentTest, PathRecordToAMulticastGid) {
  mad::McMemberRecord m = member(mgid(5), 3);
  m.sl = 2;
  m.tclass = 3;
  m.flow_label = 4;
  const McastResult j = groups.join(subnet.port_by_lid.at(lid(3)), m, comp::kCreateRequiredMask);
  ASSERT_EQ(j.status, st::kOk);
  SaClient c(fabric, h(2), lid(1));
  mad::PathRecord q;
  q.dgid = mgid(5);
  q.sgid = gid(2);
  const std::optional<Mad> r =
      c.request(SaClient::make(method::kGet, mad::pr_comp::kDgid | mad::pr_comp::kSgid, q));
  ASSERT_TRUE(r);
  ASSERT_EQ(mad::sa_status(sa(*r)), st::kOk);
  const auto p = mad::PathRecord::unpack(mad::sa_data(sa(*r)));
  EXPECT_EQ(p.dlid, j.record.mlid);
  EXPECT_EQ(p.dgid, mgid(5));
  EXPECT_EQ(p.slid, lid(2));
  EXPECT_EQ(p.p_key, 0xFFFF);
  EXPECT_EQ(p.sl, 2);
  EXPECT_EQ(p.tclass, 3);
  EXPECT_EQ(p.flow_label, 4u);
}

// 3,000 PathRecord requests (Get, and GetTable through every RMPP segment)
// with random component masks and field values, over ports with varied
// MTUs, rates, P_Keys and an LMC: every record answered is checked against
// the request and the two ports it joins (this Subnet holds no routes, so a
// path carries the lower NeighborMTU and rate of its two ends), with rates
// ordered by their data rate after line coding (sa_rate_oracle.h).
TEST_F(SaAgentTest, PathRecordAnswersAgreeWithTheRequestAndTheirPorts) {
  namespace pr = mad::pr_comp;
  const McastResult j = groups.join(subnet.port_by_lid.at(lid(3)), member(mgid(9), 3),
                                    comp::kCreateRequiredMask);
  ASSERT_EQ(j.status, st::kOk);
  const uint8_t mtus[] = {5, 4, 3, 5, 2, 4};
  const uint8_t rates[] = {7, 16, 3, 5, 17, 6};
  const std::vector<uint16_t> pkeys[] = {{0xFFFF, 0x8001, 0x0002}, {0x7FFF, 0x0001, 0x8002},
                                         {0xFFFF, 0x0001}, {0xFFFF, 0x8001, 0x1234},
                                         {0xFFFF}, {0x7FFF, 0x8002}};
  for (std::size_t i = 0; i < subnet.ports.size(); ++i) {
    subnet.ports[i].neighbor_mtu = mtus[i % 6];
    subnet.ports[i].rate = rates[i % 6];
    if (subnet.ports[i].guid != subnet.sm_port_guid) subnet.ports[i].pkeys = pkeys[i % 6];
  }
  // The port of H4 answers to two LIDs in the SM's view (LMC 1).
  SubnetPort& p4 = subnet.ports[subnet.port_by_lid.at(lid(4))];
  p4.lmc = 1;
  subnet.port_by_lid[static_cast<uint16_t>(lid(4) + 1)] = subnet.port_by_lid.at(lid(4));

  std::vector<wire::Gid> gids;
  std::vector<uint16_t> lids_known;
  for (const SubnetPort& p : subnet.ports) {
    gids.push_back(wire::Gid::from(subnet.prefix, p.guid));
    lids_known.push_back(p.lid);
  }
  gids.push_back(wire::Gid::from(subnet.prefix, 0x1234));  // unknown port
  gids.push_back(mgid(9));                                 // the group
  gids.push_back(mgid(10));                                // no such group
  lids_known.push_back(static_cast<uint16_t>(lid(4) + 1));
  lids_known.push_back(999);
  const uint16_t pkey_values[] = {0xFFFF, 0x7FFF, 0x8001, 0x0001, 0x0002, 0x1234, 0x8002};
  const uint64_t bits[] = {pr::kServiceId, pr::kServiceIdMsb, pr::kDgid, pr::kSgid, pr::kDlid,
                           pr::kSlid, pr::kFlowLabel, pr::kHopLimit, pr::kTClass, pr::kReversible,
                           pr::kNumbPath, pr::kPKey, pr::kQosClass, pr::kSl,
                           pr::kMtuSelector | pr::kMtu, pr::kRateSelector | pr::kRate,
                           pr::kPacketLifeTimeSelector | pr::kPacketLifeTime, pr::kMtu};
  sim::Rng rng(2024);
  std::vector<SaClient> clients;
  clients.reserve(3);
  for (int i = 2; i <= 4; ++i) clients.emplace_back(fabric, h(i), lid(1));
  const auto port_of = [&](uint16_t l) -> const SubnetPort* {
    for (const SubnetPort& p : subnet.ports)
      if (p.lid != 0 && (l >> p.lmc) == (p.lid >> p.lmc)) return &p;
    return nullptr;
  };
  const auto holds = [](const SubnetPort& p, uint16_t key) {
    return std::any_of(p.pkeys.begin(), p.pkeys.end(),
                       [&](uint16_t e) { return (e & 0x7FFF) == (key & 0x7FFF) && (key & 0x7FFF) != 0; });
  };
  // Does `have` satisfy `want` under selector 0 (>), 1 (<), 2 (=), 3 (best)?
  const auto satisfies = [](double have, uint8_t sel, double want) {
    return sel == 0 ? have > want : sel == 1 ? have < want : sel == 2 ? have == want : true;
  };
  std::size_t checked = 0, unicast = 0;
  const auto check = [&](const mad::PathRecord& q, uint64_t mask, const mad::PathRecord& r, int query) {
    SCOPED_TRACE("query " + std::to_string(query));
    ++checked;
    EXPECT_EQ(r.mtu_selector, mad::selector::kExactly);
    EXPECT_EQ(r.rate_selector, mad::selector::kExactly);
    EXPECT_EQ(r.packet_life_time_selector, mad::selector::kExactly);
    if (r.dgid.is_multicast()) {  // the group's record
      EXPECT_TRUE(mask & pr::kDgid);
      EXPECT_EQ(r.dgid, mgid(9));
      EXPECT_EQ(r.dlid, j.record.mlid);
      EXPECT_EQ(r.p_key, j.record.p_key);
      return;
    }
    ++unicast;
    const SubnetPort* s = port_of(r.slid);
    const SubnetPort* d = port_of(r.dlid);
    ASSERT_TRUE(s && d) << r.slid << "->" << r.dlid;
    EXPECT_EQ(r.sgid, wire::Gid::from(subnet.prefix, s->guid));
    EXPECT_EQ(r.dgid, wire::Gid::from(subnet.prefix, d->guid));
    if (mask & pr::kSgid) EXPECT_EQ(r.sgid, q.sgid);
    if (mask & pr::kDgid) EXPECT_EQ(r.dgid, q.dgid);
    if (mask & pr::kSlid) EXPECT_EQ(r.slid, q.slid);
    else EXPECT_EQ(r.slid, s->lid) << "the base LID";
    if (mask & pr::kDlid) EXPECT_EQ(r.dlid, q.dlid);
    else EXPECT_EQ(r.dlid, d->lid) << "the base LID";
    EXPECT_EQ(r.service_id, (mask & pr::kServiceId) ? q.service_id : 0u);
    EXPECT_EQ(r.flow_label, (mask & pr::kFlowLabel) ? q.flow_label : 0u);
    EXPECT_EQ(r.hop_limit, (mask & pr::kHopLimit) ? q.hop_limit : 0);
    EXPECT_EQ(r.tclass, (mask & pr::kTClass) ? q.tclass : 0);
    EXPECT_EQ(r.sl, (mask & pr::kSl) ? q.sl : 0);
    EXPECT_TRUE(r.reversible);
    if (mask & pr::kPKey) EXPECT_EQ(r.p_key, q.p_key);
    EXPECT_TRUE(holds(*s, r.p_key) && holds(*d, r.p_key)) << std::hex << r.p_key;
    if (!(mask & pr::kPKey)) {
      // Chosen by the SA: an entry of the source's table that matches one
      // of the destination's (same base, not both limited; IBTA 10.9.3).
      EXPECT_TRUE(std::count(s->pkeys.begin(), s->pkeys.end(), r.p_key) == 1) << std::hex << r.p_key;
      EXPECT_TRUE(std::any_of(d->pkeys.begin(), d->pkeys.end(), [&](uint16_t e) {
        return (e & 0x7FFF) == (r.p_key & 0x7FFF) && ((e | r.p_key) & 0x8000);
      })) << std::hex << r.p_key;
    }
    const uint8_t mtu_cap = std::min(s->neighbor_mtu, d->neighbor_mtu);
    const double rate_cap =
        std::min(testing::data_gbps_of_sa_rate(s->rate), testing::data_gbps_of_sa_rate(d->rate));
    const double rate = testing::data_gbps_of_sa_rate(r.rate);
    EXPECT_NE(rate, 0) << "a rate the enum names";
    EXPECT_LE(r.mtu, mtu_cap);
    EXPECT_LE(rate, rate_cap) << "rate " << int(r.rate) << " sel " << int(q.rate_selector) << " asked "
                              << int(q.rate) << " masked " << ((mask & pr::kRate) != 0) << " ends "
                              << int(s->rate) << "," << int(d->rate);
    if ((mask & (pr::kMtuSelector | pr::kMtu)) == (pr::kMtuSelector | pr::kMtu))
      EXPECT_TRUE(satisfies(r.mtu, q.mtu_selector, q.mtu)) << int(r.mtu) << " sel " << int(q.mtu_selector);
    else
      EXPECT_EQ(r.mtu, mtu_cap);
    // The SA's rate table, as OpenSM's, ends at 21 (400 Gb/s): a selector
    // against 22 (600 Gb/s) compares with an unranked rate, not checked.
    if ((mask & (pr::kRateSelector | pr::kRate)) == (pr::kRateSelector | pr::kRate)) {
      if (q.rate <= 21)
        EXPECT_TRUE(satisfies(rate, q.rate_selector, testing::data_gbps_of_sa_rate(q.rate)))
          << "rate " << int(r.rate) << " sel " << int(q.rate_selector) << " asked " << int(q.rate)
            << " ends " << int(s->rate) << "," << int(d->rate);
    } else {
      EXPECT_EQ(rate, rate_cap);
    }
    EXPECT_EQ(r.packet_life_time == 0, s == d) << "no lifetime on a path to itself only";
  };
  for (int q = 0; q < 3000; ++q) {
    mad::PathRecord r;
    uint64_t mask = 0;
    for (uint64_t b : bits)
      if (rng.below(4) == 0) mask |= b;
    r.service_id = rng.next();
    r.dgid = gids[rng.below(gids.size())];
    r.sgid = gids[rng.below(gids.size() - 2)];
    r.dlid = lids_known[rng.below(lids_known.size())];
    r.slid = lids_known[rng.below(lids_known.size())];
    r.flow_label = static_cast<uint32_t>(rng.below(1u << 20));
    r.hop_limit = static_cast<uint8_t>(rng.below(256));
    r.tclass = static_cast<uint8_t>(rng.below(256));
    r.reversible = rng.below(2) != 0;
    r.numb_path = static_cast<uint8_t>(rng.below(128));
    r.p_key = pkey_values[rng.below(std::size(pkey_values))];
    r.qos_class = static_cast<uint16_t>(rng.below(1u << 12));
    r.sl = static_cast<uint8_t>(rng.below(16));
    r.mtu_selector = static_cast<uint8_t>(rng.below(4));
    r.mtu = static_cast<uint8_t>(rng.below(7));
    r.rate_selector = static_cast<uint8_t>(rng.below(4));
    r.rate = static_cast<uint8_t>(rng.below(23));
    r.packet_life_time_selector = static_cast<uint8_t>(rng.below(4));
    r.packet_life_time = static_cast<uint8_t>(rng.below(64));
    const uint8_t m = rng.below(3) == 0 ? method::kGetTable : method::kGet;
    SaClient& c = clients[rng.below(clients.size())];
    const std::optional<testing::SaAnswer> a = testing::ask(c, SaClient::make(m, mask, r, 0, 0x1000 + q));
    ASSERT_TRUE(a) << "query " << q;
    if (a->status != st::kOk) continue;
    // A Get answer holds one record (its MAD's data is padded past it).
    const std::size_t records = m == method::kGet ? 1 : a->count();
    for (std::size_t k = 0; k < records; ++k) check(r, mask, a->record<mad::PathRecord>(k), q);
  }
  sim.run();
  EXPECT_EQ(agent.rmpp().active(), 0u);
  EXPECT_GT(agent.metrics().by_status.at(st::kOk), 1000u);
  EXPECT_GT(agent.metrics().by_status.at(st::kSaNoRecords), 100u);
  EXPECT_EQ(agent.metrics().by_status.count(st::kSaTooManyRecords), 0u) << "a Get stops at its first path";
  EXPECT_GT(unicast, 1000u);
  EXPECT_GT(checked, unicast);
}

TEST_F(SaAgentTest, InformInfoSubscriptionThenReportForTrap66) {
  SaClient sub(fabric, h(4), lid(1));
  mad::InformInfo ii = testing::trap_subscription(mad::trap_number::kMcGroupCreated);
  const std::optional<Mad> r = sub.request(SaClient::make(method::kSet, 0, ii));
  ASSERT_TRUE(r);
  EXPECT_EQ(mad::sa_method(sa(*r)), method::kGetResp);
  ASSERT_EQ(mad::sa_status(sa(*r)), st::kOk);
  const auto stored = mad::InformInfo::unpack(mad::sa_data(sa(*r)));
  EXPECT_EQ(stored.qpn, 1u);
  EXPECT_EQ(stored.trap_number, 66);

  SaClient joiner(fabric, h(2), lid(1));
  ASSERT_TRUE(joiner.request(SaClient::make(method::kSet, comp::kCreateRequiredMask, member(mgid(1), 2))));
  ASSERT_TRUE(sub.wait_for(2));
  const Mad rep = sub.received[1];  // a copy: more reports grow the vector
  EXPECT_EQ(mad::sa_method(sa(rep)), method::kReport);
  EXPECT_EQ(mad::sa_attribute_id(sa(rep)), mad::Notice::kAttributeId);
  EXPECT_EQ(static_cast<uint32_t>(mad::sa_tid(sa(rep))), SaAgent::kFirstReportTid);
  const auto n = mad::Notice::unpack(mad::sa_data(sa(rep)));
  EXPECT_TRUE(n.is_generic);
  EXPECT_EQ(n.type, mad::notice_type::kSubnetManagement);
  EXPECT_EQ(n.producer_type, mad::producer_type::kClassManager);
  EXPECT_EQ(n.trap_number, 66);
  EXPECT_EQ(n.issuer_lid, lid(1));
  EXPECT_EQ(n.details_gid(), mgid(1).raw);
  EXPECT_EQ(rep[56], 0x83);
  // Unanswered, it comes again; a ReportResp with the same TID ends it.
  sim.run_until(sim.now() + sim::Time::ms(250));
  EXPECT_EQ(sub.received.size(), 3u);
  Mad resp = rep;
  resp[3] = method::kReportResp;
  ASSERT_TRUE(sub.send(resp));
  sim.run();
  EXPECT_EQ(agent.metrics().reports_acked, 1u);
  EXPECT_EQ(agent.reports_pending(), 0u);
  EXPECT_EQ(sub.received.size(), 3u);
  // Trap 67 is not subscribed to: leaving sends nothing.
  ASSERT_TRUE(joiner.request(SaClient::make(method::kDelete, comp::kJoinRequiredMask, member(mgid(1), 2))));
  sim.run();
  EXPECT_EQ(sub.received.size(), 3u);
  // Unsubscribing something never subscribed is 0x0200.
  ii.trap_number = 67;
  ii.subscribe = 0;
  const std::optional<Mad> u = sub.request(SaClient::make(method::kSet, 0, ii));
  ASSERT_TRUE(u);
  EXPECT_EQ(mad::sa_status(sa(*u)), st::kSaReqInvalid);
}

// OpenSM's SA ClassPortInfo, read from its recorded `saquery CPI` output
// (tests/sm/opensm_sa_class_port_info.txt): label -> the 32-bit word (or
// byte, half-word, GID) the label names, as numbers.
std::map<std::string, std::string> opensm_cpi() {
  std::ifstream in(IBFAB_OPENSM_SA_CPI);
  std::map<std::string, std::string> f;
  for (std::string line; std::getline(in, line);) {
    const auto dots = line.find("..");
    if (line.empty() || line[0] == '#' || dots == std::string::npos) continue;
    const auto first = line.find_first_not_of(" \t");
    f[line.substr(first, dots - first)] = line.substr(line.find_last_of('.') + 1);
  }
  return f;
}
uint32_t number(const std::map<std::string, std::string>& f, const std::string& label) {
  const auto it = f.find(label);
  EXPECT_NE(it, f.end()) << label;
  return it == f.end() ? 0xDEADBEEF : static_cast<uint32_t>(std::stoul(it->second, nullptr, 0));
}

// Every field of the built-in SA's ClassPortInfo is OpenSM's (saquery's
// labels; the offsets are IBTA 13.4.8.1's, within the SA data).
TEST_F(SaAgentTest, ClassPortInfoIsOpenSmsFieldByField) {
  const auto cpi = opensm_cpi();
  ASSERT_EQ(cpi.size(), 17u) << IBFAB_OPENSM_SA_CPI;
  SaClient c(fabric, h(2), lid(1));
  Mad q{};
  mad::init_sa_request(mad::SaBuffer(q.data(), q.size()), method::kGet, mad::ClassPortInfo::kAttributeId,
                       1, 0);
  const std::optional<Mad> r = c.request(q);
  ASSERT_TRUE(r);
  ASSERT_EQ(mad::sa_status(sa(*r)), st::kOk);
  const uint8_t* d = r->data() + 56;
  EXPECT_EQ(d[0], number(cpi, "Base version"));
  EXPECT_EQ(d[1], number(cpi, "Class version"));
  EXPECT_EQ(wire::load_be16(d + 2), number(cpi, "Capability mask"));
  EXPECT_EQ(wire::load_be32(d + 4) >> 5, number(cpi, "Capability mask 2"));
  EXPECT_EQ(wire::load_be32(d + 4) & 0x1F, number(cpi, "Response time value"));
  for (const auto& [label, at] : {std::pair<std::string, int>{"Redirect GID", 8}, {"Trap GID", 40}}) {
    ASSERT_EQ(cpi.at(label), "::") << label << ": only the zero GID is read here";
    EXPECT_TRUE(std::all_of(d + at, d + at + 16, [](uint8_t b) { return b == 0; })) << label;
  }
  EXPECT_EQ(wire::load_be32(d + 24), number(cpi, "Redirect TC/SL/FL"));
  EXPECT_EQ(wire::load_be16(d + 28), number(cpi, "Redirect LID"));
  EXPECT_EQ(wire::load_be16(d + 30), number(cpi, "Redirect PKey"));
  EXPECT_EQ(wire::load_be32(d + 32), number(cpi, "Redirect QP"));
  EXPECT_EQ(wire::load_be32(d + 36), number(cpi, "Redirect QKey"));
  EXPECT_EQ(wire::load_be32(d + 56), number(cpi, "Trap TC/SL/FL"));
  EXPECT_EQ(wire::load_be16(d + 60), number(cpi, "Trap LID"));
  EXPECT_EQ(wire::load_be16(d + 62), number(cpi, "Trap PKey"));
  EXPECT_EQ(wire::load_be32(d + 64), number(cpi, "Trap HL/QP"));
  EXPECT_EQ(wire::load_be32(d + 68), number(cpi, "Trap QKey"));
  EXPECT_TRUE((wire::load_be32(d + 4) >> 5) & (1u << 12)) << "SendOnlyFullMember";
  Mad set = q;
  set[3] = method::kSet;
  const std::optional<Mad> s = c.request(set);
  ASSERT_TRUE(s);
  EXPECT_EQ(mad::sa_status(sa(*s)), st::kSaReqInvalid);
}

// The SA's ClassPortInfo CapabilityMask2 (bits 31:5 of the dword at data
// offset 4, below RespTimeValue).
uint32_t capability_mask2(SaClient& c) {
  Mad q{};
  mad::init_sa_request(mad::SaBuffer(q.data(), q.size()), method::kGet, mad::ClassPortInfo::kAttributeId,
                       1, 0);
  const std::optional<Mad> r = c.request(q);
  EXPECT_TRUE(r);
  if (!r) return 0;
  EXPECT_EQ(mad::sa_status(sa(*r)), st::kOk);
  return wire::load_be32(r->data() + 56 + 4) >> 5;
}

TEST_F(SaAgentTest, SendOnlyFullJoinAcceptedByDefault) {
  SaClient c(fabric, h(2), lid(1));
  EXPECT_EQ(capability_mask2(c) & mad::sa_cap2::kIsSendOnlyFullMemberSupported,
            mad::sa_cap2::kIsSendOnlyFullMemberSupported);
  const std::optional<Mad> r =
      c.request(SaClient::make(method::kSet, comp::kCreateRequiredMask, member(mgid(1), 2, 0x8)));
  ASSERT_TRUE(r);
  EXPECT_EQ(mad::sa_status(sa(*r)), st::kOk);
  EXPECT_EQ(mad::McMemberRecord::unpack(mad::sa_data(sa(*r))).join_state, 0x8);
  ASSERT_NE(groups.find(mgid(1)), nullptr);
}

// An SA as OpenSM before 3.3.21 (SA-MULTICAST.md section 4).
class SaAgentWithoutSendOnlyTest : public SaAgentTest {
 protected:
  SaAgentWithoutSendOnlyTest() : SaAgentTest(McastOptions{.send_only_full_member = false}) {}
};

TEST_F(SaAgentWithoutSendOnlyTest, ClassPortInfoLacksBit12) {
  SaClient c(fabric, h(2), lid(1));
  EXPECT_EQ(capability_mask2(c), number(opensm_cpi(), "Capability mask 2") & ~(1u << 12));
}

TEST_F(SaAgentWithoutSendOnlyTest, SendOnlyFullJoinRefusedOverQp1) {
  SaClient c(fabric, h(2), lid(1));
  for (uint8_t js : {uint8_t{0x8}, uint8_t{0x9}}) {
    const Mad set = SaClient::make(method::kSet, comp::kCreateRequiredMask, member(mgid(1), 2, js));
    const std::optional<Mad> r = c.request(set);
    ASSERT_TRUE(r);
    EXPECT_EQ(mad::sa_method(sa(*r)), method::kGetResp);
    EXPECT_EQ(mad::sa_status(sa(*r)), st::kSaReqInvalid) << "JoinState " << int{js};
    EXPECT_TRUE(std::equal(r->begin() + 56, r->end(), set.begin() + 56)) << "the request is echoed";
    EXPECT_EQ(groups.find(mgid(1)), nullptr);
  }
  // A full join is served as before; 0x8 into the group it made is still refused.
  const std::optional<Mad> full =
      c.request(SaClient::make(method::kSet, comp::kCreateRequiredMask, member(mgid(1), 2, 0x1)));
  ASSERT_TRUE(full);
  EXPECT_EQ(mad::sa_status(sa(*full)), st::kOk);
  SaClient other(fabric, h(3), lid(1));
  const std::optional<Mad> send_only =
      other.request(SaClient::make(method::kSet, comp::kJoinRequiredMask, member(mgid(1), 3, 0x8)));
  ASSERT_TRUE(send_only);
  EXPECT_EQ(mad::sa_status(sa(*send_only)), st::kSaReqInvalid);
  ASSERT_NE(groups.find(mgid(1)), nullptr);
  EXPECT_EQ(groups.find(mgid(1))->members.size(), 1u);
}

TEST_F(SaAgentTest, GateDropsOrRefuses) {
  SaClient c(fabric, h(2), lid(1));
  const Mad get = SaClient::make(method::kGetTable, 0, mad::McMemberRecord{});
  agent.set_serving(false);
  c.send(get);
  sim.run();
  EXPECT_TRUE(c.received.empty()) << "not serving";
  agent.set_serving(true);
  c.send(SaClient::make(method::kGetTable, 0, mad::McMemberRecord{}, 5));
  sim.run();
  EXPECT_TRUE(c.received.empty()) << "wrong SM_Key";
  Mad unknown = get;
  wire::store_be16(&unknown[16], 0x00FE);
  c.send(unknown);
  sim.run();
  EXPECT_TRUE(c.received.empty()) << "unknown attribute";
  subnet.port_by_lid.erase(lid(2));
  c.send(get);
  sim.run();
  EXPECT_TRUE(c.received.empty()) << "unknown requester";
  subnet.port_by_lid[lid(2)] = subnet.port_by_guid.at(h(2).port(1).guid());
  // Known attribute, method it does not take.
  const std::optional<Mad> e = c.request(SaClient::make(method::kSet, 0, mad::PathRecord{}));
  ASSERT_TRUE(e);
  EXPECT_EQ(mad::sa_status(sa(*e)), st::kMethodAttrUnsupported);
  const std::optional<Mad> i = c.request(SaClient::make(method::kGet, 0, mad::InformInfo{}));
  ASSERT_TRUE(i);
  EXPECT_EQ(mad::sa_status(sa(*i)), st::kMethodAttrUnsupported);
  EXPECT_EQ(agent.metrics().dropped, 4u);
  EXPECT_GE(agent.metrics().mads_received, 6u);
  EXPECT_EQ(agent.metrics().mads_sent, 2u);
}

TEST_F(SaAgentTest, TrustedGetTableShowsMembers) {
  SaClient c(fabric, h(2), lid(1));
  ASSERT_TRUE(c.request(SaClient::make(method::kSet, comp::kCreateRequiredMask, member(mgid(1), 2))));
  mad::McMemberRecord q;
  q.mgid = mgid(1);
  const std::optional<Mad> r = c.request(SaClient::make(method::kGet, comp::kMgid, q, 1));
  ASSERT_TRUE(r);
  ASSERT_EQ(mad::sa_status(sa(*r)), st::kOk);
  EXPECT_EQ(mad::McMemberRecord::unpack(mad::sa_data(sa(*r))).port_gid, gid(2));
  const std::optional<Mad> u = c.request(SaClient::make(method::kGet, comp::kMgid, q));
  ASSERT_TRUE(u);
  EXPECT_TRUE(mad::McMemberRecord::unpack(mad::sa_data(sa(*u))).port_gid.is_zero());
}

TEST_F(SaAgentTest, NodeAndPortInfoRecords) {
  SaClient c(fabric, h(2), lid(1));
  mad::NodeRecord n;
  n.lid = lid(3);
  const std::optional<Mad> r = c.request(SaClient::make(method::kGet, mad::nr_comp::kLid, n));
  ASSERT_TRUE(r);
  ASSERT_EQ(mad::sa_status(sa(*r)), st::kOk);
  const auto nr = mad::NodeRecord::unpack(mad::sa_data(sa(*r)));
  EXPECT_EQ(nr.node_info.port_guid, h(3).port(1).guid());
  EXPECT_EQ(nr.node_info.node_guid, h(3).guid());
  EXPECT_EQ(nr.node_info.node_type, mad::NodeInfo::kTypeCa);
  mad::PortInfoRecord p;
  p.port_info.capability_mask = 1u << 1;  // IsSM
  Mad pq = SaClient::make(method::kGet, mad::pir_comp::kCapabilityMask, p);
  wire::store_be32(&pq[20], mad::kPirCapMaskMatchModifier);
  const std::optional<Mad> s = c.request(pq);
  ASSERT_TRUE(s);
  ASSERT_EQ(mad::sa_status(sa(*s)), st::kOk);
  const auto pir = mad::PortInfoRecord::unpack(mad::sa_data(sa(*s)));
  EXPECT_EQ(pir.endport_lid, lid(1));
  EXPECT_EQ(pir.port_info.master_sm_lid, lid(1));
}

}  // namespace
}  // namespace ibfab::sm
