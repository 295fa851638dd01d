// libibverbs on an in-process fabric (IBFAB_TOPOLOGY=fat-tree:2:4): UD
// traffic between QPs of two hosts (ibfab0 and ibfab1), through the public
// verbs of the built libibverbs.so.1, from one application thread.
//
//   verbs/ud_rate/bytes:B/post_list:L
//                             messages per second with a window of sends
//                             in flight, posted L per ibv_post_send call;
//                             items/s and bytes/s count messages *received*;
//                             the receiver reposts what each poll returns
//   verbs/ud_latency/<bytes>  one message at a time: ibv_post_send to the
//                             receive completion at the other QP (median_ns,
//                             p99_ns)
//   verbs/ud_latency_loaded/bytes:B/busy:N/pinned:P
//                             the same while N other processes spin (P=1:
//                             the i-th pinned to the i-th CPU this process
//                             may use; P=0: on any of them), beside the idle
//                             figure measured just before it in the same
//                             run, and the ratio (ud_latency_loaded below)
//
// Both also report where the time went, per message, from /proc/self/task:
// on-CPU and run-queue-wait ns and voluntary context switches (sleeps) of
// the embedded engine's thread ("engine_": the threads but this one) and
// of this thread ("app_").
#include <benchmark/benchmark.h>
#include <dirent.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/api/busy_processes.h"

namespace ibfab::bench {
namespace {

constexpr uint32_t kQkey = 0x0000B0B0;
constexpr uint32_t kGrh = 40;
constexpr uint32_t kMaxMessage = 4096;
constexpr uint32_t kSendDepth = 256;
constexpr uint32_t kRecvDepth = 1024;
constexpr uint32_t kWindow = 128;      // messages sent and not yet received
constexpr uint32_t kSignalEvery = 16;  // selective signalling of sends

// One host's UD QP with a CQ and a registered buffer of `slots` slots.
struct Endpoint {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  static constexpr uint32_t slot = kGrh + kMaxMessage;
  std::vector<uint8_t> buf;
  uint16_t lid = 0;

  Endpoint(ibv_device* dev, uint32_t slots) : buf(std::size_t{slots} * slot) {
    ctx = ibv_open_device(dev);
    if (!ctx) return;
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, static_cast<int>(kSendDepth + kRecvDepth), nullptr, nullptr, 0);
    const int access = IBV_ACCESS_LOCAL_WRITE;  // an int: ibv_reg_mr() is a macro that ORs in another enum
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), access);
    ibv_qp_init_attr a{};
    a.send_cq = a.recv_cq = cq;
    a.cap.max_send_wr = kSendDepth;
    a.cap.max_recv_wr = kRecvDepth;
    a.cap.max_send_sge = a.cap.max_recv_sge = 1;
    a.qp_type = IBV_QPT_UD;
    qp = ibv_create_qp(pd, &a);
    ibv_port_attr pa;
    if (ibv_query_port(ctx, 1, &pa) == 0) lid = pa.lid;
  }
  ~Endpoint() {
    if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
  bool to_rts() {
    if (!qp || !mr) return false;
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = kQkey;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) return false;
    a.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE)) return false;
    a.qp_state = IBV_QPS_RTS;
    return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) == 0;
  }
};

