#pragma once
// Test helper for the connected transports: two hosts of a fat-tree:2:4
// (H1 and H2 under one leaf switch, or H1 and H8 across the spines),
// configured by hand, each with a BufferMemory registered as one region,
// and a connected QP on each, brought to RTS and connected to the other.
// Completions and events are recorded in order.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabric/model/hca.h"
#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::fabric::testing {

struct Recorder : QpEndpoint {
  sim::Simulator* sim = nullptr;  // stamps each completion when set
  std::vector<WorkCompletion> sends, recvs;
  std::vector<sim::Time> send_times, recv_times;
  std::vector<uint8_t> events;
  std::function<void()> at_recv;  // called as each receive completion is made, when set
  void on_send_completion(const WorkCompletion& wc) override {
    sends.push_back(wc);
    if (sim) send_times.push_back(sim->now());
  }
  void on_recv_completion(const WorkCompletion& wc) override {
    if (at_recv) at_recv();
    recvs.push_back(wc);
    if (sim) recv_times.push_back(sim->now());
  }
  void on_qp_event(uint8_t e) override { events.push_back(e); }
};

inline constexpr uint64_t kMemSize = 4u << 20;
inline constexpr uint32_t kAllAccess =
    access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;

// One end: an HCA, a PD, its memory registered whole, a QP.
struct Host {
  Hca* hca = nullptr;
  uint32_t pd = 0;
  std::unique_ptr<BufferMemory> mem;
  uint32_t key = 0;  // lkey == rkey of the whole memory
  Recorder rec;
  uint32_t qpn = 0;

  uint64_t base() const { return mem->base(); }
  uint8_t* at(uint64_t offset) { return mem->bytes().data() + offset; }
  std::string read(uint64_t offset, std::size_t n) { return std::string(reinterpret_cast<char*>(at(offset)), n); }
};

struct QpOptions {
  Transport transport = Transport::kRc;
  QpCaps caps{64, 64, 4, 4, 256};
  uint8_t path_mtu = 3;  // 1024 bytes
  uint8_t timeout = 14;  // 67 ms
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 1;  // 10 us
  uint8_t max_rd_atomic = 16;
  uint8_t max_dest_rd_atomic = 16;
  uint32_t access = kAllAccess;
  uint32_t srqn = 0;
  bool sq_sig_all = false;
};

class RcFixture : public ::testing::Test {
 public:
  RcFixture() : topo(topo::load_topology("fat-tree:2:4")), fabric(sim, topo) { configure_by_hand(fabric); }

  Hca& h(int i) { return *fabric.find_hca("H" + std::to_string(i)); }

  void make_host(Host& x, int index, uint64_t base) {
    x.hca = &h(index);
    x.rec.sim = &sim;
    x.pd = x.hca->alloc_pd();
    x.mem = std::make_unique<BufferMemory>(base, kMemSize);
    x.key = x.hca->memory().register_region(x.pd, *x.mem, base, kMemSize, base, kAllAccess);
  }

  void create_qp(Host& x, const QpOptions& o) {
    x.qpn = x.hca->create_connected_qp(o.transport, x.pd, o.caps, o.srqn, &x.rec, o.sq_sig_all);
    ASSERT_NE(x.qpn, 0u);
  }

  // RESET -> INIT -> RTR -> RTS, connected to `peer`.
  void bring_up(Host& x, const Host& peer, const QpOptions& o) {
    QpAttr attr;
    attr.state = QpState::kInit;
    attr.port = 1;
    attr.pkey_index = 0;
    attr.access = o.access;
    ASSERT_EQ(x.hca->modify_qp(x.qpn, attr, qp_mask::kState | qp_mask::kPort | qp_mask::kPkeyIndex |
                                             qp_mask::kAccessFlags), 0);
    attr.state = QpState::kRtr;
    attr.path.dlid = peer.hca->port(1).lid;
    attr.path_mtu = o.path_mtu;
    attr.dest_qp_num = peer.qpn;
    attr.rq_psn = 0x00FFFFF0;  // close to the wrap: a test of more than 15 packets crosses it
    attr.max_dest_rd_atomic = o.max_dest_rd_atomic;
    attr.min_rnr_timer = o.min_rnr_timer;
    ASSERT_EQ(x.hca->modify_qp(x.qpn, attr, qp_mask::kState | qp_mask::kAv | qp_mask::kPathMtu | qp_mask::kDestQpn |
                                             qp_mask::kRqPsn | qp_mask::kMaxDestRdAtomic | qp_mask::kMinRnrTimer),
              0);
    attr.state = QpState::kRts;
    attr.sq_psn = 0x00FFFFF0;
    attr.timeout = o.timeout;
    attr.retry_cnt = o.retry_cnt;
    attr.rnr_retry = o.rnr_retry;
    attr.max_rd_atomic = o.max_rd_atomic;
    ASSERT_EQ(x.hca->modify_qp(x.qpn, attr, qp_mask::kState | qp_mask::kSqPsn | qp_mask::kTimeout |
                                             qp_mask::kRetryCnt | qp_mask::kRnrRetry | qp_mask::kMaxQpRdAtomic),
              0);
    ASSERT_EQ(x.hca->qp_state(x.qpn), QpState::kRts);
  }

  // A (on H1) and B (on H`peer`), QPs connected and at RTS.
  void connect(int peer = 2, const QpOptions& oa = {}, const QpOptions& ob = {}) {
    make_host(a, 1, 0x10000000);
    make_host(b, peer, 0x20000000);
    create_qp(a, oa);
    create_qp(b, ob);
    bring_up(a, b, oa);
    bring_up(b, a, ob);
  }

  static void fill(Host& x, uint64_t offset, std::size_t n, uint8_t seed) {
    for (std::size_t i = 0; i < n; ++i) *x.at(offset + i) = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  }

  Sge sge(const Host& x, uint64_t offset, uint32_t length) const { return Sge{x.base() + offset, length, x.key}; }

  int post_recv(Host& x, uint64_t wr_id, std::vector<Sge> sges) {
    RecvWr wr;
    wr.wr_id = wr_id;
    wr.num_sge = static_cast<uint32_t>(sges.size());
    wr.sge = sges.data();
    return x.hca->post_recv(x.qpn, wr);
  }

  int post_send(Host& x, uint64_t wr_id, uint8_t opcode, std::vector<Sge> sges, uint32_t flags = send_flag::kSignaled,
                uint64_t remote_addr = 0, uint32_t rkey = 0) {
    SendWr wr;
    wr.wr_id = wr_id;
    wr.opcode = opcode;
    wr.flags = flags;
    wr.num_sge = static_cast<uint32_t>(sges.size());
    wr.sge = sges.data();
    wr.remote_addr = remote_addr;
    wr.rkey = rkey;
    return x.hca->post_send(x.qpn, wr);
  }

  // Posts `wr` with `sges` as its SGEs.
  static int post(Host& x, SendWr wr, std::vector<Sge> sges) {
    wr.num_sge = static_cast<uint32_t>(sges.size());
    wr.sge = sges.data();
    return x.hca->post_send(x.qpn, wr);
  }

  sim::Simulator sim;
  topo::Topology topo;
  Fabric fabric;
  Host a, b;
};

}  // namespace ibfab::fabric::testing
