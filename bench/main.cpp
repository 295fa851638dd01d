// ibfab_bench: Google Benchmark with one addition: after the runs it prints
// each figure beside its anchor (the baseline measured in the same run) and
// their ratio, using medians when --benchmark_repetitions > 1. It runs with
// glibc's malloc on transparent huge pages, as ibfab run and serve do
// (tools/cli/huge_pages.h).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tools/cli/huge_pages.h"

namespace {

// figure benchmark -> (anchor benchmark, counter compared)
struct Pairing { const char* figure; const char* anchor; const char* counter; };
constexpr Pairing kPairings[] = {
    {"phold/ibfab", "phold/naive_priority_queue", "events_per_s"},
    {"phold/ibfab_heap", "phold/naive_priority_queue", "events_per_s"},
    {"phold/ibfab_heap4", "phold/naive_priority_queue", "events_per_s"},
    {"phold/ibfab_heap8", "phold/naive_priority_queue", "events_per_s"},
    // The fabric model's event rate against the bare kernel's.
    {"forwarding/unicast/fat-tree:2:36", "phold/ibfab", "events_per_s"},
    {"forwarding/multicast/fat-tree:2:36", "phold/ibfab", "events_per_s"},
    // The model's event rate during an SM's bring-up against the bare kernel's.
    {"bringup/fat-tree:3:36", "phold/ibfab", "events_per_s"},
    // `ibfab run` as a whole process against the bring-up alone.
    {"run/fat-tree:3:36", "bringup/fat-tree:3:36", "wall_s"},
    {"run/fat-tree:3:48", "bringup/fat-tree:3:48", "wall_s"},
    // The RC transport against memcpy of the same size.
    {"rc/send/64B", "memcpy/64B", "messages_per_s"},
    {"rc/write/64KiB", "memcpy/64KiB", "bytes_per_s"},
    {"rc/read/64KiB", "memcpy/64KiB", "bytes_per_s"},
    {"rc/atomic", "memcpy/8B", "messages_per_s"},
};

class AnchorReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      std::string name = r.run_name.function_name;
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type == Run::RT_Aggregate && !median) continue;
      for (const auto& [key, counter] : r.counters) {
        auto& slot = values_[name][key];
        if (median || !slot.median) slot = {counter.value, median};
      }
    }
  }

  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-36s %-16s %14s %14s %8s\n", "figure", "counter", "value", "anchor", "ratio");
    for (const Pairing& p : kPairings) {
      const auto f = lookup(p.figure, p.counter), a = lookup(p.anchor, p.counter);
      if (f < 0 || a <= 0) continue;
      std::printf("%-36s %-16s %14.4g %14.4g %7.2fx\n", p.figure, p.counter, f, a, f / a);
    }
  }

 private:
  struct Value { double v = -1; bool median = false; };
  double lookup(const std::string& name, const std::string& counter) const {
    auto it = values_.find(name);
    if (it == values_.end()) return -1;
    auto jt = it->second.find(counter);
    return jt == it->second.end() ? -1 : jt->second.v;
  }
  std::map<std::string, std::map<std::string, Value>> values_;
};

}  // namespace

int main(int argc, char** argv) {
  // The engine's heap as `ibfab run` and `ibfab serve` have it.
  ibfab::cli::use_huge_pages(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  AnchorReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
