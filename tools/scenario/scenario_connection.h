#pragma once
// One reliable connection (RC) between two hosts of a scenario, as two
// rdma_cm applications hold one once REQ, REP and RTU have passed (the CM
// exchange itself is not simulated: the QPs are connected directly).
// Each end has a PD, one BufferMemory registered whole (local write,
// remote write, remote read) and an RC QP on port 1, brought
// RESET -> INIT -> RTR -> RTS with the attributes ibfab's rdma_cm gives a
// QP (api/server/kernel/rdma_cm_connected.cpp): path MTU the smaller of
// the two ports' active MTUs, DLID the peer port's LID, the ACK timeout
// cm.c's cm_ack_timeout gives for the SA's packet lifetime, retry and RNR
// retry 7, min RNR timer 0, 16 reads outstanding each way, PSNs drawn per
// QP. Each end keeps its receives posted (kDepth of them, fewer for
// large messages: see Memory), each reposted as it completes.
//
// A post is what a verbs user does with `count` work requests of one
// opcode, all signalled: at most the end's window outstanding on its send
// queue (kDepth, fewer for large messages), the rest posted (in order,
// after any earlier post's) as completions free room. Message i of a post
// carries payload_byte(i, k) (a big-endian sequence number i, then
// (i*7 + k) & 0xff); a write lands in the peer's memory at a slot of its
// own; a read reads the peer's read area (read_byte) into the poster's
// memory; send-imm and write-imm carry imm + i. Every byte a message is
// meant to place is checked where it landed (the receive buffer at its
// completion, a write's target and a read's destination at the send
// completion); buffers are poisoned before each use, so data that never
// came does not pass. Everything the ends observe (the connection made
// and closed, each completion's status, opcode, flags, byte_len and
// immediate data, and each data check) is folded into the run's digest.
//
// Memory: each end holds a ring of buffers for the messages it posts (its
// window), one for the sends and one for the writes the peer posts, and
// the peer's largest read, sized from EndSizes when the connection is
// made: a ring has kDepth buffers, or as many as fit in 4 MiB (at least
// 4). Nothing is allocated per message.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabric/model/hca.h"
#include "fabric/model/host_memory.h"
#include "sim/time.h"
#include "tools/scenario/scenario.h"

namespace ibfab::scenario {

// The buffers one end needs, from the posts it and its peer make (0: none).
struct EndSizes {
  uint32_t out = 0;       // largest message it posts: a send's or write's source, a read's destination
  uint32_t recv = 0;      // largest send (or send-imm) the peer posts: each receive buffer
  uint32_t write_in = 0;  // largest write (or write-imm) the peer posts: each target slot
  uint32_t read_in = 0;   // largest read the peer posts: its read area
};

// What came of one post: counts of its completions, and the first problem.
struct PostOutcome {
  uint32_t count = 0;        // work requests of the post
  uint32_t completions = 0;  // send completions so far (any status)
  uint32_t success = 0;
  uint32_t flushed = 0;      // WR_FLUSH_ERR on a connection the scenario closed
  uint32_t receives = 0;     // the peer's receive completions for the post (send, send-imm, write-imm)
  bool data_intact = true;   // every message checked arrived as sent
  std::string problem;       // the first completion or data check that failed ("" if none)
  bool finished = false;     // false: the run ended before the last completion
  sim::Time posted, last;    // when posted; when its last completion came
  bool failed() const { return !problem.empty() || !finished; }
};

// The byte at offset k of message `seq`, and at offset k of an end's read area.
uint8_t payload_byte(uint32_t seq, uint64_t k);
uint8_t read_byte(uint64_t k);

class ScenarioConnection {
 public:
  static constexpr uint32_t kDepth = 64;  // each end's send and receive queues
  static constexpr uint8_t kCaAckDelay = 16;  // ibv_device_attr.local_ca_ack_delay, as the served libibverbs gives it
  static constexpr uint8_t kRdAtomic = 16;    // initiator depth and responder resources (the device's maximum,
                                              // what rdma_connect gives without conn_param)
  using Done = std::function<void(const PostOutcome&)>;

  // "" when `h` can take part in a connection now (port 1 Active, with a
  // LID), else why not, naming the host.
  static std::string not_ready(const fabric::Hca& h);
  // End 0 on `a` (the host that connects), end 1 on `b`; both not_ready()
  // == "". `serial` tells the ends' memory apart (addresses, and which
  // connection the digest's records belong to).
  ScenarioConnection(fabric::Hca& a, fabric::Hca& b, const std::array<EndSizes, 2>& sizes, uint32_t serial);
  ~ScenarioConnection();
  ScenarioConnection(const ScenarioConnection&) = delete;
  ScenarioConnection& operator=(const ScenarioConnection&) = delete;

