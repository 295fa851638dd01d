// Partitions end to end in one process: the SM programs the P_Key tables a
// partitions.conf gives (read back from the fabric's ports, which the SM
// reaches only by SMP), its SA refuses joins and paths across partitions,
// and the HCAs drop UD packets of a partition the receiving QP is not in.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabric/mad/sa/path_record.h"
#include "fabric/model/fabric.h"
#include "fabric/model/sa_client.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/mad_header.h"
#include "sm/partitions/partition_reader.h"
#include "sm/sa/node_records.h"
#include "sm/sa/path_records.h"
#include "sm/subnet_manager.h"

namespace ibfab::sm {
namespace {

struct Counter : fabric::UdEndpoint {
  int received = 0;
  uint16_t pkey_index = 0xFFFF;
  bool on_receive(const fabric::UdMessage& m) override {
    ++received;
    pkey_index = m.pkey_index;
    return true;
  }
};

struct Partitioned : ::testing::Test {
  sim::Simulator sim;
  topo::Topology topology{topo::load_topology("fat-tree:2:4")};
  fabric::Fabric fabric{sim, topology};
  std::unique_ptr<SubnetManager> sm;

  fabric::Hca& h(int i) { return *fabric.find_hca("H" + std::to_string(i)); }
  uint64_t guid(int i) { return h(i).port(1).guid(); }
  std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(v));
    return b;
  }
  // Two tenants: A = H2, H3 (full); B = H4 (full), H5 (limited).
  std::string tenants() {
    return "TenantA=0x8001, ipoib : " + hex(guid(2)) + "=full, " + hex(guid(3)) + "=full ;\n" +
           "TenantB=0x8002 : " + hex(guid(4)) + "=full, " + hex(guid(5)) + " ;\n";
  }
  void up(const std::optional<std::string>& conf) {
    SmOptions o;
    if (conf) o.partition_config = partitions::read_partitions(*conf, "test.conf");
    sm = std::make_unique<SubnetManager>(h(1), 1, o);
    sm->sweep();
    sim.run();
    ASSERT_TRUE(sm->subnet_up()) << sm->last_sweep().error;
  }
  std::vector<uint16_t> table(fabric::Port& p, std::size_t n) { return {p.pkeys.begin(), p.pkeys.begin() + n}; }
  uint32_t requester(int i) { return sm->subnet().port_by_guid.at(guid(i)); }
  McastResult join(int i, const std::string& mgid, uint16_t pkey) {
    mad::McMemberRecord r;
    r.mgid = *wire::Gid::parse(mgid);
    r.port_gid = wire::Gid::from(sm->subnet().prefix, guid(i));
    r.join_state = mad::join_state::kFull;
    r.p_key = pkey;
    r.q_key = 0x0B1B;
    // With a P_Key: everything a creating join needs.
    const uint64_t mask = pkey ? mad::mcm_comp::kCreateRequiredMask
                               : mad::mcm_comp::kMgid | mad::mcm_comp::kPortGid | mad::mcm_comp::kJoinState;
    return sm->groups()->join(requester(i), r, mask);
  }
  std::size_t paths(int from, int to, int asker = 0) {
    mad::PathRecord q;
    q.sgid = wire::Gid::from(sm->subnet().prefix, guid(from));
    q.dgid = wire::Gid::from(sm->subnet().prefix, guid(to));
    std::vector<mad::PathRecord> out;
    path_records(sm->subnet(), *sm->groups(), requester(asker ? asker : from), q, mad::pr_comp::kSgid | mad::pr_comp::kDgid, 18, out);
    last_path_pkey = out.empty() ? 0 : out[0].p_key;
    return out.size();
  }
  uint16_t last_path_pkey = 0;
  // Sends one UD packet from H`from` (QP on P_Key index `from_index`) to a
  // QP of H`to` on `to_index`; whether it arrived.
  bool ud(int from, uint16_t from_index, int to, uint16_t to_index) {
    Counter rx, unused;
    const uint32_t dst = h(to).create_ud_qp(1, 0x1234, to_index, &rx);
    const uint32_t src = h(from).create_ud_qp(1, 0x1234, from_index, &unused);
    std::vector<uint8_t> payload(64, 1);
    fabric::UdSend s;
    s.dlid = h(to).port(1).lid;
    s.dest_qp = dst;
    s.qkey = 0x1234;
    s.payload = payload;
    h(from).send_ud(src, s);
    sim.run_until(sim.now() + sim::Time::ms(1));
    h(to).destroy_qp(dst);
    h(from).destroy_qp(src);
    if (rx.received) EXPECT_EQ(rx.pkey_index, to_index);
    return rx.received == 1;
  }
};

