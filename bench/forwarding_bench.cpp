// The data path at scale: UD traffic through a hand-configured
// fat-tree:2:36 (648 hosts, 54 switches, min-hop LFTs), one UD QP per host.
//
//   forwarding/unicast    every host sends kUnicastPackets to a partner
//                         drawn from a fixed random derangement;
//   forwarding/multicast  one MLID whose MFTs form a spanning tree over all
//                         switches, every QP attached; kMcastSenders hosts
//                         send kMcastPackets each (each reaches all 648 QPs,
//                         the sender's own by local loopback).
//
// Sends are spaced by a fixed gap per sender (staggered across senders) so
// that no output queue overflows; a run with any fabric drop, refused send
// or missing delivery is reported as an error, not as a figure.
//
// Building and configuring the fabric and scheduling the first sends are
// outside the timed region, which is only sim.run() for the traffic.
// Counters (rates over that wall time): packets_per_s = UD messages handed
// to a QP; hops_per_s = link traversals completed (Fabric::Stats::delivered);
// events_per_s = simulator events run.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <deque>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/gid.h"
#include "sim/rng.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::bench {
namespace {

using fabric::Hca;
using fabric::Port;
using fabric::Switch;
using fabric::UdSend;

constexpr uint32_t kQkey = 0x1111;
constexpr uint32_t kPayloadBytes = 64;
constexpr uint32_t kUnicastPackets = 64;  // per host
constexpr uint32_t kMcastSenders = 4;
constexpr uint32_t kMcastPackets = 64;    // per sender
constexpr uint16_t kMlid = 0xC001;
// Min-hop LFTs built by BFS send all inter-leaf traffic through one spine,
// so a leaf uplink carries 18 hosts' traffic: 1 us per sender keeps it
// under 20% load (a ~100-byte packet takes ~8 ns at 4xEDR).
constexpr sim::Time kGap = sim::Time::us(1);

// Counts what reaches any QP; accepts everything.
struct CountingEndpoint final : fabric::UdEndpoint {
  uint64_t received = 0;
  bool on_receive(const fabric::UdMessage&) override {
    ++received;
    return true;
  }
};

// A configured fabric with one UD QP per host. Members refer to each
// other: declaration order is construction order.
struct Network {
  explicit Network(const std::string& spec) : topology(topo::load_topology(spec)), fabric(sim, topology) {
    fabric::testing::configure_by_hand(fabric);
    for (uint32_t i = 0; i < fabric.node_count(); ++i)
      if (!fabric.node(i).is_switch()) {
        auto& h = static_cast<Hca&>(fabric.node(i));
        hosts.push_back(&h);
        qpns.push_back(h.create_ud_qp(1, kQkey, 0, &inbox));
      }
  }

  // Programs `mlid` as a spanning tree: BFS over the switches from the
  // first host's switch, tree links in both directions plus every port
  // towards a host. Each host then gets exactly one copy.
  void program_tree(uint16_t mlid) {
    auto add = [mlid](Switch& sw, uint8_t port) {
      const auto pos = static_cast<uint8_t>(port / 16);
      sw.set_mft(mlid, pos, static_cast<uint16_t>(sw.mft(mlid, pos) | 1u << (port % 16)));
    };
    std::vector<bool> seen(fabric.node_count(), false);
    std::deque<Switch*> queue;
    auto& root = static_cast<Switch&>(hosts.front()->port(1).peer()->node());
    seen[root.index()] = true;
    queue.push_back(&root);
    while (!queue.empty()) {
      Switch& sw = *queue.front();
      queue.pop_front();
      for (uint8_t p = 1; p <= sw.num_ports(); ++p) {
        Port* peer = sw.port(p).peer();
        if (!peer) continue;
        if (!peer->node().is_switch()) {
          add(sw, p);
        } else if (!seen[peer->node().index()]) {
          seen[peer->node().index()] = true;
          auto& child = static_cast<Switch&>(peer->node());
          add(sw, p);
          add(child, peer->number());
          queue.push_back(&child);
        }
      }
    }
  }

  sim::Simulator sim;
  topo::Topology topology;
  fabric::Fabric fabric;
  CountingEndpoint inbox;
  std::vector<Hca*> hosts;     // in node order
  std::vector<uint32_t> qpns;  // by host
};

// Senders, each with a prepared message; start() schedules every sender's
// first send, each send schedules the next one kGap later.
class Traffic {
 public:
  Traffic(sim::Simulator& sim, uint32_t per_sender) : sim_(&sim), per_sender_(per_sender) {}

  void add(Hca& hca, uint32_t qpn, const UdSend& msg) { senders_.push_back({&hca, qpn, msg}); }
  std::size_t senders() const { return senders_.size(); }
  uint64_t refused() const { return refused_; }

