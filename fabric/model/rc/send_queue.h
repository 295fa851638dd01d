#pragma once
// A connected QP's send queue: posted WQEs in a ring sized at creation,
// each slot with room for max_send_sge SGEs and max_inline_data inline
// bytes, so that posting allocates nothing. WQEs are named by a 32-bit
// sequence number that only grows (slot = seq % depth); the queue holds
// [head, tail).
#include <cstdint>
#include <span>
#include <vector>

#include "fabric/model/work_request.h"

namespace ibfab::fabric::rc {

struct SendWqe {
  // As posted.
  uint64_t wr_id = 0;
  uint8_t opcode = 0;
  uint32_t flags = 0;
  uint32_t imm_data = 0;
  uint32_t invalidate_rkey = 0;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0;
  uint64_t swap = 0;
  MwBind bind;
  uint32_t remote_srqn = 0;  // XRC_SEND
  uint32_t num_sge = 0;
  uint32_t length = 0;  // bytes: the SGEs' sum, or the inline bytes
  bool is_inline = false;
  // The transport's: PSNs are given when the WQE is first sent.
  uint32_t first_psn = 0;
  uint32_t packets = 0;   // PSNs it consumes (READ: its responses; LOCAL_INV, BIND_MW: none)
  uint32_t read_psn = 0;  // READ, atomic: the next response PSN expected
  uint64_t read_key = 0;  // its ReadAhead key (Hca::send_reads)
  static constexpr uint32_t kChunkUnknown = UINT32_MAX;
  uint32_t read_chunk = kChunkUnknown;  // its memory's read_ahead(), asked at its first packet
  bool done = false;      // acknowledged (READ, atomic: every response in)
};

class SendQueue {
 public:
  SendQueue(uint32_t depth, uint32_t max_sge, uint32_t max_inline);

  // Copies `wr` in. 0, ENOMEM (full) or EINVAL (too many SGEs, inline
  // data longer than max_inline).
  int post(const SendWr& wr);
  // Drops every WQE (a QP reset or destroyed).
  void clear() { head_ = tail_; }

  uint32_t head() const { return head_; }
  uint32_t tail() const { return tail_; }
  bool empty() const { return head_ == tail_; }
  void pop() { ++head_; }

  SendWqe& at(uint32_t seq) { return wqes_[seq % depth_]; }
  std::span<const Sge> sges(uint32_t seq) const {
    return {sges_.data() + std::size_t{seq % depth_} * max_sge_, wqes_[seq % depth_].num_sge};
  }
  std::span<const uint8_t> inline_bytes(uint32_t seq) const {
    return {inline_.data() + std::size_t{seq % depth_} * max_inline_, wqes_[seq % depth_].length};
  }

 private:
  uint32_t depth_;
  uint32_t max_sge_;
  uint32_t max_inline_;
  uint32_t head_ = 0;
  uint32_t tail_ = 0;
  std::vector<SendWqe> wqes_;
  std::vector<Sge> sges_;       // depth * max_sge
  std::vector<uint8_t> inline_; // depth * max_inline
};

}  // namespace ibfab::fabric::rc
