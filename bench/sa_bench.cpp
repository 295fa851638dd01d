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
#include <tuple>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/wire/mad_header.h"
#include "sim/rng.h"
#include "sm/subnet_manager.h"
#include "tools/scenario/scenario_host.h"

namespace ibfab::bench {
namespace {

struct World {
  sim::Simulator sim{1, sim::make_scheduler(sim::kDefaultScheduler)};
  topo::Topology topology;
  std::unique_ptr<fabric::Fabric> fabric;
  std::unique_ptr<sm::SubnetManager> sm;
  std::vector<std::unique_ptr<scenario::ScenarioHost>> hosts;
  std::vector<fabric::Hca*> hcas;  // hosts[i] runs on hcas[i]

  explicit World(const char* spec) : topology(topo::load_topology(spec)) {
    fabric = std::make_unique<fabric::Fabric>(sim, topology);
    sm = std::make_unique<sm::SubnetManager>(*fabric->find_hca("H1"), 1, sm::SmOptions{});
    sm->sweep();
    sim.run();
    for (uint32_t i = 0; i < fabric->node_count(); ++i)
      if (!fabric->node(i).is_switch()) {
        hcas.push_back(static_cast<fabric::Hca*>(&fabric->node(i)));
        hosts.push_back(std::make_unique<scenario::ScenarioHost>(*hcas.back()));
      }
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
  const uint64_t events_before = w.sim.events_run();
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
  state.counters["events_per_request"] = static_cast<double>(w.sim.events_run() - events_before) / (2.0 * static_cast<double>(joins));
}

// The SA's own throughput, as sa/path_records measures it: every host's
// MCMemberRecord Set (then Delete) for `groups` groups is handed to the SA
// as if it had arrived on QP1, all in one instant; each answer goes out
// over the fabric to its host, and the MFT SMPs of the changes go out and
// are answered (one batch: the multicast manager writes each changed block
// once). Wall time covers the SA's work, the tree updates, the answers'
// delivery and the MFT programming.
void sa_joins_direct(benchmark::State& state, const char* spec, unsigned groups) {
  World w(spec);
  if (!w.sm->subnet_up()) {
    state.SkipWithError("subnet not up");
    return;
  }
  const std::size_t n = w.hcas.size() * groups;
  std::vector<std::array<uint8_t, 256>> sets(n), deletes(n);
  std::vector<fabric::MadAddress> from(n);
  std::size_t q = 0;
  for (unsigned g = 0; g < groups; ++g)
    for (const fabric::Hca* h : w.hcas) {
      const fabric::Port& port = h->port(1);
      mad::McMemberRecord rec;
      rec.mgid = wire::Gid::parse("ff12:4001::" + std::to_string(g + 1)).value();
      rec.port_gid = wire::Gid::from(port.gid_prefix, port.guid());
      rec.q_key = 0x11111111;
      rec.p_key = 0xFFFF;
      rec.join_state = 1;
      for (auto [mads, method, mask] : {std::tuple(&sets, wire::mad_method::kSet, mad::mcm_comp::kCreateRequiredMask),
                                        std::tuple(&deletes, wire::mad_method::kDelete, mad::mcm_comp::kJoinRequiredMask)}) {
        mad::SaBuffer m((*mads)[q].data(), 256);
        mad::init_sa_request(m, method, mad::McMemberRecord::kAttributeId, static_cast<uint32_t>(q + 1), mask);
        rec.pack(mad::mutable_sa_data(m));
      }
      from[q].lid = port.lid;
      from[q].qpn = 1;
      ++q;
    }
  uint64_t done = 0;
  double join_seconds = 0, leave_seconds = 0;
  for (auto _ : state) {
    for (const auto* mads : {&sets, &deletes}) {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < n; ++i) w.sm->sa()->handle(from[i], (*mads)[i]);
      w.sim.run();
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      (mads == &sets ? join_seconds : leave_seconds) += secs;
    }
    done += n;
  }
  const auto& by_status = w.sm->sa()->metrics().by_status;
  const auto ok = by_status.find(0);
  if (ok == by_status.end() || ok->second != 2 * done || by_status.size() != 1)
    state.SkipWithError("some requests were not answered with status 0");
  if (!w.sm->groups()->groups().empty() && w.sm->groups()->groups().size() != 1)
    state.SkipWithError("groups left behind after every member left");
  state.counters["joins_per_s"] = static_cast<double>(done) / join_seconds;
  state.counters["leaves_per_s"] = static_cast<double>(done) / leave_seconds;
  state.counters["opensm_joins_per_s"] = 18'000;
  state.counters["mft_smps"] = static_cast<double>(w.sm->mcast()->mft_smps_sent());
}

BENCHMARK_CAPTURE(sa_joins_direct, ft3_24_x8, "fat-tree:3:24", 8u)
    ->Name("sa/joins-direct/fat-tree:3:24/8-groups")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

BENCHMARK_CAPTURE(sa_joins, ft3_24_x8, "fat-tree:3:24", 8u)
    ->Name("sa/joins/fat-tree:3:24/8-groups")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);

}  // namespace
}  // namespace ibfab::bench

