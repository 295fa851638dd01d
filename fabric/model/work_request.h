#pragma once
// Work requests and completions as an HCA's queues hold them, for the
// connected transports (RC, UC, XRC). The numeric values are rdma-core's
// (enum ibv_wr_opcode, ibv_send_flags, ibv_wc_status, ibv_wc_opcode,
// ibv_wc_flags, ibv_access_flags); the api layer static_asserts that they
// agree, so the model itself needs no rdma-core header.
#include <cstdint>
#include <span>

namespace ibfab::fabric {

namespace wr_opcode {  // enum ibv_wr_opcode
inline constexpr uint8_t kRdmaWrite = 0;
inline constexpr uint8_t kRdmaWriteWithImm = 1;
inline constexpr uint8_t kSend = 2;
inline constexpr uint8_t kSendWithImm = 3;
inline constexpr uint8_t kRdmaRead = 4;
inline constexpr uint8_t kAtomicCmpAndSwp = 5;
inline constexpr uint8_t kAtomicFetchAndAdd = 6;
inline constexpr uint8_t kLocalInv = 7;
inline constexpr uint8_t kBindMw = 8;
inline constexpr uint8_t kSendWithInv = 9;
}  // namespace wr_opcode

namespace send_flag {  // enum ibv_send_flags
inline constexpr uint32_t kFence = 1;
inline constexpr uint32_t kSignaled = 2;
inline constexpr uint32_t kSolicited = 4;
inline constexpr uint32_t kInline = 8;
}  // namespace send_flag

namespace wc_status {  // enum ibv_wc_status
inline constexpr uint8_t kSuccess = 0;
inline constexpr uint8_t kLocLenErr = 1;
inline constexpr uint8_t kLocQpOpErr = 2;
inline constexpr uint8_t kLocProtErr = 4;
inline constexpr uint8_t kWrFlushErr = 5;
inline constexpr uint8_t kMwBindErr = 6;
inline constexpr uint8_t kBadRespErr = 7;
inline constexpr uint8_t kLocAccessErr = 8;
inline constexpr uint8_t kRemInvReqErr = 9;
inline constexpr uint8_t kRemAccessErr = 10;
inline constexpr uint8_t kRemOpErr = 11;
inline constexpr uint8_t kRetryExcErr = 12;
inline constexpr uint8_t kRnrRetryExcErr = 13;
inline constexpr uint8_t kFatalErr = 19;
inline constexpr uint8_t kGeneralErr = 21;
}  // namespace wc_status

namespace wc_opcode {  // enum ibv_wc_opcode
inline constexpr uint8_t kSend = 0;
inline constexpr uint8_t kRdmaWrite = 1;
inline constexpr uint8_t kRdmaRead = 2;
inline constexpr uint8_t kCompSwap = 3;
inline constexpr uint8_t kFetchAdd = 4;
inline constexpr uint8_t kBindMw = 5;
inline constexpr uint8_t kLocalInv = 6;
inline constexpr uint8_t kRecv = 1u << 7;
inline constexpr uint8_t kRecvRdmaWithImm = kRecv + 1;
}  // namespace wc_opcode

namespace wc_flag {  // enum ibv_wc_flags
inline constexpr uint8_t kGrh = 1;
inline constexpr uint8_t kWithImm = 2;
inline constexpr uint8_t kWithInv = 8;
}  // namespace wc_flag

namespace access {  // enum ibv_access_flags
inline constexpr uint32_t kLocalWrite = 1;
inline constexpr uint32_t kRemoteWrite = 2;
inline constexpr uint32_t kRemoteRead = 4;
inline constexpr uint32_t kRemoteAtomic = 8;
inline constexpr uint32_t kMwBind = 16;
inline constexpr uint32_t kZeroBased = 32;
}  // namespace access

// One scatter/gather element: `length` bytes at `addr` through key `lkey`.
struct Sge {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

// What an IBV_WR_BIND_MW binds (ibv_mw_bind_info, with the window's key).
// It happens when the WQE is executed, in order with the QP's other WQEs.
struct MwBind {
  uint32_t mw_rkey = 0;  // the window's current rkey
  uint8_t new_tag = 0;   // type 2: the consumer's new key tag (ibv_inc_rkey); type 1: ignored
  uint32_t mr_lkey = 0;
  uint64_t addr = 0;
  uint64_t length = 0;
  uint32_t access = 0;   // access:: remote bits (and kZeroBased)
};

// A send work request. Its SGEs are read when its packets are built, not
// when it is posted, as hardware reads them by DMA. With send_flag::kInline
// the bytes are copied at post time: whoever holds them (the api layer)
// points `inline_data` at them, and the model copies them into the queue;
// they then stand for the SGEs.
struct SendWr {
  uint64_t wr_id = 0;
  uint8_t opcode = wr_opcode::kSend;
  uint32_t flags = 0;            // send_flag bits
  uint32_t imm_data = 0;         // network order, as in ibv_send_wr (WITH_IMM)
  uint32_t invalidate_rkey = 0;  // SEND_WITH_INV, LOCAL_INV
  uint64_t remote_addr = 0;      // RDMA and atomics
  uint32_t rkey = 0;
  uint64_t compare_add = 0;      // atomics
  uint64_t swap = 0;
  uint32_t num_sge = 0;          // SGEs, copied into the queue's storage at post
  const Sge* sge = nullptr;
  std::span<const uint8_t> inline_data;  // kInline: the bytes, copied at post
  MwBind bind;                   // BIND_MW
  uint32_t remote_srqn = 0;      // XRC_SEND: the target's XRC SRQ number (XRCETH)
};

// A receive work request: up to the queue's max_sge SGEs.
struct RecvWr {
  uint64_t wr_id = 0;
  uint32_t num_sge = 0;
  const Sge* sge = nullptr;
};

// One completion, as ibv_poll_cq reports it.
struct WorkCompletion {
  uint64_t wr_id = 0;
  uint8_t status = wc_status::kSuccess;
  uint8_t opcode = wc_opcode::kSend;
  uint8_t wc_flags = 0;       // wc_flag bits
  uint8_t sl = 0;
  uint32_t byte_len = 0;
  uint32_t imm_data = 0;      // network order (kWithImm); the invalidated rkey (kWithInv)
  uint32_t qp_num = 0;
  uint32_t src_qp = 0;
  uint32_t vendor_err = 0;
  uint16_t slid = 0;
  uint16_t pkey_index = 0;
  uint8_t dlid_path_bits = 0;
  bool solicited = false;     // receives: the message asked for a solicited event (BTH SE)
};

}  // namespace ibfab::fabric