  // End `end` posts spec.count work requests of spec.op, spec.size bytes
  // each (at most the sizes the connection was made for); `done` is called
  // once, when the last completion of the post has come (and, for a post
  // that makes receives, every receive of its messages that succeeded), or
  // from end_of_run(). The outcome's flushes count as flushed, not as a
  // problem, only while the connection is closed.
  void post(int end, const ConnSpec& spec, Done done);
  // rdma_disconnect by one end and the same by the other on hearing
  // DISCONNECTED: both QPs to ERR; what is queued or posted later flushes.
  void disconnect();
  bool closed() const { return closed_; }
  // Reports every post not finished (finished = false).
  void end_of_run();

  const fabric::Hca& hca(int end) const { return *ends_[end]->hca; }
  uint32_t qpn(int end) const { return ends_[end]->qpn; }
  uint8_t path_mtu() const { return path_mtu_; }
  // The ends' memory, for tests that corrupt it.
  fabric::BufferMemory& memory(int end) { return *ends_[end]->mem; }
  // Where end `end`'s n-th work request (counted from the connection's
  // start) takes its source or destination, in memory(end).bytes().
  uint64_t out_offset(int end, uint64_t n) const {
    const End& e = *ends_[end];
    return e.out_at + (n % e.window) * e.sizes.out;
  }
  // The read area's offset in memory(end).bytes(); read n reads it from byte
  // 8 * (n % kDepth).
  uint64_t read_area_offset(int end) const { return ends_[end]->read_at; }

 private:
  struct Job {
    ConnSpec spec;
    int end = 0;
    uint64_t serial = 0;  // unique per post; 0 while the slot is free
    uint32_t next = 0;    // work requests posted so far
    Done done;
    PostOutcome out;
  };
  struct Wr {  // an outstanding work request of an end's send queue
    uint32_t job = 0;
    uint32_t i = 0;  // its message number in the post
  };
  struct Due {  // a message the peer posted that takes one of this end's receives
    uint32_t job = 0;
    uint64_t serial = 0;
    uint32_t i = 0;
  };
  struct End : fabric::QpEndpoint {
    ScenarioConnection* conn = nullptr;
    int index = 0;
    fabric::Hca* hca = nullptr;
    EndSizes sizes;
    uint32_t window = kDepth;    // work requests outstanding at most: its buffers for them
    uint32_t receives = kDepth;  // receives posted
    uint32_t pd = 0, key = 0, qpn = 0;
    uint32_t psn = 0;  // its first send PSN
    std::unique_ptr<fabric::BufferMemory> mem;
    uint64_t out_at = 0, recv_at = 0, write_at = 0, read_at = 0;  // offsets in mem
    std::array<Wr, kDepth> ring{};  // by send queue number % kDepth
    uint64_t posted = 0, completed = 0;  // send queue numbers
    std::deque<uint32_t> waiting;  // jobs with work requests not yet posted, in post order
    std::deque<Due> due;           // receives the peer's messages will take, in order
    bool pump_scheduled = false;
    void on_send_completion(const fabric::WorkCompletion& wc) override { conn->sent(*this, wc); }
    void on_recv_completion(const fabric::WorkCompletion& wc) override { conn->received(*this, wc); }
  };

  // peer_window: how many writes the peer has outstanding at most.
  void make_end(int i, fabric::Hca& h, const EndSizes& sizes, uint32_t peer_window, uint32_t serial);
  void bring_up(End& e, const End& peer);
  void post_receive(End& e, uint64_t slot);
  void pump(End& e);  // posts while the send queue has room
  void post_one(End& e, Job& job);
  void sent(End& e, const fabric::WorkCompletion& wc);
  void received(End& e, const fabric::WorkCompletion& wc);
  // The first differing byte of [offset, offset + n) of e's memory, or -1.
  template <typename Want>
  int64_t mismatch(End& e, uint64_t offset, uint64_t n, Want want) const;
  void problem(Job& job, const std::string& what);
  void maybe_done(uint32_t slot);  // finishes the post if its last completion has come
  void finish(uint32_t slot);      // reports the post and frees its slot

  std::array<std::unique_ptr<End>, 2> ends_;
  uint8_t path_mtu_ = 5;
  bool closed_ = false;
  std::vector<Job> jobs_;
  std::vector<uint32_t> free_jobs_;
  uint64_t next_serial_ = 1;
};

}  // namespace ibfab::scenario