TEST_F(Partitioned, WithoutAFileTablesStayAsOpenSmLeavesThemAndNoPKeySmpIsSent) {
  up(std::nullopt);
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(table(h(i).port(1), 2), (std::vector<uint16_t>{0xFFFF, 0})) << i;
  // One PortInfo Set per end port and nothing more before routing.
  EXPECT_EQ(sm->last_sweep().smps_lids, sm->last_sweep().end_ports);
  EXPECT_NE(sm->groups()->find(McastGroups::ipoib_broadcast_mgid(2, 0xFFFF)), nullptr);
}

TEST_F(Partitioned, SmProgramsTheTablesTheFileGives) {
  up(tenants());
  EXPECT_EQ(table(h(1).port(1), 2), (std::vector<uint16_t>{0xFFFF, 0}));  // SELF: full in Default
  EXPECT_EQ(table(h(2).port(1), 3), (std::vector<uint16_t>{0x7FFF, 0x8001, 0}));
  EXPECT_EQ(table(h(3).port(1), 3), (std::vector<uint16_t>{0x7FFF, 0x8001, 0}));
  EXPECT_EQ(table(h(4).port(1), 3), (std::vector<uint16_t>{0x7FFF, 0x8002, 0}));
  EXPECT_EQ(table(h(5).port(1), 3), (std::vector<uint16_t>{0x7FFF, 0x0002, 0}));
  EXPECT_EQ(table(h(6).port(1), 2), (std::vector<uint16_t>{0x7FFF, 0}));
  fabric::Node* sw = fabric.find("S1");
  ASSERT_NE(sw, nullptr);
  EXPECT_EQ(table(sw->port(0), 2), (std::vector<uint16_t>{0x7FFF, 0}));
  // The SA's view is what the ports answered.
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(sm->subnet().by_guid(guid(i))->pkeys, h(i).port(1).pkeys) << i;
  // Block 0 of every port but the SM's was written: 7 hosts, the switches.
  const SweepReport& r = sm->last_sweep();
  EXPECT_EQ(r.smps_lids, r.end_ports + (r.end_ports - 1));
  // A second sweep finds the tables right and writes none.
  sm->sweep();
  sim.run();
  EXPECT_EQ(sm->last_sweep().smps_lids, sm->last_sweep().end_ports);
}

TEST_F(Partitioned, SaCreatesTheTenantsBroadcastGroupAndRefusesOutsiders) {
  up(tenants());
  // A file whose Default has no ipoib flag: no 0xFFFF broadcast group.
  EXPECT_EQ(sm->groups()->find(McastGroups::ipoib_broadcast_mgid(2, 0xFFFF)), nullptr);
  ASSERT_NE(sm->groups()->find(McastGroups::ipoib_broadcast_mgid(2, 0x8001)), nullptr);
  const std::string bcast = "ff12:401b:8001::ffff:ffff";
  EXPECT_EQ(join(2, bcast, 0).status, 0);
  EXPECT_EQ(join(4, bcast, 0).status, wire::mad_status::kSaReqInvalid);  // OpenSM's ERR 1B14
  EXPECT_EQ(join(6, bcast, 0).status, wire::mad_status::kSaReqInvalid);
  // Nor can an outsider create a group in a partition it is not in.
  EXPECT_EQ(join(4, "ff12:4001::8001", 0x8001).status, wire::mad_status::kSaReqInvalid);
  EXPECT_EQ(join(3, "ff12:4001::8001", 0x8001).status, 0);
}

