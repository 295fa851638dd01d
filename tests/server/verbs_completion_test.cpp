// When the engine writes a send's completion: once the message has left
// the HCA's port in simulated time, as hardware writes it, and in posting
// order whatever the status. The VerbsService runs on a fabric configured
// by hand, with no engine thread and no wall clock, so every figure is
// exact: a 4xEDR link (100 Gb/s of data) serialises a byte in 80 ps.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "api/client/shared_memory.h"
#include "api/client/verbs_protocol.h"
#include "api/client/verbs_rings.h"
#include "api/server/verbs_service.h"
#include "fabric/model/fabric.h"
#include "fabric/model/hca.h"
#include "fabric/topology/topology_spec.h"
#include "sim/simulator.h"
#include "tests/fabric/model/hand_config.h"

namespace ibfab::api {
namespace {

using rings::Cqe;
using rings::CqRing;
using rings::QpRings;
using rings::SendWqe;

constexpr uint32_t kDepth = 64;
constexpr uint32_t kSqSlot = sizeof(SendWqe) + rings::kMaxUdPayload;
constexpr uint32_t kRqSlot = rings::kGrhBytes + rings::kMaxUdPayload;

// A request as it comes off the socket: header, then body.
template <class T>
std::vector<uint8_t> message(MsgType type, const T& body) {
  MsgHeader h;
  h.type = static_cast<uint16_t>(type);
  h.length = sizeof body;
  std::vector<uint8_t> m(sizeof h + sizeof body);
  std::memcpy(m.data(), &h, sizeof h);
  std::memcpy(m.data() + sizeof h, &body, sizeof body);
  return m;
}

class VerbsCompletion : public ::testing::Test {
 protected:
  VerbsCompletion() : topo_(topo::load_topology("line:2:1")), fabric_(sim_, topo_) {
    fabric::testing::configure_by_hand(fabric_);
    hca_ = fabric_.find_hca("H1");
    int pair[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
    ::close(pair[1]);
    context_ = service_.open(*hca_, pair[0]);
    EXPECT_EQ(cq_mem_.create(CqRing::bytes(kDepth), "completion-cq"), 0);
    CreateCq c;
    c.depth = kDepth;
    cq_ = static_cast<uint32_t>(request(MsgType::CreateCq, c, cq_mem_.fd()));
    EXPECT_EQ(qp_mem_.create(QpRings::bytes(kDepth, kSqSlot, kDepth, kRqSlot), "completion-qp"), 0);
    CreateQp q;
    q.send_cq = q.recv_cq = cq_;
    q.sq_depth = q.rq_depth = kDepth;
    q.sq_slot = kSqSlot;
    q.rq_slot = kRqSlot;
    q.qp_type = IBV_QPT_UD;
    qpn_ = static_cast<uint32_t>(request(MsgType::CreateQp, q, qp_mem_.fd()));
    for (uint8_t state : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) move_to(state);
  }
  ~VerbsCompletion() override { service_.close(context_); }

  template <class T>
  int64_t request(MsgType type, const T& body, int fd = -1) {
    ReceivedFds fds;
    if (fd >= 0) {
      fds.fd[0] = ::dup(fd);
      fds.count = 1;
    }
    return service_.handle(*context_, type, message(type, body), fds);
  }
  void move_to(uint8_t state) {
    ModifyQp m;
    m.qp_num = qpn_;
    m.state = state;
    ASSERT_EQ(request(MsgType::ModifyQp, m), 0);
  }
  // Posts a send of `length` bytes to H2's LID as the client library does;
  // `status` is what the client found wrong with it, if anything.
  void post(uint64_t wr_id, uint32_t length, uint8_t status = IBV_WC_SUCCESS) {
    auto* r = qp_mem_.as<QpRings>();
    const uint32_t head = r->sq_head.value.load();
    SendWqe w;
    w.wr_id = wr_id;
    w.length = length;
    w.remote_qpn = 0x50;
    w.dlid = fabric_.find_hca("H2")->port(1).lid;
    w.flags = SendWqe::kSignaled;
    w.status = status;
    std::memcpy(r->send_slot(head, kDepth, kSqSlot), &w, sizeof w);
    r->sq_head.value.store(head + 1);
  }
  // The completions written so far (wr_id, status).
  std::vector<std::pair<uint64_t, uint8_t>> completions() {
    auto* cq = cq_mem_.as<CqRing>();
    std::vector<std::pair<uint64_t, uint8_t>> out;
    for (uint32_t i = 0; i < cq->head.value.load(); ++i)
      out.emplace_back(cq->entries()[i].wr_id, cq->entries()[i].status);
    return out;
  }
  // Serialisation of one UD send of `payload` bytes with no GRH: LRH 8,
  // BTH 12, DETH 8, ICRC 4, VCRC 2; 80 ps a byte on 4xEDR.
  static sim::Time on_the_wire(uint32_t payload) {
    const int64_t padded = (payload + 3) & ~3u;
    return sim::Time::ps((8 + 12 + 8 + padded + 4 + 2) * 80);
  }

  sim::Simulator sim_;
  topo::Topology topo_;
  fabric::Fabric fabric_;
  fabric::Hca* hca_ = nullptr;
  VerbsService service_;
  VerbsContext* context_ = nullptr;
  SharedMemory cq_mem_, qp_mem_;
  uint32_t cq_ = 0, qpn_ = 0;
};

TEST_F(VerbsCompletion, TheLinkIsFourLanesOfEdr) {
  EXPECT_EQ(hca_->port(1).link()->rate().str(), "4xEDR");
  EXPECT_EQ(hca_->port(1).state(), fabric::PortState::Active);
}

TEST_F(VerbsCompletion, ASendCompletesWhenItHasLeftThePort) {
  post(1, 4000);
  ASSERT_TRUE(service_.run_rings());
  EXPECT_TRUE(completions().empty()) << "taken from the ring, but still being serialised";
  const sim::Time left = on_the_wire(4000);
  sim_.run_until(left - sim::Time::ps(1));
  EXPECT_TRUE(completions().empty()) << "one picosecond before its last byte leaves";
  sim_.run_until(left);
  ASSERT_EQ(completions().size(), 1u);
  EXPECT_EQ(completions()[0], (std::pair<uint64_t, uint8_t>{1, IBV_WC_SUCCESS}));
}

// A burst: no send completes before its own message has left, and all
// have completed, in posting order, once the last has left. (The engine
// writes a burst's completions when its first and its last have left.)
TEST_F(VerbsCompletion, BackToBackSendsNeverCompleteBeforeTheyLeave) {
  constexpr int kSends = 5;
  for (uint64_t i = 0; i < kSends; ++i) post(i, 1000);
  service_.run_rings();
  for (int i = 0; i < kSends; ++i) {
    const sim::Time left = sim::Time::ps(on_the_wire(1000).ps() * (i + 1));
    sim_.run_until(left - sim::Time::ps(1));
    EXPECT_LE(completions().size(), static_cast<std::size_t>(i)) << "send " << i << " is not out yet";
  }
  sim_.run_until(sim::Time::ps(on_the_wire(1000).ps() * kSends));
  ASSERT_EQ(completions().size(), static_cast<std::size_t>(kSends));
  for (uint64_t i = 0; i < kSends; ++i) EXPECT_EQ(completions()[i].first, i);
  sim_.run();
  EXPECT_EQ(completions().size(), static_cast<std::size_t>(kSends)) << "each written once";
}

// An error the client found (here a bad lkey) completes at once in the
// hardware's sense, but never before the sends posted ahead of it; the
// QP then goes to the error state and what follows is flushed, in order.
TEST_F(VerbsCompletion, ErrorsAndFlushesKeepPostingOrder) {
  post(1, 2000);
  post(2, 100, IBV_WC_LOC_PROT_ERR);
  post(3, 100);
  service_.run_rings();
  service_.run_rings();  // the QP is in error: the third is flushed
  EXPECT_TRUE(completions().empty());
  sim_.run_until(on_the_wire(2000));
  const std::vector<std::pair<uint64_t, uint8_t>> want = {
      {1, IBV_WC_SUCCESS}, {2, IBV_WC_LOC_PROT_ERR}, {3, IBV_WC_WR_FLUSH_ERR}};
  EXPECT_EQ(completions(), want);
  EXPECT_EQ(qp_mem_.as<QpRings>()->state.value.load(), static_cast<uint32_t>(IBV_QPS_ERR));
}

// A send whose QP is destroyed before it has left completes nowhere (the
// CQ's ring is untouched), and the engine holds nothing for it.
TEST_F(VerbsCompletion, ADestroyedQpsPendingCompletionsGoWithIt) {
  post(1, 4000);
  service_.run_rings();
  DestroyObject d{qpn_};
  ASSERT_EQ(request(MsgType::DestroyQp, d), 0);
  sim_.run();
  EXPECT_TRUE(completions().empty());
  EXPECT_EQ(sim_.events_pending(), 0u);
}

}  // namespace
}  // namespace ibfab::api
