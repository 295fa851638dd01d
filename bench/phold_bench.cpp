// PHOLD on the kernel (10,000 LPs x 10 events, 90% remote, exponential
// delays) against the naive std::priority_queue baseline, same random source.
#include <benchmark/benchmark.h>

#include "bench/phold.h"

namespace ibfab::bench {
namespace {

template <class Run>
void phold(benchmark::State& state, Run run) {
  PholdParams p;
  int64_t end = 0;
  for (auto _ : state) {
    end = run(p, 1);
    benchmark::DoNotOptimize(end);
  }
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(p.events) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  state.counters["sim_end_ps"] = static_cast<double>(end);
}

auto with(const char* scheduler) {
  return [scheduler](const PholdParams& p, uint64_t seed) { return run_phold_ibfab(p, seed, scheduler); };
}

// phold/ibfab: the default scheduler (sim::kDefaultScheduler); then each by name.
BENCHMARK_CAPTURE(phold, ibfab, with(sim::kDefaultScheduler))->Name("phold/ibfab")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(phold, ibfab_heap, with("heap"))->Name("phold/ibfab_heap")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(phold, ibfab_heap4, with("heap4"))->Name("phold/ibfab_heap4")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(phold, ibfab_heap8, with("heap8"))->Name("phold/ibfab_heap8")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(phold, naive, run_phold_naive)->Name("phold/naive_priority_queue")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ibfab::bench
