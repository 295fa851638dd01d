// The RC transport of the HCA model, embedded (no served process): two
// HCAs under one leaf switch of a hand-configured fat-tree:2:4, one RC QP
// each, path MTU 4096, BufferMemory registered on both sides.
//
//   rc/send/64B      SEND messages of 64 bytes per second, a window of
//                    kSendWindow in flight; every send signalled, each
//                    completion posts the next, each receive reposts itself
//   rc/write/64KiB   RDMA WRITE bandwidth (bytes_per_s), kRdmaWindow in flight
//   rc/read/64KiB    RDMA READ bandwidth, kRdmaWindow in flight
//   rc/atomic        fetch-and-adds per second on one 8-byte counter,
//                    kRdmaWindow in flight (max_rd_atomic 16)
//   rc/latency/64B   one SEND at a time, post to its send completion (the
//                    ACK back): wall time per operation, counters
//                    wall_p50_ns, wall_p99_ns, and sim_ns, the latency the
//                    model gives it in simulated time
//   memcpy/8B, memcpy/64B, memcpy/64KiB
//                    the anchor: memcpy of the same size between two buffers
//                    in the same run (messages_per_s, bytes_per_s)
//
// The timed region is sim.run() for kMessages operations (the fabric and
// QPs are built once, outside it); a run with any error completion is
// reported as an error, not as a figure.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::bench {
namespace {

using namespace ibfab::fabric;

constexpr uint32_t kSendWindow = 128;
constexpr uint32_t kRdmaWindow = 16;
constexpr uint64_t kMem = 4u << 20;

// One end of the pair: counts completions, reposts receives, and keeps
// `window` operations of `op` in flight until `total` have been posted.
struct End final : QpEndpoint {
  Hca* hca = nullptr;
  uint32_t qpn = 0;
  uint32_t pd = 0;
  std::unique_ptr<BufferMemory> mem;
  uint32_t key = 0;
  // What to post.
  SendWr wr;
  Sge sge{};
  uint64_t posted = 0, total = 0, completed = 0, errors = 0;
  bool repost_receives = false;
  const sim::Simulator* sim = nullptr;
  sim::Time sent_at;  // the simulated time of the last send completion

  void post_one() {
    wr.sge = &sge;
    wr.num_sge = 1;
    if (hca->post_send(qpn, wr) == 0) ++posted;
    else ++errors;
  }
  void on_send_completion(const WorkCompletion& wc) override {
    ++completed;
    if (sim) sent_at = sim->now();
    if (wc.status != wc_status::kSuccess) ++errors;
    if (posted < total) post_one();
  }
  void on_recv_completion(const WorkCompletion& wc) override {
    ++completed;
    if (wc.status != wc_status::kSuccess) ++errors;
    if (repost_receives) post_receive();
  }
  void post_receive() {
    RecvWr r;
    r.num_sge = 1;
    r.sge = &sge;
    if (hca->post_recv(qpn, r) != 0) ++errors;
  }
};

struct RcPair {
  RcPair() : topology(topo::load_topology("fat-tree:2:4")), fabric(sim, topology) {
    testing::configure_by_hand(fabric);
    setup(a, "H1", 0x10000000);
    setup(b, "H2", 0x20000000);
    connect(a, b);
    connect(b, a);
  }

  void setup(End& e, const char* name, uint64_t base) {
    e.hca = fabric.find_hca(name);
    e.pd = e.hca->alloc_pd();
    e.mem = std::make_unique<BufferMemory>(base, kMem);
    e.key = e.hca->memory().register_region(
        e.pd, *e.mem, base, kMem, base,
        access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic);
    e.qpn = e.hca->create_connected_qp(Transport::kRc, e.pd, QpCaps{256, 256, 1, 1, 64}, 0, &e);
  }

  void connect(End& e, const End& peer) {
    QpAttr q;
    q.port = 1;
    q.access = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
    q.state = QpState::kInit;
    e.hca->modify_qp(e.qpn, q, qp_mask::kState | qp_mask::kPort | qp_mask::kAccessFlags);
    q.state = QpState::kRtr;
    q.path.dlid = peer.hca->port(1).lid;
    q.path_mtu = 5;
    q.dest_qp_num = peer.qpn;
    q.max_dest_rd_atomic = 16;
    q.min_rnr_timer = 1;
    e.hca->modify_qp(e.qpn, q, qp_mask::kState | qp_mask::kAv | qp_mask::kPathMtu | qp_mask::kDestQpn |
                                   qp_mask::kRqPsn | qp_mask::kMaxDestRdAtomic | qp_mask::kMinRnrTimer);
    q.state = QpState::kRts;
    q.timeout = 14;
    q.retry_cnt = 7;
    q.rnr_retry = 7;
    q.max_rd_atomic = 16;
    e.hca->modify_qp(e.qpn, q, qp_mask::kState | qp_mask::kSqPsn | qp_mask::kTimeout | qp_mask::kRetryCnt |
                                   qp_mask::kRnrRetry | qp_mask::kMaxQpRdAtomic);
  }

  // Posts `window` operations and runs until `count` more have completed
  // at A; false on any error.
  bool run(uint64_t count, uint32_t window) {
    a.total = a.posted + count;
    const uint64_t target = a.completed + count;
    for (uint32_t i = 0; i < window && a.posted < a.total; ++i) a.post_one();
    sim.run();
    return a.errors == 0 && b.errors == 0 && a.completed == target;
  }

