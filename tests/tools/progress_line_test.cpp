// The progress line (tools/scenario/progress_line.h) and what feeds it
// (sim/progress.h): the SM's phases in order with true totals, the model
// build and the route check counting their work.
#include "tools/scenario/progress_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "sm/subnet_manager.h"
#include "tools/scenario/route_check.h"

namespace ibfab::scenario {
namespace {

TEST(ProgressLine, SaysThePhaseItsShareAndTheClock) {
  sim::Progress p;
  p.begin("LFTs", "SMPs", 2'940'000);
  p.advance(1'323'000);
  p.clock(sim::Time::us(120'400).ps(), 20'100'000);
  EXPECT_EQ(ProgressLine::format("big", p.read(), 12.2),
            "ibfab: big: LFTs 45% (1,323,000 of 2,940,000 SMPs), 120.400ms simulated, 20.1 M events, 12 s");
}

TEST(ProgressLine, WithoutATotalCountsWhatIsDoneAndBeforeAnEventSaysNoClock) {
  sim::Progress p;
  EXPECT_EQ(ProgressLine::format("s", p.read(), 3), "ibfab: s: starting, 3 s");
  p.begin("discovery", "SMPs");
  p.advance(412);
  EXPECT_EQ(ProgressLine::format("s", p.read(), 4), "ibfab: s: discovery (412 SMPs), 4 s");
  p.begin("routing", "");
  EXPECT_EQ(ProgressLine::format("s", p.read(), 5), "ibfab: s: routing, 5 s");
}

TEST(ProgressLine, ADoneCountPastItsTotalReadsAsTheTotal) {
  sim::Progress p;
  p.begin("activation (Armed)", "SMPs", 10);
  p.advance(12);
  EXPECT_EQ(ProgressLine::format("s", p.read(), 4), "ibfab: s: activation (Armed) 100% (10 of 10 SMPs), 4 s");
}

// Steps a bring-up event by event and notes each phase as it begins, with
// what was done in the phase before when it ended.
TEST(ProgressOfABringUp, ThePhasesComeInOrderAndEachEndsAtItsTotal) {
  for (const char* spec : {"fat-tree:2:4", "fat-tree:3:4"}) {
    sim::Simulator sim;
    sim::Progress progress;
    sim.report_progress_to(progress);
    const topo::Topology topology = topo::load_topology(spec);
    fabric::Fabric fabric(sim, topology);
    sim::Progress::Reading built = progress.read();
    EXPECT_STREQ(built.phase, "model build");
    EXPECT_EQ(built.done, topology.nodes().size() + topology.links().size()) << spec;
    EXPECT_EQ(built.total, built.done);
    sm::SubnetManager m(*fabric.find_hca("H1"), 1, sm::SmOptions{});
    bool up = false;
    m.on_subnet_up = [&](const sm::SweepReport&) { up = true; };
    m.sweep();
    std::vector<std::string> phases;
    sim::Progress::Reading last = progress.read();
    phases.push_back(last.phase);
    while (!up && sim.step()) {
      const sim::Progress::Reading now = progress.read();
      if (std::string(now.phase) != phases.back()) {
        if (last.total != 0) EXPECT_EQ(last.done, last.total) << spec << ": " << phases.back() << " ended short";
        phases.push_back(now.phase);
      }
      EXPECT_TRUE(now.total == 0 || now.done <= now.total) << spec << ": " << now.phase;
      last = now;
    }
    ASSERT_TRUE(up) << spec;
    EXPECT_EQ(phases, (std::vector<std::string>{"discovery", "LIDs", "LFTs", "activation (Armed)",
                                                "activation (Active)"}))
        << spec;
    const RouteCheck c = check_unicast_routes(fabric);
    const sim::Progress::Reading checked = progress.read();
    EXPECT_STREQ(checked.phase, "route check");
    EXPECT_EQ(checked.done, checked.total);
    EXPECT_EQ(c.checked % checked.total, 0u) << "every LID, from each host-facing switch";
  }
}

}  // namespace
}  // namespace ibfab::scenario
