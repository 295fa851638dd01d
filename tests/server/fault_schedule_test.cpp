// Timed link faults on a served fabric (api/server/fault_schedule.h): the
// engine applies each at its offset from the moment serving starts, as a
// scenario's link action does, and the built-in SM sweeps after it.
#include "api/server/fault_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/server/engine.h"
#include "fabric/model/hca.h"

namespace ibfab::api {
namespace {

using fabric::PortState;

Fault fault(sim::Time at, Fault::Kind kind, const std::string& link, double probability = 0) {
  Fault f;
  f.at = at;
  f.kind = kind;
  EXPECT_TRUE(fabric::parse_link_ref(link, f.link)) << link;
  f.probability = probability;
  f.origin = "fault " + link;
  return f;
}

// Serves rounds of `e` (no listening socket) until `holds()` or a deadline
// that only decides when a broken build gives up; `each()` runs after every
// round. Whether it held.
template <class Pred, class Each>
bool serve_until(Engine& e, Pred holds, Each each) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!holds() && std::chrono::steady_clock::now() < end) {
    e.serve_once(-1, 100);
    each();
  }
  return holds();
}

TEST(FaultSchedule, LinkDownThenUpOnAServedFabric) {
  const sim::Time down_at = sim::Time::ms(400), up_at = sim::Time::ms(900);
  EngineOptions o;
  o.topology = "fat-tree:2:4";  // the SM on H1; H3 hangs on L2[1]
  o.faults = {fault(down_at, Fault::Kind::LinkDown, "H3[1]"), fault(up_at, Fault::Kind::LinkUp, "L2[1]-H3[1]")};
  std::vector<std::string> log;
  o.log = [&log](const std::string& line) { log.push_back(line); };
  Engine e(o);
  ASSERT_EQ(e.bring_up(), "");
  const fabric::Port& port = e.fabric().find_hca("H3")->port(1);
  ASSERT_EQ(port.state(), PortState::Active);
  const uint64_t sweeps_before = e.sm()->last_sweep().heavy_sweeps;

  // Serving starts with this round: the faults are due from now on.
  const sim::Time start = e.sim().now();
  e.serve_once(-1, 0);
  ASSERT_LT(e.sim().now(), start + down_at);
  EXPECT_EQ(port.state(), PortState::Active);
  EXPECT_TRUE(log.empty());

  // Down at its time, not before.
  bool early = false;
  const auto watch_down = [&] { early |= port.state() != PortState::Active && e.sim().now() < start + down_at; };
  ASSERT_TRUE(serve_until(e, [&] { return port.state() == PortState::Down; }, watch_down));
  EXPECT_FALSE(early);
  EXPECT_GE(e.sim().now(), start + down_at);
  EXPECT_LT(e.sim().now(), start + up_at);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], "fault at 400ms: link-down H3[1]");
  // The switch's trap makes the SM sweep the changed subnet.
  EXPECT_TRUE(serve_until(e, [&] { return e.sm()->last_sweep().heavy_sweeps > sweeps_before; }, [] {}));
  EXPECT_EQ(port.state(), PortState::Down);

  // Up at its time; the SM's sweep makes the port Active again.
  const auto watch_up = [&] { early |= port.link_up() && e.sim().now() < start + up_at; };
  ASSERT_TRUE(serve_until(e, [&] { return port.state() == PortState::Active; }, watch_up));
  EXPECT_FALSE(early);
  EXPECT_GE(e.sim().now(), start + up_at);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1], "fault at 900ms: link-up L2[1]-H3[1]");
}

TEST(FaultSchedule, LinkLossSetsTheLinksProbability) {
  EngineOptions o;
  o.topology = "fat-tree:2:4";
  o.faults = {fault(sim::Time::ms(50), Fault::Kind::LinkLoss, "S1[3]", 0.25)};
  std::vector<std::string> log;
  o.log = [&log](const std::string& line) { log.push_back(line); };
  Engine e(o);
  ASSERT_EQ(e.bring_up(), "");
  const fabric::Link& link = *e.fabric().find("S1")->port(3).link();
  ASSERT_EQ(link.loss(), 0.0);
  EXPECT_TRUE(serve_until(e, [&] { return !log.empty(); }, [] {}));
  EXPECT_EQ(link.loss(), 0.25);
  EXPECT_EQ(log, std::vector<std::string>{"fault at 50ms: link-loss S1[3] 0.25"});
}

std::string construction_error(Fault f) {
  EngineOptions o;
  o.topology = "fat-tree:2:4";
  o.faults = {std::move(f)};
  try {
    Engine e(o);
  } catch (const std::invalid_argument& x) {
    return x.what();
  }
  return "(no error)";
}

TEST(FaultSchedule, AFaultNamingNoCableIsRefusedWhenTheEngineIsMade) {
  EXPECT_EQ(construction_error(fault(sim::Time::s(1), Fault::Kind::LinkDown, "BAD[9]")),
            "fault BAD[9]: no node 'BAD' in the topology");
  EXPECT_EQ(construction_error(fault(sim::Time::s(1), Fault::Kind::LinkDown, "L1[9]")),
            "fault L1[9]: L1 has ports 1..4, not 9");
  EXPECT_EQ(construction_error(fault(sim::Time::s(1), Fault::Kind::LinkUp, "L1[1]-S1[1]")),
            "fault L1[1]-S1[1]: L1[1]-S1[1]: L1[1] is cabled to H1[1]");
  EXPECT_EQ(construction_error(fault(sim::Time::s(1), Fault::Kind::LinkLoss, "L1[1]", 2)),
            "fault L1[1]: the probability must be in [0, 1]");
  EXPECT_EQ(construction_error(fault(sim::Time::ms(-1), Fault::Kind::LinkDown, "L1[1]")),
            "fault L1[1]: a fault's time cannot be negative");
  EXPECT_EQ(construction_error(fault(sim::Time::s(1), Fault::Kind::LinkDown, "L1[1]-H1[1]")), "(no error)");
}

TEST(FaultSchedule, LogLinesWriteTheTimeExactly) {
  EXPECT_EQ(fault_log_line(fault(sim::Time::s(2), Fault::Kind::LinkDown, "L5[5]")), "fault at 2s: link-down L5[5]");
  EXPECT_EQ(fault_log_line(fault(sim::Time::ms(3500), Fault::Kind::LinkUp, "L5[5]")), "fault at 3500ms: link-up L5[5]");
  EXPECT_EQ(fault_log_line(fault(sim::Time::ns(250), Fault::Kind::LinkUp, "L5[5]")), "fault at 250ns: link-up L5[5]");
  EXPECT_EQ(fault_log_line(fault(sim::Time::ps(7), Fault::Kind::LinkUp, "L5[5]")), "fault at 7ps: link-up L5[5]");
  EXPECT_EQ(fault_log_line(fault(sim::Time::zero(), Fault::Kind::LinkLoss, "S1[3]", 0.001)),
            "fault at 0: link-loss S1[3] 0.001");
}

}  // namespace
}  // namespace ibfab::api
