#include "fabric/model/rc/send_queue.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace ibfab::fabric::rc {

SendQueue::SendQueue(uint32_t depth, uint32_t max_sge, uint32_t max_inline)
    : depth_(std::max(depth, 1u)),
      max_sge_(max_sge),
      max_inline_(max_inline),
      wqes_(depth_),
      sges_(std::size_t{depth_} * max_sge),
      inline_(std::size_t{depth_} * max_inline) {}

int SendQueue::post(const SendWr& wr) {
  const bool is_inline = (wr.flags & send_flag::kInline) != 0;
  if (is_inline ? wr.inline_data.size() > max_inline_ : wr.num_sge > max_sge_) return EINVAL;
  if (tail_ - head_ >= depth_) return ENOMEM;
  const uint32_t slot = tail_ % depth_;
  SendWqe& w = wqes_[slot];
  w = SendWqe{};
  w.wr_id = wr.wr_id;
  w.opcode = wr.opcode;
  w.flags = wr.flags;
  w.imm_data = wr.imm_data;
  w.invalidate_rkey = wr.invalidate_rkey;
  w.remote_addr = wr.remote_addr;
  w.rkey = wr.rkey;
  w.compare_add = wr.compare_add;
  w.swap = wr.swap;
  w.bind = wr.bind;
  w.remote_srqn = wr.remote_srqn & 0xFFFFFF;
  w.is_inline = is_inline;
  if (is_inline) {
    w.length = static_cast<uint32_t>(wr.inline_data.size());
    if (w.length) std::memcpy(inline_.data() + std::size_t{slot} * max_inline_, wr.inline_data.data(), w.length);
  } else {
    w.num_sge = wr.num_sge;
    uint64_t total = 0;
    for (uint32_t i = 0; i < wr.num_sge; ++i) {
      sges_[std::size_t{slot} * max_sge_ + i] = wr.sge[i];
      total += wr.sge[i].length;
    }
    if (total > UINT32_MAX) return EINVAL;
    w.length = static_cast<uint32_t>(total);
  }
  ++tail_;
  return 0;
}

}  // namespace ibfab::fabric::rc