// Posts receives into slots `slots[0..n)` of `rx`'s buffer, as one list.
int post_recvs(Endpoint& rx, const uint64_t* slots, int n) {
  constexpr int kMost = 64;
  ibv_sge sge[kMost];
  ibv_recv_wr wr[kMost];
  for (int i = 0; i < n && i < kMost; ++i) {
    sge[i] = {reinterpret_cast<uintptr_t>(&rx.buf[slots[i] * Endpoint::slot]), Endpoint::slot, rx.mr->lkey};
    wr[i] = {};
    wr[i].wr_id = slots[i];
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].next = i + 1 < n && i + 1 < kMost ? &wr[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  return n > kMost ? EINVAL : ibv_post_recv(rx.qp, wr, &bad);
}

// Sender state across the loop: sent, and sends known complete (the last
// signalled completion covers every send before it).
struct SendCounts {
  uint64_t sent = 0, done = 0;
};

// Posts `n` sends of `bytes`, ids c.sent.., as one list (one ibv_post_send
// call), signalling every `signal_every`th.
int post_sends(Endpoint& tx, ibv_ah* ah, uint32_t remote_qpn, uint32_t bytes, SendCounts& c, uint32_t n,
               uint32_t signal_every) {
  std::array<ibv_send_wr, kWindow> wr{};
  const ibv_sge sge{reinterpret_cast<uintptr_t>(tx.buf.data()), bytes, tx.mr->lkey};
  for (uint32_t i = 0; i < n && i < kWindow; ++i) {
    const uint64_t id = c.sent + i;
    wr[i].wr_id = id;
    wr[i].sg_list = const_cast<ibv_sge*>(&sge);
    wr[i].num_sge = 1;
    wr[i].opcode = IBV_WR_SEND;
    wr[i].send_flags = (id + 1) % signal_every == 0 ? IBV_SEND_SIGNALED : 0;
    wr[i].wr.ud.ah = ah;
    wr[i].wr.ud.remote_qpn = remote_qpn;
    wr[i].wr.ud.remote_qkey = kQkey;
    wr[i].next = i + 1 < n && i + 1 < kWindow ? &wr[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  const int e = n > kWindow ? EINVAL : ibv_post_send(tx.qp, wr.data(), &bad);
  if (e == 0) c.sent += n;
  return e;
}

// The two endpoints and the sender's AH, made once per process, as the
// embedded engine is.
struct Pair {
  std::unique_ptr<Endpoint> tx, rx;
  ibv_ah* ah = nullptr;
  bool ok = false;

  Pair() {
    ::setenv("IBFAB_TOPOLOGY", "fat-tree:2:4", 1);
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list || n < 2) return;
    tx = std::make_unique<Endpoint>(list[0], 1);
    rx = std::make_unique<Endpoint>(list[1], kRecvDepth);
    ibv_free_device_list(list);
    if (!tx->to_rts() || !rx->to_rts()) return;
    ibv_ah_attr a{};
    a.dlid = rx->lid;
    a.port_num = 1;
    ah = ibv_create_ah(tx->pd, &a);
    for (uint64_t first = 0; first < kRecvDepth && ah; first += 64) {
      uint64_t slots[64];
      for (uint64_t i = 0; i < 64; ++i) slots[i] = first + i;
      if (post_recvs(*rx, slots, 64)) return;
    }
    ok = ah != nullptr;
  }
  static Pair& get() {
    static Pair* p = new Pair;  // never destroyed: it outlives no engine
    return *p;
  }
};

// Scheduler figures of this thread or of all the others, summed.
struct ThreadTimes {
  double cpu_ns = 0, wait_ns = 0, sleeps = 0;

  static ThreadTimes read(bool self) {
    ThreadTimes t;
    const std::string me = std::to_string(::gettid());
    DIR* d = ::opendir("/proc/self/task");
    while (dirent* e = d ? ::readdir(d) : nullptr) {
      if (e->d_name[0] == '.' || (me == e->d_name) != self) continue;
      const std::string dir = std::string("/proc/self/task/") + e->d_name;
      double cpu = 0, wait = 0;
      if (std::ifstream(dir + "/schedstat") >> cpu >> wait) t.cpu_ns += cpu, t.wait_ns += wait;
      std::ifstream status(dir + "/status");
      for (std::string key; status >> key;)
        if (key == "voluntary_ctxt_switches:") {
          double n = 0;
          status >> n;
          t.sleeps += n;
        }
    }
    if (d) ::closedir(d);
    return t;
  }
  // Reports the figures gathered since `before`, per `messages`.
  static void report(benchmark::State& state, const char* prefix, const ThreadTimes& before, bool self,
                     double messages) {
    const ThreadTimes now = read(self);
    const std::string p = prefix;
    state.counters[p + "cpu_ns"] = (now.cpu_ns - before.cpu_ns) / messages;
    state.counters[p + "wait_ns"] = (now.wait_ns - before.wait_ns) / messages;
    state.counters[p + "sleeps"] = (now.sleeps - before.sleeps) / messages;
  }
};

// Polls the sender's CQ; false on an error completion.
bool reap_sends(Endpoint& tx, SendCounts& c) {
  ibv_wc wc[16];
  const int n = ibv_poll_cq(tx.cq, 16, wc);
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return false;
    c.done = wc[i].wr_id + 1;
  }
  return n >= 0;
}

// Polls the receiver's CQ and reposts what it got, as one list; the
// count, or -1.
int reap_recvs(Endpoint& rx) {
  constexpr int kPoll = 32;
  ibv_wc wc[kPoll];
  const int n = ibv_poll_cq(rx.cq, kPoll, wc);
  uint64_t slots[kPoll];
  for (int i = 0; i < n; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS) return -1;
    slots[i] = wc[i].wr_id;
  }
  return n > 0 && post_recvs(rx, slots, n) ? -1 : n;
}