  sim::Simulator sim;
  topo::Topology topology;
  Fabric fabric;
  End a, b;
};

void report(benchmark::State& state, uint64_t ops, uint64_t bytes) {
  using benchmark::Counter;
  state.counters["messages_per_s"] = Counter(static_cast<double>(ops), Counter::kIsRate);
  state.counters["bytes_per_s"] = Counter(static_cast<double>(bytes), Counter::kIsRate);
}

// Runs `per_iter` operations of `size` bytes per iteration, `window` in flight.
void measure(benchmark::State& state, RcPair& p, uint64_t per_iter, uint32_t window, uint32_t size) {
  uint64_t ops = 0;
  for (auto _ : state) {
    if (!p.run(per_iter, window)) {
      state.SkipWithError("an operation completed with an error");
      return;
    }
    ops += per_iter;
  }
  report(state, ops, ops * size);
}

// A sends signalled SENDs of `size` bytes; B has `receives` posted, each
// reposting itself.
void sends(RcPair& p, uint32_t size, uint32_t receives) {
  p.a.wr.opcode = wr_opcode::kSend;
  p.a.wr.flags = send_flag::kSignaled;
  p.a.sge = Sge{p.a.mem->base(), size, p.a.key};
  p.b.sge = Sge{p.b.mem->base(), size, p.b.key};
  p.b.repost_receives = true;
  for (uint32_t i = 0; i < receives; ++i) p.b.post_receive();
}

void rc_send(benchmark::State& state) {
  const auto size = static_cast<uint32_t>(state.range(0));
  const uint64_t per_iter = 20000;
  RcPair p;
  sends(p, size, 256);
  measure(state, p, per_iter, kSendWindow, size);
}

void rc_rdma(benchmark::State& state, uint8_t opcode) {
  const auto size = static_cast<uint32_t>(state.range(0));
  const uint64_t per_iter = 2000;
  RcPair p;
  p.a.wr.opcode = opcode;
  p.a.wr.flags = send_flag::kSignaled;
  p.a.wr.remote_addr = p.b.mem->base();
  p.a.wr.rkey = p.b.key;
  p.a.sge = Sge{p.a.mem->base(), size, p.a.key};
  measure(state, p, per_iter, kRdmaWindow, size);
}

void rc_atomic(benchmark::State& state) {
  const uint64_t per_iter = 20000;
  RcPair p;
  p.a.wr.opcode = wr_opcode::kAtomicFetchAndAdd;
  p.a.wr.flags = send_flag::kSignaled;
  p.a.wr.remote_addr = p.b.mem->base();
  p.a.wr.rkey = p.b.key;
  p.a.wr.compare_add = 1;
  p.a.sge = Sge{p.a.mem->base(), 8, p.a.key};
  measure(state, p, per_iter, kRdmaWindow, 8);
  uint64_t counter = 0;
  std::memcpy(&counter, p.b.mem->bytes().data(), 8);
  if (counter != p.a.completed) state.SkipWithError("the counter does not count every fetch-and-add");
}

void rc_latency(benchmark::State& state) {
  const auto size = static_cast<uint32_t>(state.range(0));
  RcPair p;
  sends(p, size, 16);
  std::vector<int64_t> wall;
  wall.reserve(1u << 20);
  double sim_ns = 0;
  p.a.sim = &p.sim;
  for (auto _ : state) {
    const sim::Time before = p.sim.now();
    const auto t0 = std::chrono::steady_clock::now();
    if (!p.run(1, 1)) {
      state.SkipWithError("an operation completed with an error");
      return;
    }
    wall.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    sim_ns = (p.a.sent_at - before).to_ns();
  }
  if (wall.empty()) return;
  std::sort(wall.begin(), wall.end());
  state.counters["wall_p50_ns"] = static_cast<double>(wall[wall.size() / 2]);
  state.counters["wall_p99_ns"] = static_cast<double>(wall[wall.size() * 99 / 100]);
  state.counters["sim_ns"] = sim_ns;
}

void rc_write(benchmark::State& state) { rc_rdma(state, wr_opcode::kRdmaWrite); }
void rc_read(benchmark::State& state) { rc_rdma(state, wr_opcode::kRdmaRead); }

// The anchor: memcpy of the same size, between two buffers as large as the
// benchmarks' memories (so that the copies stream as the model's do).
void copy(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  std::vector<uint8_t> from(kMem, 1), to(kMem, 0);
  std::size_t at = 0;
  uint64_t ops = 0;
  uint8_t* dst = to.data();
  const uint8_t* src = from.data();
  for (auto _ : state) {
    benchmark::DoNotOptimize(dst);
    benchmark::DoNotOptimize(src);
    std::memcpy(dst + at, src + at, size);
    benchmark::ClobberMemory();
    at = at + 2 * size <= kMem ? at + size : 0;
    ++ops;
  }
  report(state, ops, ops * size);
}

BENCHMARK(rc_send)->Name("rc/send/64B")->Arg(64)->UseRealTime();
BENCHMARK(rc_write)->Name("rc/write/64KiB")->Arg(65536)->UseRealTime();
BENCHMARK(rc_read)->Name("rc/read/64KiB")->Arg(65536)->UseRealTime();
BENCHMARK(rc_atomic)->Name("rc/atomic")->UseRealTime();
BENCHMARK(rc_latency)->Name("rc/latency/64B")->Arg(64)->UseRealTime();
BENCHMARK(copy)->Name("memcpy/8B")->Arg(8)->UseRealTime();
BENCHMARK(copy)->Name("memcpy/64B")->Arg(64)->UseRealTime();
BENCHMARK(copy)->Name("memcpy/64KiB")->Arg(65536)->UseRealTime();

}  // namespace
}  // namespace ibfab::bench