TEST_F(Partitioned, PathRecordsOnlyWithinAPartition) {
  up(tenants());
  EXPECT_EQ(paths(2, 3), 1u);
  EXPECT_EQ(last_path_pkey, 0x8001);  // the first shared base in OpenSM's key order
  EXPECT_EQ(paths(2, 4), 0u);         // different tenants
  EXPECT_EQ(paths(4, 5), 1u);         // full and limited members of B
  EXPECT_EQ(last_path_pkey, 0x8002);
  EXPECT_EQ(paths(5, 6), 0u);         // two limited members of Default share nothing
  EXPECT_EQ(paths(6, 1), 1u);         // a limited member reaches the SM (full)
  EXPECT_EQ(last_path_pkey, 0x7FFF);  // the source's own entry
  // A requester must share a P_Key with both ends, as OpenSM checks.
  EXPECT_EQ(paths(2, 3, 6), 0u);
  EXPECT_EQ(paths(2, 3, 1), 1u);
}

TEST_F(Partitioned, RecordsListOnlyPortsTheRequesterSharesAPKeyWithItselfIncluded) {
  up(tenants());
  const auto nodes_seen_by = [&](int i) {
    std::vector<mad::NodeRecord> out;
    node_records(sm->subnet(), requester(i), mad::NodeRecord{}, 0, out);
    std::vector<uint64_t> guids;
    for (const mad::NodeRecord& r : out) guids.push_back(r.node_info.port_guid);
    std::sort(guids.begin(), guids.end());
    return guids;
  };
  // H5 holds limited entries only, yet sees its own record, as OpenSM's
  // osm_physp_share_pkey lets a port share with itself; and H1 (full in
  // Default) and H4 (full in TenantB), nobody else.
  EXPECT_EQ(nodes_seen_by(5), (std::vector<uint64_t>{guid(1), guid(4), guid(5)}));
}

TEST_F(Partitioned, HostSaRequestsGoOutOnTheDefaultPartitionsIndexAsIbSaSends) {
  // H2's index 0 is its tenant's P_Key, which the SM's port does not hold:
  // a request sent with it would be dropped at the SA's QP1.
  up("Default=0x7fff: ALL=limited, SELF=full;\nTenantA=0x8001, indx0: " + hex(guid(2)) + "=full;\n");
  ASSERT_EQ(table(h(2).port(1), 2), (std::vector<uint16_t>{0x8001, 0x7FFF}));
  fabric::SaClient sa(h(2), 1);
  mad::PathRecord q;
  q.sgid = wire::Gid::from(sm->subnet().prefix, guid(2));
  q.dgid = wire::Gid::from(sm->subnet().prefix, guid(1));
  std::array<uint8_t, mad::PathRecord::kSize> rec{};
  q.pack(rec);
  int status = 1;
  sa.send(wire::mad_method::kGet, mad::PathRecord::kAttributeId, mad::pr_comp::kSgid | mad::pr_comp::kDgid, rec,
          fabric::SaRetry::fixed(sim::Time::ms(200), 1), [&](int s, std::span<const uint8_t>) { status = s; });
  sim.run_until(sim.now() + sim::Time::s(1));
  EXPECT_EQ(status, 0);
  EXPECT_EQ(h(1).port(1).p_key_violations, 0);
}

TEST_F(Partitioned, DataPathDeliversOnlyWithinAPartitionAndNeverLimitedToLimited) {
  up(tenants());
  EXPECT_TRUE(ud(2, 1, 3, 1));    // A full -> A full
  EXPECT_FALSE(ud(2, 1, 4, 1));   // A -> B: B's QP is in 0x8002
  EXPECT_FALSE(ud(2, 1, 4, 0));   // A -> a Default QP
  EXPECT_TRUE(ud(4, 1, 5, 1));    // B full -> B limited
  EXPECT_TRUE(ud(5, 1, 4, 1));    // B limited -> B full
  EXPECT_FALSE(ud(4, 1, 5, 0));   // B -> a QP of H5 in Default: a QP hears its own partition only
  EXPECT_FALSE(ud(2, 0, 6, 0));   // Default limited -> limited (IBTA 10.9.3)
  EXPECT_TRUE(ud(1, 0, 6, 0));    // Default full -> limited
  EXPECT_GT(h(4).port(1).p_key_violations, 0);
  EXPECT_GT(h(6).port(1).counters.rcv_constraint_errors, 0u);
}

}  // namespace
}  // namespace ibfab::sm
