// Building the model of a large fabric (fat-tree:3:36: 11,664 hosts, 1,620
// switches): the topology (from the generator, or parsed from a net file)
// and the runtime Fabric on top of it, both timed. Targets: under 1 s and
// under 300 MB resident.
//
// Counters: nodes, links; rss_mb = resident set size right after a build,
// with the model alive; rss_delta_mb = resident growth caused by that
// build (largest over the iterations). Before each build the previous
// model is destroyed and glibc's heap trimmed, outside the timed region,
// so that the delta is not hidden by memory the allocator kept. topo_ms
// and fabric_ms split one extra build (untimed) between the two stages.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "bench/resident_memory.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/netfile_reader.h"
#include "fabric/topology/netfile_writer.h"
#include "fabric/topology/topology_spec.h"

namespace ibfab::bench {
namespace {

// A built model, kept alive as a whole. The fabric is built from the
// topology and refers to the simulator: declaration order matters.
struct Model {
  explicit Model(topo::Topology t) : topology(std::move(t)), fabric(sim, topology) {}
  topo::Topology topology;
  sim::Simulator sim;
  fabric::Fabric fabric;
};

using Load = topo::Topology (*)(const std::string&);

topo::Topology parse_netfile(const std::string& path) {
  std::ifstream in(path);
  return topo::read_netfile(in, path);
}

void measure(benchmark::State& state, const std::string& input, Load load) {
  std::unique_ptr<Model> model;
  double rss = 0, delta = 0;
  for (auto _ : state) {
    state.PauseTiming();
    model.reset();
    malloc_trim(0);
    const double before = resident_bytes();
    state.ResumeTiming();

    model = std::make_unique<Model>(load(input));

    state.PauseTiming();
    const double after = resident_bytes();
    rss = std::max(rss, after);
    delta = std::max(delta, after - before);
    state.ResumeTiming();
  }
  // After the loop the clock is stopped. The split between the two stages,
  // timed once more apart under the same conditions (diagnostic, not part
  // of the figure).
  model.reset();
  malloc_trim(0);
  const auto t0 = std::chrono::steady_clock::now();
  topo::Topology t = load(input);
  const auto t1 = std::chrono::steady_clock::now();
  model = std::make_unique<Model>(std::move(t));
  const auto t2 = std::chrono::steady_clock::now();
  state.counters["nodes"] = static_cast<double>(model->fabric.node_count());
  state.counters["links"] = static_cast<double>(model->fabric.link_count());
  state.counters["rss_mb"] = rss / kMiB;
  state.counters["rss_delta_mb"] = delta / kMiB;
  state.counters["topo_ms"] = std::chrono::duration<double, std::milli>(t1 - t0).count();
  state.counters["fabric_ms"] = std::chrono::duration<double, std::milli>(t2 - t1).count();
}

void generator(benchmark::State& state) { measure(state, "fat-tree:3:36", topo::load_topology); }

// The net file is written once per process, outside any timed region, to
// a temporary path removed at exit.
class NetfileOnDisk {
 public:
  explicit NetfileOnDisk(const std::string& spec)
      : path_((std::filesystem::temp_directory_path() /
               ("ibfab_bench_" + std::to_string(getpid()) + ".net")).string()) {
    std::ofstream out(path_);
    topo::write_netfile(out, topo::load_topology(spec));
  }
  ~NetfileOnDisk() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  NetfileOnDisk(const NetfileOnDisk&) = delete;
  NetfileOnDisk& operator=(const NetfileOnDisk&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void netfile(benchmark::State& state) {
  static const NetfileOnDisk file("fat-tree:3:36");
  state.counters["file_mb"] =
      static_cast<double>(std::filesystem::file_size(file.path())) / kMiB;
  measure(state, file.path(), parse_netfile);
}

BENCHMARK(generator)->Name("model_build/generator/fat-tree:3:36")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(netfile)->Name("model_build/netfile/fat-tree:3:36")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ibfab::bench