  void start() {
    const auto n = static_cast<int64_t>(senders_.size());
    for (uint32_t s = 0; s < senders_.size(); ++s)
      sim_->schedule(kGap * static_cast<int64_t>(s) / n, [this, s] { send(s, per_sender_); });
  }

 private:
  struct Sender {
    Hca* hca;
    uint32_t qpn;
    UdSend msg;
  };

  void send(uint32_t s, uint32_t left) {
    const Sender& x = senders_[s];
    if (!x.hca->send_ud(x.qpn, x.msg)) ++refused_;
    if (left > 1) sim_->schedule(kGap, [this, s, left] { send(s, left - 1); });
  }

  sim::Simulator* sim_;
  uint32_t per_sender_;
  std::vector<Sender> senders_;
  uint64_t refused_ = 0;
};

const std::array<uint8_t, kPayloadBytes> kPayload{};

// Runs the traffic once per iteration and reports the rates; `expected`
// is the number of QP deliveries one pass must produce.
void run(benchmark::State& state, Network& net, Traffic& traffic, uint64_t expected) {
  const uint64_t received0 = net.inbox.received;
  const uint64_t hops0 = net.fabric.stats().delivered;
  const uint64_t events0 = net.sim.events_run();
  for (auto _ : state) {
    state.PauseTiming();
    traffic.start();
    state.ResumeTiming();
    net.sim.run();
  }
  const auto iterations = static_cast<uint64_t>(state.iterations());
  const uint64_t received = net.inbox.received - received0;
  if (net.fabric.stats().total_dropped() != 0) {
    state.SkipWithError(("fabric dropped " + std::to_string(net.fabric.stats().total_dropped()) +
                         " packets: widen kGap").c_str());
    return;
  }
  if (traffic.refused() != 0 || received != expected * iterations) {
    state.SkipWithError(("delivered " + std::to_string(received) + " of " +
                         std::to_string(expected * iterations) + " messages, " +
                         std::to_string(traffic.refused()) + " sends refused").c_str());
    return;
  }
  using benchmark::Counter;
  state.counters["packets_per_s"] = Counter(static_cast<double>(received), Counter::kIsRate);
  state.counters["hops_per_s"] =
      Counter(static_cast<double>(net.fabric.stats().delivered - hops0), Counter::kIsRate);
  state.counters["events_per_s"] =
      Counter(static_cast<double>(net.sim.events_run() - events0), Counter::kIsRate);
  state.counters["msgs_per_iter"] = static_cast<double>(expected);
}

void unicast(benchmark::State& state) {
  Network net("fat-tree:2:36");
  const auto n = static_cast<uint32_t>(net.hosts.size());
  // A fixed random derangement: nobody sends to itself.
  std::vector<uint32_t> partner(n);
  std::iota(partner.begin(), partner.end(), 0u);
  sim::Rng rng(42);
  for (uint32_t i = n - 1; i > 0; --i) std::swap(partner[i], partner[rng.below(i + 1u)]);
  for (uint32_t i = 0; i < n; ++i)
    if (partner[i] == i) std::swap(partner[i], partner[(i + 1) % n]);
  Traffic traffic(net.sim, kUnicastPackets);
  for (uint32_t i = 0; i < n; ++i) {
    UdSend s;
    s.dlid = net.hosts[partner[i]]->port(1).lid;
    s.dest_qp = net.qpns[partner[i]];
    s.qkey = kQkey;
    s.payload = kPayload;
    traffic.add(*net.hosts[i], net.qpns[i], s);
  }
  run(state, net, traffic, uint64_t{n} * kUnicastPackets);
}

void multicast(benchmark::State& state) {
  Network net("fat-tree:2:36");
  const auto n = static_cast<uint32_t>(net.hosts.size());
  net.program_tree(kMlid);
  const std::array<uint8_t, 16> mgid = wire::Gid::parse("ff12:601b:ffff::1").value().raw;
  for (uint32_t i = 0; i < n; ++i)
    if (net.hosts[i]->attach_mcast(net.qpns[i], mgid, kMlid) != 0) {
      state.SkipWithError("attach_mcast failed");
      return;
    }
  Traffic traffic(net.sim, kMcastPackets);
  for (uint32_t k = 0; k < kMcastSenders; ++k) {
    const uint32_t i = k * n / kMcastSenders;  // senders on different leaves
    UdSend s;
    s.dlid = kMlid;
    s.dest_qp = 0xFFFFFF;
    s.qkey = kQkey;
    s.global = true;
    s.dgid = mgid;
    s.payload = kPayload;
    traffic.add(*net.hosts[i], net.qpns[i], s);
  }
  // Every QP gets every packet: the others over the wire, the sender's own
  // by loopback (not blocked).
  run(state, net, traffic, uint64_t{kMcastSenders} * kMcastPackets * n);
}

BENCHMARK(unicast)->Name("forwarding/unicast/fat-tree:2:36")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(multicast)->Name("forwarding/multicast/fat-tree:2:36")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ibfab::bench
