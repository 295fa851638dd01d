// The in-process data path when cores are scarce: a UD ping-pong between
// two hosts of the in-process fabric, each side on a thread of its own,
// while a busy process spins on every CPU this one may use. The engine's
// thread is then descheduled and stops spinning, and the application
// threads move the messages themselves while it sleeps (Engine::drive);
// a wake-up lost between them would leave a side waiting forever.
//
// Each ping carries its number; the responder checks that ping i comes
// i-th and answers with pong i, which the initiator checks likewise. The
// responder either busy-polls its CQ or sleeps on a completion channel
// (ibv_get_cq_event), which only the engine's round (on whichever thread
// runs it) can wake. Every run must end: bounded by the test's timeout,
// not by a timed assertion.
#include <cstring>
#include <ostream>
#include <string>
#include <thread>

#include "tests/api/busy_processes.h"
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

constexpr uint32_t kBytes = 64;
constexpr uint32_t kSlots = 32;  // receives kept posted on each side

enum class Responder { kPolls, kSleeps };

struct Params {
  uint32_t messages;
  Responder responder;
};

void PrintTo(const Params& p, std::ostream* os) {
  *os << p.messages << " messages, the responder " << (p.responder == Responder::kPolls ? "polling" : "sleeping");
}

std::string name_of(const ::testing::TestParamInfo<Params>& p) {
  return std::to_string(p.param.messages) + (p.param.responder == Responder::kPolls ? "_polling" : "_sleeping");
}

// One side: a Host, optionally with its CQ on a completion channel.
struct Side {
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  Host host;
  ibv_ah* ah = nullptr;
  uint32_t next_recv = 0;  // receives posted so far

  Side(int device_index, bool sleeps) : host(device_index) {
    if (!host.ok()) return;
    if (sleeps) {
      // The QP keeps the Host's CQ for sends; its receives complete on this one.
      channel = ibv_create_comp_channel(host.ctx);
      cq = ibv_create_cq(host.ctx, 256, nullptr, channel, 0);
    }
  }
  ~Side() {
    if (ah) ibv_destroy_ah(ah);
    if (cq) {  // the QP on it first
      if (host.qp) ibv_destroy_qp(host.qp);
      host.qp = nullptr;
      ibv_destroy_cq(cq);
    }
    if (channel) ibv_destroy_comp_channel(channel);
  }
  int post_recvs(uint32_t n) {
    for (uint32_t i = 0; i < n; ++i, ++next_recv)
      if (const int e = host.post_recv(next_recv, (next_recv % kSlots) * (kBytes + 40), kBytes + 40)) return e;
    return 0;
  }
  uint32_t payload(uint32_t slot) const {
    uint32_t v = 0;
    std::memcpy(&v, host.buf.data() + slot * (kBytes + 40) + 40, sizeof v);
    return v;
  }
  // Sends `value` from the send area (past the receive slots).
  int send(uint32_t remote_qpn, uint32_t value) {
    constexpr uint32_t kSendAt = kSlots * (kBytes + 40);
    std::memcpy(host.buf.data() + kSendAt, &value, sizeof value);
    return host.send(ah, remote_qpn, value, kSendAt, kBytes);
  }
};

// Waits for the next completion on `cq` by busy polling; false on a
// failed one.
bool next_completion(ibv_cq* cq, ibv_wc& wc) {
  int n;
  while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
  }
  return n == 1 && wc.status == IBV_WC_SUCCESS;
}

// The same, sleeping on `cq`'s completion channel between polls.
bool next_completion_sleeping(ibv_comp_channel* channel, ibv_cq* cq, ibv_wc& wc) {
  for (;;) {
    if (ibv_req_notify_cq(cq, 0)) return false;
    const int n = ibv_poll_cq(cq, 1, &wc);  // what came before the arming
    if (n != 0) return n == 1 && wc.status == IBV_WC_SUCCESS;
    ibv_cq* got = nullptr;
    void* context = nullptr;
    if (ibv_get_cq_event(channel, &got, &context)) return false;
    ibv_ack_cq_events(got, 1);
  }
}

class VerbsContended : public ::testing::TestWithParam<Params> {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
};

