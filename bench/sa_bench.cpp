// SA throughput in wall time: MCMemberRecord joins (then leaves) from every
// host of a fabric the built-in SM brought up, each a real MAD crossing the
// simulated fabric to the SA and back, MFT updates included (the multicast
// manager programs the switches as members arrive). The anchor is OpenSM's
// SA on the same 3,456-host fabric, about 16,000-20,000 single-member
// joins/s (issue 3).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "sm/subnet_manager.h"
#include "tools/scenario/scenario_host.h"

namespace ibfab::bench {
namespace {

struct World {
  sim::Simulator sim{1, sim::make_scheduler("ladder")};
  topo::Topology topology;
  std::unique_ptr<fabric::Fabric> fabric;
  std::unique_ptr<sm::SubnetManager> sm;
  std::vector<std::unique_ptr<scenario::ScenarioHost>> hosts;

  explicit World(const char* spec) : topology(topo::load_topology(spec)) {
    fabric = std::make_unique<fabric::Fabric>(sim, topology);
    sm = std::make_unique<sm::SubnetManager>(*fabric->find_hca("H1"), 1, sm::SmOptions{});
    sm->sweep();
    sim.run();
    for (uint32_t i = 0; i < fabric->node_count(); ++i)
      if (!fabric->node(i).is_switch())
        hosts.push_back(std::make_unique<scenario::ScenarioHost>(static_cast<fabric::Hca&>(fabric->node(i))));
  }
  ~World() {
    hosts.clear();
    sm.reset();
    fabric.reset();
  }
};

// Runs `count` requests from one host one after another, as the kernel
// serializes a port's joins: the next goes when the previous is answered.
struct Chain {
  scenario::ScenarioHost* host;
  unsigned count;
  bool leave;
  uint64_t* failed;
  void run(unsigned i) {
    if (i == count) return;
    scenario::McastSpec m;
    m.mgid = "ff12:4001::" + std::to_string(i + 1);
    m.join_state = 1;
    auto next = [this, i](const scenario::JoinResult& r) {
      *failed += r.status != 0;
      run(i + 1);
    };
    if (leave) host->leave(m, next);
    else host->join(m, next);
  }
};

// Every host joins `groups` groups (as a full member), then leaves them.
void sa_joins(benchmark::State& state, const char* spec, unsigned groups) {
  World w(spec);
  if (!w.sm->subnet_up()) {
    state.SkipWithError("subnet not up");
    return;
  }
  uint64_t joins = 0, failed = 0;
  double join_seconds = 0, leave_seconds = 0;
  for (auto _ : state) {
    for (int phase = 0; phase < 2; ++phase) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<Chain> chains;
      chains.reserve(w.hosts.size());
      for (auto& h : w.hosts) chains.push_back(Chain{h.get(), groups, phase == 1, &failed});
      for (Chain& c : chains) c.run(0);
      w.sim.run();
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      (phase == 0 ? join_seconds : leave_seconds) += secs;
    }
    joins += w.hosts.size() * groups;
  }
  if (failed) state.SkipWithError(("SA refused " + std::to_string(failed) + " requests").c_str());
  state.counters["joins_per_s"] = static_cast<double>(joins) / join_seconds;
  state.counters["leaves_per_s"] = static_cast<double>(joins) / leave_seconds;
  state.counters["opensm_joins_per_s"] = 18'000;  // the anchor's midpoint
  state.counters["mft_smps"] = static_cast<double>(w.sm->mcast()->mft_smps_sent());
}

BENCHMARK_CAPTURE(sa_joins, ft3_24_x8, "fat-tree:3:24", 8u)
    ->Name("sa/joins/fat-tree:3:24/8-groups")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace ibfab::bench
