// Subnet bring-up by the built-in SM (discovery to every port Active, LFTs
// programmed), on fat trees of growing size: wall time and resident memory,
// plus simulated time and SMP counts. The anchor is OpenSM 3.3.23 over
// ibsim on this kind of machine, start to SUBNET UP with minhop routing, as
// issue 3 measured it (0.37 s, 4.3 s, 33 s, 189 s): printed beside ours
// (counter opensm_s). Also `wall_s` (one bring-up, as `Time`) and
// `events_per_s` (the model's events during bring-up, paired in the anchor
// table with the kernel's PHOLD rate on the default scheduler).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>

#include "bench/resident_memory.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "sm/subnet_manager.h"

namespace ibfab::bench {
namespace {

void bringup(benchmark::State& state, const char* spec, double opensm_seconds) {
  const topo::Topology topology = topo::load_topology(spec);
  sm::SweepReport report;
  double rss = 0, seconds = 0;
  uint64_t events = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto sim = std::make_unique<sim::Simulator>(1, nullptr);
    auto fabric = std::make_unique<fabric::Fabric>(*sim, topology);
    state.ResumeTiming();
    {
      sm::SubnetManager m(*fabric->find_hca("H1"), 1, sm::SmOptions{});  // before the fabric goes
      bool up = false;
      m.on_subnet_up = [&](const sm::SweepReport& r) {
        up = true;
        report = r;
      };
      const auto t0 = std::chrono::steady_clock::now();
      m.sweep();
      sim->run();
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      events += sim->events_run();
      if (!up) {
        state.SkipWithError(("subnet not up: " + m.last_sweep().error).c_str());
        break;
      }
      state.PauseTiming();
    }
    rss = std::max(rss, resident_mb());
    fabric.reset();
    sim.reset();
    state.ResumeTiming();
  }
  state.counters["hosts"] = static_cast<double>(topology.hca_count());
  state.counters["rss_mb"] = rss;
  state.counters["sim_ms"] = (report.up - report.started).to_ms();
  state.counters["smps"] = static_cast<double>(report.smps);
  state.counters["routing_s"] = report.routing_wall_seconds;
  state.counters["opensm_s"] = opensm_seconds;
  if (seconds > 0) {
    state.counters["wall_s"] = seconds / static_cast<double>(state.iterations());
    state.counters["events_per_s"] = static_cast<double>(events) / seconds;
  }
}

BENCHMARK_CAPTURE(bringup, ft2_36, "fat-tree:2:36", 0.37)->Name("bringup/fat-tree:2:36")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);
BENCHMARK_CAPTURE(bringup, ft3_24, "fat-tree:3:24", 4.3)->Name("bringup/fat-tree:3:24")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK_CAPTURE(bringup, ft3_36, "fat-tree:3:36", 33.0)->Name("bringup/fat-tree:3:36")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK_CAPTURE(bringup, ft3_48, "fat-tree:3:48", 189.0)->Name("bringup/fat-tree:3:48")->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
}  // namespace ibfab::bench
