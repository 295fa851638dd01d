// One RC connection of a scenario (tools/scenario/scenario_connection.h)
// on a fabric configured by hand: its QPs' state, and data checks that
// catch bytes that are not what the post meant to place.
#include "tools/scenario/scenario_connection.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::scenario {
namespace {

class ScenarioConnectionTest : public ::testing::Test {
 public:
  ScenarioConnectionTest() : topo_(topo::load_topology("fat-tree:2:4")), fabric_(sim_, topo_) {
    fabric::testing::configure_by_hand(fabric_);
  }

  // H2 (end 0) connected to H1 (end 1), with buffers for `size`-byte
  // messages of every op both ways.
  ScenarioConnection& connect(uint32_t size) {
    const EndSizes both{size, size, size, size};
    conn_.emplace(*fabric_.find_hca("H2"), *fabric_.find_hca("H1"), std::array<EndSizes, 2>{both, both}, 0);
    return *conn_;
  }

  // Posts `count` messages of `op` from end 0, calls `after_post`, runs 5
  // ms and returns what came of them.
  PostOutcome post(ConnSpec::Op op, uint32_t count, uint32_t size, const std::function<void()>& after_post = {}) {
    ConnSpec s;
    s.to = "H1";
    s.op = op;
    s.count = count;
    s.size = size;
    std::optional<PostOutcome> got;
    conn_->post(0, s, [&got](const PostOutcome& o) { got = o; });
    if (after_post) after_post();
    sim_.run_until(sim_.now() + sim::Time::ms(5));
    if (!got) conn_->end_of_run();
    return *got;
  }

  sim::Simulator sim_;
  topo::Topology topo_;
  fabric::Fabric fabric_;
  std::optional<ScenarioConnection> conn_;
};

TEST_F(ScenarioConnectionTest, TheQpsAreInRtsAndCarryAMessage) {
  ScenarioConnection& c = connect(64);
  for (const int end : {0, 1}) EXPECT_EQ(c.hca(end).qp_state(c.qpn(end)), fabric::QpState::kRts) << end;
  EXPECT_EQ(c.path_mtu(), 5);  // 4096: both ports' active MTU
  EXPECT_EQ(c.hca(0).name(), "H2");
  EXPECT_EQ(c.hca(1).name(), "H1");
  const PostOutcome o = post(ConnSpec::Op::Send, 1, 64);
  EXPECT_TRUE(o.finished);
  EXPECT_EQ(o.problem, "");
  EXPECT_EQ(o.success, 1u);
  EXPECT_EQ(o.receives, 1u);
}

TEST_F(ScenarioConnectionTest, ASourceChangedBeforeItsLastPacketLeavesFailsTheReceiversCheck) {
  // 64 KiB is 16 packets of 4096 bytes, built one after another as the
  // port sends them: a byte of the last is changed after the post.
  ScenarioConnection& c = connect(65536);
  const PostOutcome o =
      post(ConnSpec::Op::Send, 1, 65536, [&c] { c.memory(0).bytes()[c.out_offset(0, 0) + 65000] ^= 1; });
  EXPECT_TRUE(o.finished);
  EXPECT_FALSE(o.data_intact);
  EXPECT_EQ(o.problem, "receive of message 0: byte 65000 is not what was sent");
}

TEST_F(ScenarioConnectionTest, AWriteSourceChangedInFlightFailsTheWritersCheck) {
  ScenarioConnection& c = connect(65536);
  const PostOutcome o =
      post(ConnSpec::Op::Write, 2, 65536, [&c] { c.memory(0).bytes()[c.out_offset(0, 1) + 64000] ^= 0x80; });
  EXPECT_FALSE(o.data_intact);
  EXPECT_EQ(o.problem, "message 1: byte 64000 is not what was written");
  EXPECT_EQ(o.success, 2u);  // the transport did its part
}

TEST_F(ScenarioConnectionTest, AReadOfChangedMemoryFailsTheReadersCheck) {
  // Read n reads the read area from byte 8 * n: byte 41 of the area is
  // byte 41 of read 0, the first to complete.
  ScenarioConnection& c = connect(4096);
  c.memory(1).bytes()[c.read_area_offset(1) + 41] ^= 0xFF;
  const PostOutcome o = post(ConnSpec::Op::Read, 5, 4096);
  EXPECT_FALSE(o.data_intact);
  EXPECT_EQ(o.problem, "message 0: byte 41 is not what was read");
  EXPECT_EQ(o.success, 5u);
}

TEST_F(ScenarioConnectionTest, UnchangedMemoryPassesEveryCheck) {
  connect(65536);
  for (const ConnSpec::Op op : {ConnSpec::Op::Send, ConnSpec::Op::SendImm, ConnSpec::Op::Write,
                                ConnSpec::Op::WriteImm, ConnSpec::Op::Read}) {
    const PostOutcome o = post(op, 70, 65536);
    EXPECT_TRUE(o.finished) << to_string(op);
    EXPECT_TRUE(o.data_intact) << to_string(op);
    EXPECT_EQ(o.problem, "") << to_string(op);
    EXPECT_EQ(o.success, 70u) << to_string(op);
  }
}

TEST_F(ScenarioConnectionTest, MessagesOfAMegabyteTakeFourBuffersEachWayAndAllArrive) {
  // A ring of 1 MiB buffers holds 4: 4 outstanding of 12, each write
  // landing in one of 4 slots the peer keeps for them.
  ScenarioConnection& c = connect(1u << 20);
  // Rings of 4 for messages out, sends in and writes in; the read area
  // (the largest read, and 8 bytes more for each of 64 starting points).
  EXPECT_EQ(c.memory(0).bytes().size(), 3 * (4u << 20) + (1u << 20) + 64 * 8);
  for (const ConnSpec::Op op : {ConnSpec::Op::Send, ConnSpec::Op::WriteImm, ConnSpec::Op::Read}) {
    const PostOutcome o = post(op, 12, 1u << 20);
    EXPECT_EQ(o.problem, "") << to_string(op);
    EXPECT_EQ(o.success, 12u) << to_string(op);
  }
}

}  // namespace
}  // namespace ibfab::scenario
