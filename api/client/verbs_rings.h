#pragma once
// The verbs data path between a client and the engine: rings in shared
// memory (a memfd each side maps), so that posting and polling take no
// system call and no round trip.
//
//   send queue     client -> engine. UD: SendWqe + payload per slot; the
//                  client gathers the payload at post time (it checks the
//                  SGEs against its copy of the MRs). RC and UC:
//                  ConnectedWqe + its SGEs (or its inline bytes) per slot;
//                  the engine posts it to the HCA model, whose DMA reads
//                  the application's memory through the MemoryTable when
//                  the packets are built.
//   receive queue  UD: the client keeps its posted WRs (wr_id and SGEs) to
//                  itself and only counts them here; the engine fills slot
//                  (n mod depth) with the GRH and payload of the n-th
//                  message, then posts a CQE. The client scatters the slot
//                  into the n-th WR's SGEs when it polls that CQE.
//                  RC and UC: RecvWqe + SGEs per slot, which the engine
//                  posts to the model's receive queue; data lands in the
//                  application's memory.
//   CQ             engine -> client: Cqe per slot.
//
// Each ring index is a counter written by one side only (release) and read
// by the other (acquire); both are free-running uint32_t, so head - tail is
// the fill even across wrap-around. Depths are powers of two.
//
// Waking the engine: it sets EnginePage::sleeping before it waits; a client
// that posts work then writes the doorbell eventfd (unless the engine
// yields and the client, in its process, moved the work itself). A QP's receives are
// not such work unless the QP is in error (to be flushed): the engine takes
// them at the start of each round, before it moves any packet. While the
// engine runs, posting makes no system call at all.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ibfab::api::rings {