// Arguments: message bytes, sends per ibv_post_send call (the window is
// refilled when that many may go).
void ud_rate(benchmark::State& state) {
  Pair& p = Pair::get();
  if (!p.ok) return state.SkipWithError("no UD pair on the embedded fabric");
  const auto bytes = static_cast<uint32_t>(state.range(0));
  const auto list = static_cast<uint32_t>(state.range(1));
  const uint32_t rqpn = p.rx->qp->qp_num;
  constexpr uint64_t kBatch = 8192;  // messages received per iteration
  SendCounts c;
  uint64_t received = 0;
  const ThreadTimes app = ThreadTimes::read(true), engine = ThreadTimes::read(false);
  for (auto _ : state) {
    const uint64_t goal = received + kBatch;
    while (received < goal) {
      // Never more in flight than the receiver has posted (nothing drops),
      // nor more outstanding than the send queue holds.
      const uint64_t room =
          std::min(received + kWindow - c.sent, uint64_t{kSendDepth - kSignalEvery} - (c.sent - c.done));
      if (room >= list && post_sends(*p.tx, p.ah, rqpn, bytes, c, list, kSignalEvery))
        return state.SkipWithError("ibv_post_send");
      if (!reap_sends(*p.tx, c)) return state.SkipWithError("send completion error");
      const int n = reap_recvs(*p.rx);
      if (n < 0) return state.SkipWithError("receive completion error");
      received += static_cast<uint64_t>(n);
    }
  }
  const double messages = static_cast<double>(state.iterations() * kBatch);
  ThreadTimes::report(state, "app_", app, true, messages);
  ThreadTimes::report(state, "engine_", engine, false, messages);
  // Drain what is still in flight, outside the timing, for the next run.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while ((received < c.sent || c.done < c.sent - c.sent % kSignalEvery) && std::chrono::steady_clock::now() < end) {
    reap_sends(*p.tx, c);
    received += static_cast<uint64_t>(std::max(0, reap_recvs(*p.rx)));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kBatch * bytes));
}
BENCHMARK(ud_rate)
    ->Name("verbs/ud_rate")
    ->ArgNames({"bytes", "post_list"})
    ->Args({64, 1})
    ->Args({64, 32})
    ->Args({4096, 1})
    ->Args({4096, 32})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One message of `bytes`: posted, then its receive completion polled (the
// latency, ns, in `ns`); the receive reposted and the send's completion
// reaped outside it. false on any failure.
bool one_message(Pair& p, uint32_t bytes, SendCounts& c, double& ns) {
  const auto t0 = std::chrono::steady_clock::now();
  if (post_sends(*p.tx, p.ah, p.rx->qp->qp_num, bytes, c, 1, 1)) return false;
  ibv_wc wc;
  int n;
  while ((n = ibv_poll_cq(p.rx->cq, 1, &wc)) == 0) {
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (n < 0 || wc.status != IBV_WC_SUCCESS || post_recvs(*p.rx, &wc.wr_id, 1)) return false;
  while ((n = ibv_poll_cq(p.tx->cq, 1, &wc)) == 0) {
  }
  ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
  return n > 0 && wc.status == IBV_WC_SUCCESS;
}

// The `pct`th percentile of `ns` (sorted in place); 0 when empty.
double percentile(std::vector<double>& ns, int pct) {
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  return ns[std::min(ns.size() - 1, ns.size() * static_cast<std::size_t>(pct) / 100)];
}

void ud_latency(benchmark::State& state) {
  Pair& p = Pair::get();
  if (!p.ok) return state.SkipWithError("no UD pair on the embedded fabric");
  const auto bytes = static_cast<uint32_t>(state.range(0));
  std::vector<double> ns;
  ns.reserve(1 << 16);
  SendCounts c;
  const ThreadTimes app = ThreadTimes::read(true), engine = ThreadTimes::read(false);
  for (auto _ : state) {
    double one = 0;
    if (!one_message(p, bytes, c, one)) return state.SkipWithError("message failed");
    ns.push_back(one);
  }
  if (ns.empty()) return;
  ThreadTimes::report(state, "app_", app, true, static_cast<double>(ns.size()));
  ThreadTimes::report(state, "engine_", engine, false, static_cast<double>(ns.size()));
  state.counters["median_ns"] = percentile(ns, 50);
  state.counters["p99_ns"] = percentile(ns, 99);
}
BENCHMARK(ud_latency)->Name("verbs/ud_latency")->Arg(64)->Arg(4096)->UseRealTime();

// The machine's load average over the last minute (/proc/loadavg).
double loadavg1() {
  double l = -1;
  std::ifstream("/proc/loadavg") >> l;
  return l;
}

// ud_latency with `busy` other processes spinning (args: bytes, busy,
// pinned), beside the same measured just before on the idle machine: the
// figure with its anchor, from one run. Counters: median_ns and p99_ns
// under load; idle_median_ns and idle_p99_ns (kIdleMessages messages
// before the busy processes start); ratio (median over idle median);
// mean_ns and idle_mean_ns (each message's post to its send completion,
// the iteration's real time) and mean_ratio; busy_cores (the CPU the busy
// processes got, in cores) and loadavg1 at the end.
void ud_latency_loaded(benchmark::State& state) {
  Pair& p = Pair::get();
  if (!p.ok) return state.SkipWithError("no UD pair on the embedded fabric");
  const auto bytes = static_cast<uint32_t>(state.range(0));
  const auto busy = static_cast<int>(state.range(1));
  constexpr std::size_t kIdleMessages = 20'000;
  SendCounts c;
  std::vector<double> idle(kIdleMessages), ns;
  ns.reserve(1 << 16);
  const auto idle_start = std::chrono::steady_clock::now();
  for (double& one : idle)
    if (!one_message(p, bytes, c, one)) return state.SkipWithError("message failed");
  const double idle_mean =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - idle_start).count() / kIdleMessages;
  testing::BusyProcesses load(busy, state.range(2) != 0);
  if (load.count() != static_cast<std::size_t>(busy)) return state.SkipWithError("fork");
  const ThreadTimes app = ThreadTimes::read(true), engine = ThreadTimes::read(false);
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    double one = 0;
    if (!one_message(p, bytes, c, one)) return state.SkipWithError("message failed");
    ns.push_back(one);
  }
  if (ns.empty()) return;
  const double mean =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / static_cast<double>(ns.size());
  state.counters["busy_cores"] = load.cores();
  state.counters["loadavg1"] = loadavg1();
  ThreadTimes::report(state, "app_", app, true, static_cast<double>(ns.size()));
  ThreadTimes::report(state, "engine_", engine, false, static_cast<double>(ns.size()));
  state.counters["median_ns"] = percentile(ns, 50);
  state.counters["p99_ns"] = percentile(ns, 99);
  state.counters["idle_median_ns"] = percentile(idle, 50);
  state.counters["idle_p99_ns"] = percentile(idle, 99);
  state.counters["ratio"] = state.counters["median_ns"] / state.counters["idle_median_ns"];
  state.counters["mean_ns"] = mean;
  state.counters["idle_mean_ns"] = idle_mean;
  state.counters["mean_ratio"] = mean / idle_mean;
}
BENCHMARK(ud_latency_loaded)
    ->Name("verbs/ud_latency_loaded")
    ->ArgNames({"bytes", "busy", "pinned"})
    ->Args({64, 1, 0})
    ->Args({64, 2, 1})
    ->UseRealTime();

}  // namespace
}  // namespace ibfab::bench

BENCHMARK_MAIN();
