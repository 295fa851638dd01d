// Served mode: how long `ibfab serve` takes to be ready (the fabric built,
// the subnet up, every port's IPoIB broadcast join answered) on large fat
// trees; an SA Get (ClassPortInfo) from a client process's point of view,
// over the engine's socket to the built-in SA and back, in wall time; and
// SA queries per second from 16 clients at once. The engine serves
// fat-tree:2:4 in a thread of this process, as `ibfab serve` would; each
// client has its own control and MAD-port connections, as a libibumad
// process has.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/client/session.h"
#include "bench/resident_memory.h"
#include "api/server/engine.h"
#include "api/client/seqpacket.h"
#include "api/client/socket_path.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::bench {
namespace {

struct ServedEngine {
  std::string path = "/tmp/ibfab-bench-" + std::to_string(::getpid()) + ".sock";
  std::unique_ptr<api::Engine> engine;
  int listen_fd = -1;
  std::atomic<bool> stop{false};
  std::thread thread;
  uint16_t sm_lid = 0;

  ServedEngine() {
    api::EngineOptions o;
    o.topology = "fat-tree:2:4";
    engine = std::make_unique<api::Engine>(o);
    if (!engine->bring_up().empty()) return;
    sm_lid = engine->fabric().find_hca("H1")->port(1).lid;
    std::string error;
    listen_fd = api::listen_at(path, error);
    thread = std::thread([this] { engine->serve(listen_fd, stop); });
  }
  ~ServedEngine() {
    stop = true;
    if (thread.joinable()) thread.join();
    if (listen_fd >= 0) ::close(listen_fd);
    ::unlink(path.c_str());
  }
};

// One client: a control connection, a MAD port on `node`, an SA agent.
struct Client {
  int control = -1, port = -1;
  bool ok = false;
  Client(const std::string& path, const std::string& node) {
    uint32_t ignored = 0, handle = 0;
    control = api::connect_to(path);
    port = api::connect_to(path);
    if (control < 0 || port < 0 || client::greet(control, node, api::ConnectionKind::Control, 0, ignored) ||
        client::greet(port, node, api::ConnectionKind::MadPort, 1, handle))
      return;
    api::RegisterAgent r;
    r.handle = handle;
    r.mgmt_class = 0x03;
    r.class_version = 2;
    api::send_message(control, api::MsgType::RegisterAgent, &r, sizeof r);
    std::array<uint8_t, 64> buf{};
    const ssize_t n = api::recv_message(control, buf);
    const auto reply = api::body_as<api::Result>(std::span<const uint8_t>(buf.data(), n > 0 ? n : 0),
                                                 api::MsgType::RegisterReply);
    ok = reply && reply->value == 0;
  }
  ~Client() {
    if (control >= 0) ::close(control);
    if (port >= 0) ::close(port);
  }
  // One SA ClassPortInfo Get and its answer; false if it did not come.
  bool query(uint16_t sm_lid, uint32_t tid) {
    std::array<uint8_t, 256> mad{};
    mad[0] = 1;
    mad[1] = 0x03;
    mad[2] = 2;
    mad[3] = 0x01;
    wire::store_be64(&mad[8], tid);
    wire::store_be16(&mad[16], 0x0001);
    api::MadEnvelope env;
    env.length = 256;
    env.timeout_ms = 1000;
    env.addr.lid = htobe16(sm_lid);
    env.addr.qpn = htobe32(1);
    env.addr.qkey = htobe32(0x80010000);
    if (api::send_message(port, api::MsgType::SendMad, &env, sizeof env, mad)) return false;
    std::array<uint8_t, 512> buf{};
    const ssize_t n = api::recv_message(port, buf);
    return n > 0 && buf[sizeof(api::MsgHeader) + sizeof(api::MadEnvelope) + 3] == 0x81;
  }
};

// From nothing to ready, as `ibfab serve --topology SPEC` does before it
// listens: wall time, resident memory.
void served_ready(benchmark::State& state, const char* spec) {
  std::size_t hosts = 0;
  for (auto _ : state) {
    api::EngineOptions o;
    o.topology = spec;
    auto engine = std::make_unique<api::Engine>(o);
    const std::string error = engine->bring_up();
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      return;
    }
    hosts = engine->topology().hca_count();
    state.PauseTiming();
    state.counters["rss_mb"] = resident_mb();
    engine.reset();
    state.ResumeTiming();
  }
  state.counters["hosts"] = static_cast<double>(hosts);
}
BENCHMARK_CAPTURE(served_ready, ft3_24, "fat-tree:3:24")->Name("served/ready/fat-tree:3:24")->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(served_ready, ft3_34, "fat-tree:3:34")->Name("served/ready/fat-tree:3:34")->Iterations(3)->UseRealTime()->Unit(benchmark::kMillisecond);

void served_sa_round_trip(benchmark::State& state) {
  ServedEngine e;
  Client c(e.path, "H3");
  if (!c.ok) {
    state.SkipWithError("client could not attach");
    return;
  }
  std::vector<double> us;
  uint32_t tid = 1;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!c.query(e.sm_lid, tid++)) {
      state.SkipWithError("no answer");
      return;
    }
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  state.counters["median_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
}
BENCHMARK(served_sa_round_trip)->Name("served/sa_round_trip")->Iterations(5000)->UseRealTime();

void served_sa_16_clients(benchmark::State& state) {
  ServedEngine e;
  constexpr int kClients = 16, kQueries = 2000;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    std::atomic<int> failed{0};
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kClients; ++i)
      threads.emplace_back([&, i] {
        Client c(e.path, "H" + std::to_string(1 + i % 8));
        for (int q = 0; q < kQueries && c.ok; ++q)
          if (!c.query(e.sm_lid, static_cast<uint32_t>(q + 1))) ++failed;
        if (!c.ok) failed += kQueries;
      });
    for (std::thread& t : threads) t.join();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (failed) state.SkipWithError("some queries went unanswered");
    state.counters["queries_per_s"] = kClients * kQueries / secs;
  }
}
BENCHMARK(served_sa_16_clients)->Name("served/sa_16_clients")->Iterations(1)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ibfab::bench