namespace ibfab::bench {
namespace {

// PathRecord Gets (by source and destination LID) between random host
// pairs, handed to the SA as if they had arrived on QP1 from the source
// host; each answer goes out over the fabric to that host. Wall time covers
// the SA's work and the answers' delivery. Anchor: OpenSM's SA on the
// 11,664-host fabric, about 1,500-1,900 PathRecords/s (issue 3).
void sa_path_records(benchmark::State& state, const char* spec, unsigned queries) {
  World w(spec);
  if (!w.sm->subnet_up()) {
    state.SkipWithError("subnet not up");
    return;
  }
  std::vector<uint16_t> lids;
  for (uint32_t i = 0; i < w.fabric->node_count(); ++i)
    if (!w.fabric->node(i).is_switch()) lids.push_back(w.fabric->node(i).port(1).lid);
  sim::Rng rng(7);
  std::vector<std::array<uint8_t, 256>> mads(queries);
  std::vector<fabric::MadAddress> from(queries);
  for (unsigned q = 0; q < queries; ++q) {
    const uint16_t s = lids[rng.below(lids.size())], d = lids[rng.below(lids.size())];
    mad::SaBuffer m(mads[q].data(), 256);
    mad::init_sa_request(m, wire::mad_method::kGet, mad::PathRecord::kAttributeId, q + 1,
                         mad::pr_comp::kSlid | mad::pr_comp::kDlid | mad::pr_comp::kNumbPath);
    mad::PathRecord pr;
    pr.slid = s;
    pr.dlid = d;
    pr.numb_path = 1;
    pr.pack(mad::mutable_sa_data(m));
    from[q].lid = s;
    from[q].qpn = 1;
  }
  uint64_t done = 0;
  for (auto _ : state) {
    for (unsigned q = 0; q < queries; ++q) w.sm->sa()->handle(from[q], mads[q]);
    w.sim.run();
    done += queries;
  }
  // Every query must have been answered with one record, status 0.
  const auto& by_status = w.sm->sa()->metrics().by_status;
  const auto ok = by_status.find(0);
  if (ok == by_status.end() || ok->second != done || by_status.size() != 1)
    state.SkipWithError("some PathRecord queries were not answered with status 0");
  state.counters["path_records_per_s"] = benchmark::Counter(static_cast<double>(done), benchmark::Counter::kIsRate);
  state.counters["opensm_per_s"] = 1'700;
}

BENCHMARK_CAPTURE(sa_path_records, ft3_36, "fat-tree:3:36", 100'000u)
    ->Name("sa/path_records/fat-tree:3:36")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

}  // namespace
}  // namespace ibfab::bench