TEST_P(VerbsContended, PingPongArrivesInOrderAndEnds) {
  const Params p = GetParam();
  const bool sleeps = p.responder == Responder::kSleeps;
  Side a(0, false), b(1, sleeps);
  ASSERT_TRUE(a.host.ok() && b.host.ok());
  if (sleeps) {
    ASSERT_NE(b.cq, nullptr);
    // b's receives complete on the channel's CQ: a QP of its own on it.
    ibv_destroy_qp(b.host.qp);
    ibv_qp_init_attr qa{};
    qa.send_cq = b.host.cq;
    qa.recv_cq = b.cq;
    qa.cap.max_send_wr = qa.cap.max_recv_wr = 64;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    qa.qp_type = IBV_QPT_UD;
    ASSERT_NE(b.host.qp = ibv_create_qp(b.host.pd, &qa), nullptr);
  }
  ASSERT_EQ(a.host.to_rts(), 0);
  ASSERT_EQ(b.host.to_rts(), 0);
  ASSERT_NE(a.ah = a.host.ah_to(b.host.lid), nullptr);
  ASSERT_NE(b.ah = b.host.ah_to(a.host.lid), nullptr);
  ASSERT_EQ(a.post_recvs(kSlots), 0);
  ASSERT_EQ(b.post_recvs(kSlots), 0);
  const uint32_t a_qpn = a.host.qp->qp_num, b_qpn = b.host.qp->qp_num;

  BusyProcesses busy(BusyProcesses::cpus(), /*pinned=*/true);
  ASSERT_EQ(busy.count(), static_cast<std::size_t>(BusyProcesses::cpus()));

  // The responder: ping i in, pong i out; stops at the first wrong thing.
  std::string b_error;
  std::thread responder([&] {
    ibv_cq* recv_cq = sleeps ? b.cq : b.host.cq;
    for (uint32_t i = 0; i < p.messages; ++i) {
      ibv_wc wc{};
      const bool ok = sleeps ? next_completion_sleeping(b.channel, recv_cq, wc) : next_completion(recv_cq, wc);
      if (!ok || wc.opcode != IBV_WC_RECV || wc.wr_id != i || b.payload(i % kSlots) != i) {
        b_error = "ping " + std::to_string(i) + ": status " + std::to_string(wc.status) + ", wr_id " +
                  std::to_string(wc.wr_id) + ", payload " + std::to_string(b.payload(i % kSlots));
        return;
      }
      if (b.post_recvs(1) || b.send(a_qpn, i)) {
        b_error = "posting pong " + std::to_string(i);
        return;
      }
      if (!next_completion(b.host.cq, wc) || wc.opcode != IBV_WC_SEND || wc.wr_id != i) {
        b_error = "pong " + std::to_string(i) + "'s send completion";
        return;
      }
    }
  });
  // The initiator, on this thread: ping i out, then its send completion
  // and pong i in (on one CQ, in either order).
  uint32_t done = 0;
  for (uint32_t i = 0; i < p.messages && b_error.empty(); ++i, ++done) {
    ASSERT_EQ(a.send(b_qpn, i), 0);
    bool sent = false, answered = false;
    while (!(sent && answered)) {
      ibv_wc wc{};
      ASSERT_TRUE(next_completion(a.host.cq, wc)) << "message " << i << ": status " << wc.status;
      if (wc.opcode == IBV_WC_SEND) {
        ASSERT_FALSE(sent);
        ASSERT_EQ(wc.wr_id, i);
        sent = true;
      } else {
        ASSERT_EQ(wc.opcode, IBV_WC_RECV);
        ASSERT_EQ(wc.wr_id, i) << "pong " << i << " came " << wc.wr_id << "th";
        ASSERT_EQ(a.payload(i % kSlots), i);
        ASSERT_EQ(a.post_recvs(1), 0);
        answered = true;
      }
    }
  }
  responder.join();
  EXPECT_EQ(b_error, "");
  EXPECT_EQ(done, p.messages);
}

INSTANTIATE_TEST_SUITE_P(Scarce, VerbsContended,
                         ::testing::Values(Params{1, Responder::kPolls}, Params{16, Responder::kPolls},
                                           Params{1000, Responder::kPolls}, Params{1, Responder::kSleeps},
                                           Params{16, Responder::kSleeps}, Params{1000, Responder::kSleeps}),
                         name_of);

}  // namespace
}  // namespace ibfab::testing
