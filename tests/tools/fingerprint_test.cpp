// The fingerprint sees content: two runs that differ only in something a
// line per hop (time, node, port, length, LIDs, VL) does not show, a Q_Key,
// a JoinState, an SA status, have different fingerprints; the same run
// twice, under every scheduler, has the same.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/mad_header.h"
#include "sim/trace.h"
#include "tests/fabric/model/hand_config.h"
#include "tools/scenario/scenario_host.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/scenario_runner.h"

namespace ibfab::scenario {
namespace {

// Through the built-in SM: H2 and H8 join a group, H2 sends to it.
Scenario group(const std::string& qkey, const std::string& h8_join_state) {
  return parse_scenario(
      "topology: fat-tree:2:4\n"
      "duration: 10ms\n"
      "sms: [{node: H1, routing: minhop}]\n"
      "actions:\n"
      "  - {at: 1ms, join: {node: H2, mgid: \"ff12:4001::1\", join-state: full, qkey: " + qkey + "}}\n"
      "  - {at: 1ms, join: {node: H8, mgid: \"ff12:4001::1\", join-state: " + h8_join_state + ", qkey: " + qkey + "}}\n"
      "  - {at: 2ms, send: {node: H2, mgid: \"ff12:4001::1\", count: 3, size: 256}}\n"
      "  - {at: 3ms, expect: {node: H8, received: 3}}\n",
      "group.yaml");
}

std::string fingerprint(const Scenario& s, const char* scheduler = nullptr) {
  RunOptions o;
  if (scheduler) o.scheduler = scheduler;
  const Report r = run_scenario(s, o);
  EXPECT_TRUE(r.passed()) << "the run itself must pass for the comparison to mean anything";
  return r.fingerprint;
}

TEST(Fingerprint, TheSameScenarioGivesTheSameFingerprintUnderEveryScheduler) {
  const std::string base = fingerprint(group("0x11", "full"));
  EXPECT_EQ(fingerprint(group("0x11", "full")), base);
  for (const char* name : {"heap", "heap4", "heap8", "ladder"}) EXPECT_EQ(fingerprint(group("0x11", "full"), name), base) << name;
}

TEST(Fingerprint, ATextTraceOrACaptureLeavesItAsItIs) {
  // A capture seals the CRCs of patched packets; the digest does not read them.
  RunOptions o;
  o.trace = ::testing::TempDir() + "/fingerprint_trace.txt";
  o.pcap = ::testing::TempDir() + "/fingerprint.pcap";
  EXPECT_EQ(run_scenario(group("0x11", "full"), o).fingerprint, fingerprint(group("0x11", "full")));
}

TEST(Fingerprint, AJoinsQKeyChangesIt) {
  EXPECT_NE(fingerprint(group("0x11", "full")), fingerprint(group("0x12", "full")));
}

TEST(Fingerprint, AJoinsJoinStateChangesIt) {
  EXPECT_NE(fingerprint(group("0x11", "full")), fingerprint(group("0x11", "non-member")));
}

// Through a ScenarioHost and a stand-in SA on H2 that answers every join
// with the status and JoinState the test picks: the runs differ in those
// answer bytes alone.
class StandInSa : public fabric::MadAgent {
 public:
  StandInSa(fabric::Hca& hca, uint16_t status, uint8_t join_state)
      : hca_(hca), status_(status), join_state_(join_state) {
    agent_ = hca.register_agent({.port = 1,
                                 .mgmt_class = mad::kSaClass,
                                 .class_version = mad::kSaClassVersion,
                                 .methods = {uint64_t{1} << wire::mad_method::kSet, 0}},
                                this);
  }
  void on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) override {
    std::array<uint8_t, wire::kMadSize> resp;
    std::copy(mad.begin(), mad.begin() + wire::kMadSize, resp.begin());
    mad::SaBuffer m(resp);
    mad::set_sa_method(m, wire::mad_method::kGetResp);
    mad::set_sa_status(m, status_);
    auto rec = mad::McMemberRecord::unpack(mad::sa_data(m));
    rec.mlid = 0xC001;
    rec.join_state = join_state_;
    rec.pack(mad::mutable_sa_data(m));
    hca_.send_mad(agent_, from, resp);
  }

 private:
  fabric::Hca& hca_;
  uint16_t status_;
  uint8_t join_state_;
  uint32_t agent_ = 0;
};

struct Observed {
  uint64_t digest = 0;
  uint64_t events = 0;
  std::string text;
  JoinResult result;
};

Observed join_answered_with(uint16_t status, uint8_t join_state) {
  sim::Simulator sim(9);
  topo::Topology topo = topo::load_topology("fat-tree:2:4");
  fabric::Fabric fabric(sim, topo);
  fabric::testing::configure_by_hand(fabric);
  sim::RunDigest digest;
  sim::StringTraceSink text;
  sim.trace().attach_digest(&digest);
  sim.trace().attach(&text);
  fabric::Hca& h1 = *fabric.find_hca("H1");
  fabric::Hca& h2 = *fabric.find_hca("H2");
  h1.port(1).master_sm_lid = h2.port(1).lid;
  StandInSa sa(h2, status, join_state);
  ScenarioHost host(h1);
  Observed o;
  McastSpec spec;
  spec.mgid = "ff12:4001::1";
  spec.join_state = 1;
  host.join(spec, [&o](const JoinResult& r) { o.result = r; });
  sim.run_until(sim::Time::ms(10));
  o.digest = digest.value();
  o.events = digest.events();
  o.text = text.text();
  return o;
}

TEST(Fingerprint, AnSaStatusChangesIt) {
  const Observed ok = join_answered_with(0, 1), refused = join_answered_with(0x0200, 1);
  ASSERT_EQ(ok.result.status, 0);
  ASSERT_EQ(refused.result.status, 0x0200);
  EXPECT_EQ(ok.text, refused.text) << "a line per hop does not show the status";
  EXPECT_NE(ok.digest, refused.digest);
  EXPECT_EQ(ok.digest, join_answered_with(0, 1).digest);
}

TEST(Fingerprint, TheJoinStateAnSaAnswersChangesIt) {
  const Observed full = join_answered_with(0, 1), non_member = join_answered_with(0, 2);
  ASSERT_EQ(full.result.join_state, 1);
  ASSERT_EQ(non_member.result.join_state, 2);
  EXPECT_EQ(full.text, non_member.text);
  EXPECT_NE(full.digest, non_member.digest);
}

TEST(Fingerprint, WhatTheHostObservesIsFoldedBesideTheHops) {
  const Observed o = join_answered_with(0, 1);
  std::size_t hops = 0;
  for (char c : o.text) hops += c == '\n';
  EXPECT_EQ(hops, 4u) << "H1 to H2 and back through their leaf: two arrivals each way";
  EXPECT_EQ(o.events, hops + 1) << "one more event: the answer as the host saw it";
}

}  // namespace
}  // namespace ibfab::scenario
