// ib_cm's connections in wall time (api/server/kernel/ib_cm_connection.h):
// cmtime's pattern on ib_cm alone, between two hosts of line:2 that the
// built-in SM brought up. H1 sends `n` REQs at once (a QP each); H2 accepts
// every one, H1 answers each REP with the RTU; then H1 disconnects them all
// (DREQ, DREP) and both sides sit out TIMEWAIT. Every message is a real MAD
// crossing the simulated fabric. Counters: connections and disconnections
// per wall second, the engine's resident bytes per connection (both sides'
// state, measured while all are ESTABLISHED), and simulator events per
// connection. rdma_cm's and ucma's share is not in these figures.
#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

#include "api/server/kernel/ib_cm.h"
#include "bench/resident_memory.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "sim/simulator.h"
#include "sm/subnet_manager.h"

namespace ibfab::bench {
namespace {

constexpr uint64_t kService = 0x1000'0000'0000'0001;

class CmPair final : public api::IbCm::User, public api::CmConnectionUser {
 public:
  CmPair()
      : topology_(topo::load_topology("line:2")),
        fabric_(sim_, topology_),
        sm_(*fabric_.find_hca("H1"), 1, sm::SmOptions{}),
        cm_(fabric_, *this) {
    sm_.sweep();
    sim_.run();
    h1_ = fabric_.find_hca("H1");
    h2_ = fabric_.find_hca("H2");
    cm_.attach(*h1_, 1);
    cm_.attach(*h2_, 1);
    cm_.connections().listen(kService, *this, 2);
  }
  bool up() const { return h1_->port(1).lid != 0 && h2_->port(1).lid != 0; }
  sim::Simulator& sim() { return sim_; }

  void connect(unsigned n) {
    ids_.clear();
    api::CmConnectParams p;
    p.to.lid = h2_->port(1).lid;
    p.to.qpn = 1;
    p.packet_life_time = 14;
    p.req.service_id = kService;
    p.req.remote_cm_response_timeout = 20;
    p.req.local_cm_response_timeout = 20;
    p.req.max_cm_retries = 15;
    p.req.primary_path.local_lid = h1_->port(1).lid;
    p.req.primary_path.remote_lid = h2_->port(1).lid;
    p.req.primary_path.local_ack_timeout = 15;
    for (unsigned i = 0; i < n; ++i) {
      p.req.local_qpn = 0x100 + i;
      ids_.push_back(cm_.connections().connect(*h1_, 1, p, *this, 1));
    }
  }
  void disconnect() {
    for (api::CmId id : ids_) cm_.connections().disconnect(*h1_, id, {});
  }
  unsigned established = 0, timewait_exits = 0, failures = 0;

 private:
  void on_sidr_req(const api::SidrRequester&, const mad::SidrReq&) override {}
  void on_sidr_rep(uint32_t, const mad::SidrRep*) override {}
  void on_cm_req(api::CmId id, uint64_t, const api::CmPeer&, const mad::CmReq& req) override {
    mad::CmRep rep;
    rep.local_qpn = req.local_qpn + 0x10000;
    if (!cm_.connections().accept(*h2_, id, rep)) ++failures;
  }
  void on_cm_rep(api::CmId id, uint64_t, const mad::CmRep&) override {
    if (!cm_.connections().send_rtu(*h1_, id, {})) ++failures;
  }
  void on_cm_established(api::CmId, uint64_t, const mad::CmRtu&) override { ++established; }
  void on_cm_rej(api::CmId, uint64_t, const mad::CmRej&) override { ++failures; }
  void on_cm_mra(api::CmId, uint64_t, const mad::CmMra&) override {}
  void on_cm_dreq(api::CmId id, uint64_t, const mad::CmDreq&) override {
    if (!cm_.connections().send_drep(*h2_, id, {})) ++failures;
  }
  void on_cm_drep(api::CmId, uint64_t, const mad::CmDrep&) override {}
  void on_cm_timewait_exit(api::CmId, uint64_t) override { ++timewait_exits; }
  void on_cm_timeout(api::CmId, uint64_t, api::CmTimedOut) override { ++failures; }

  sim::Simulator sim_;
  topo::Topology topology_;
  fabric::Fabric fabric_;
  sm::SubnetManager sm_;
  api::IbCm cm_;
  fabric::Hca* h1_ = nullptr;
  fabric::Hca* h2_ = nullptr;
  std::vector<api::CmId> ids_;
};

void cm_connect_disconnect(benchmark::State& state) {
  const auto n = static_cast<unsigned>(state.range(0));
  double connect_seconds = 0, disconnect_seconds = 0, bytes = 0, events = 0;
  for (auto _ : state) {
    CmPair pair;
    if (!pair.up()) return state.SkipWithError("subnet not up");
    const double rss_before = resident_bytes();
    const uint64_t events_before = pair.sim().events_run();
    auto t0 = std::chrono::steady_clock::now();
    pair.connect(n);
    pair.sim().run();
    auto t1 = std::chrono::steady_clock::now();
    bytes += resident_bytes() - rss_before;
    pair.disconnect();
    pair.sim().run();
    auto t2 = std::chrono::steady_clock::now();
    events += static_cast<double>(pair.sim().events_run() - events_before);
    connect_seconds += std::chrono::duration<double>(t1 - t0).count();
    disconnect_seconds += std::chrono::duration<double>(t2 - t1).count();
    if (pair.established != n || pair.timewait_exits != 2 * n || pair.failures)
      return state.SkipWithError("a connection failed");
  }
  const double runs = static_cast<double>(state.iterations());
  state.counters["connections_per_s"] = runs * n / connect_seconds;
  state.counters["disconnections_per_s"] = runs * n / disconnect_seconds;
  state.counters["bytes_per_connection"] = bytes / (runs * n);
  state.counters["events_per_connection"] = events / (runs * n);
}
BENCHMARK(cm_connect_disconnect)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ibfab::bench