// A counter on a cache line of its own.
struct alignas(64) Counter {
  std::atomic<uint32_t> value{0};
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared-memory counters must be lock free");
struct alignas(64) Counter64 {
  std::atomic<uint64_t> value{0};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared-memory counters must be lock free");

inline constexpr uint32_t kGrhBytes = 40;
inline constexpr uint32_t kMaxUdPayload = 4096;  // the largest IB MTU
inline constexpr uint32_t kMaxDepth = 1u << 15;  // per ring

struct EnginePage {
  // Non-zero while the engine waits for input: kSleeping, or kYielding
  // when it also leaves its work to the threads of its own process that
  // post and poll (api::Engine::drive: it was descheduled, cores are scarce).
  Counter sleeping;
  static constexpr uint32_t kSleeping = 1, kYielding = 2;
  // Raised by every client after each post that rings (or would ring) the
  // doorbell, after the WQEs are in their rings: while it has not moved,
  // no ring has new sends, and the engine need not walk a process's QPs to
  // keep its program order.
  Counter64 posts;
};

// One send work request, as the client hands it to the engine.
struct SendWqe {
  enum Flags : uint8_t { kSignaled = 1, kSolicited = 2, kGlobal = 4, kImmediate = 8 };
  uint64_t wr_id = 0;
  uint32_t length = 0;       // payload bytes after the WQE
  uint32_t imm_data = 0;     // network order, as in ibv_send_wr
  uint32_t remote_qpn = 0;
  uint32_t remote_qkey = 0;  // already resolved (high bit: the QP's own)
  uint32_t flow_label = 0;
  uint16_t dlid = 0;
  uint8_t flags = 0;
  uint8_t status = 0;        // IBV_WC_SUCCESS, or the error the client found
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
  uint8_t reserved[3] = {};
  uint64_t stamp = 0;        // program_clock_ns() when it was posted, while QpRings::stamped; else 0
  uint8_t dgid[16] = {};
};
static_assert(sizeof(SendWqe) == 64);

// One send work request of an RC or UC QP; num_sge RingSges follow it in
// its slot, or inline_length bytes when kInline. LOCAL_INV carries the rkey
// to invalidate in imm_data (network order), as SEND_WITH_INV does, and no
// SGEs. BIND_MW carries no SGEs; its ibv_mw_bind_info is: rkey the
// window's current rkey, imm_data the new one (network order), remote_addr
// and compare_add the range bound, swap the region's lkey (low 32 bits) and
// the window's access flags (high 32).
struct RingSge {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};
static_assert(sizeof(RingSge) == 16);

struct ConnectedWqe {
  uint64_t wr_id = 0;
  uint64_t remote_addr = 0;
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  uint32_t imm_data = 0;     // network order; the rkey to invalidate for SEND_WITH_INV
  uint32_t rkey = 0;
  uint32_t send_flags = 0;   // ibv_send_flags
  uint32_t inline_length = 0;
  uint16_t num_sge = 0;
  uint8_t opcode = 0;        // enum ibv_wr_opcode
  uint8_t reserved = 0;
  uint32_t remote_srqn = 0;  // XRC_SEND: the target's XRC SRQ number
  uint64_t stamp = 0;        // as SendWqe::stamp
};
static_assert(sizeof(ConnectedWqe) == 64);

// One receive work request of an RC or UC QP; num_sge RingSges follow it.
struct RecvWqe {
  uint64_t wr_id = 0;
  uint32_t num_sge = 0;
  uint32_t reserved = 0;
};
static_assert(sizeof(RecvWqe) == 16);

// One completion.
struct Cqe {
  // kXrcSrq: a receive an XRC SRQ took (whichever target QP it came
  // through); qp_handle is then the SRQ's user handle (CreateSrq).
  enum Flags : uint8_t { kGrh = 1, kImmediate = 2, kReceive = 4, kConnected = 8, kInvalidate = 16, kXrcSrq = 32 };
  uint64_t wr_id = 0;      // send completions
  uint64_t qp_handle = 0;  // the QP's user handle (CreateQp)
  uint32_t qp_num = 0;
  uint32_t byte_len = 0;   // receive: GRH (40) + payload
  uint32_t imm_data = 0;   // network order
  uint32_t src_qp = 0;
  uint16_t slid = 0;
  uint16_t pkey_index = 0;
  uint8_t status = 0;      // enum ibv_wc_status
  uint8_t flags = 0;
  uint8_t sl = 0;
  uint8_t dlid_path_bits = 0;
  uint8_t opcode = 0;        // kConnected: enum ibv_wc_opcode
  uint8_t reserved = 0;
  uint16_t vendor_err = 0;
  uint32_t wqe_index = 0;    // kConnected send completions: the send ring counter of the WQE + 1
  uint8_t reserved2[12] = {};
};
static_assert(sizeof(Cqe) == 64);

struct CqRing {
  Counter head;     // engine: CQEs written
  Counter tail;     // client: CQEs consumed
  Counter armed;    // client: kArmNext or kArmSolicited; the engine clears it when it notifies
  Counter overrun;  // engine: non-zero once a completion found the ring full
  static constexpr uint32_t kArmNext = 1, kArmSolicited = 2;
  static std::size_t bytes(uint32_t depth) { return sizeof(CqRing) + std::size_t{depth} * sizeof(Cqe); }
  Cqe* entries() { return reinterpret_cast<Cqe*>(this + 1); }
};

struct QpRings {
  Counter sq_head;    // client: WQEs posted
  Counter sq_tail;    // engine: WQEs taken
  Counter rq_posted;  // client: receives posted
  Counter rq_taken;   // engine: receives filled or flushed
  Counter state;      // engine: the QP's ibv_qp_state as the engine last set it (IBV_QPS_ERR after an error)
  Counter stamped;    // engine: non-zero while posts must carry SendWqe::stamp (the process has a MAD port)

  static std::size_t bytes(uint32_t sq_depth, uint32_t sq_slot, uint32_t rq_depth, uint32_t rq_slot) {
    return sizeof(QpRings) + std::size_t{sq_depth} * sq_slot + std::size_t{rq_depth} * rq_slot;
  }
  uint8_t* send_slot(uint32_t index, uint32_t sq_depth, uint32_t sq_slot) {
    return reinterpret_cast<uint8_t*>(this + 1) + std::size_t{index & (sq_depth - 1)} * sq_slot;
  }
  uint8_t* recv_slot(uint32_t index, uint32_t sq_depth, uint32_t sq_slot, uint32_t rq_depth, uint32_t rq_slot) {
    return reinterpret_cast<uint8_t*>(this + 1) + std::size_t{sq_depth} * sq_slot +
           std::size_t{index & (rq_depth - 1)} * rq_slot;
  }
};

// The smallest power of two >= n (n >= 1).
constexpr uint32_t ring_depth(uint32_t n) {
  uint32_t d = 1;
  while (d < n) d <<= 1;
  return d;
}

}  // namespace ibfab::api::rings
