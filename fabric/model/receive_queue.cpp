#include "fabric/model/receive_queue.h"

#include <algorithm>

namespace ibfab::fabric {

ReceiveQueue::ReceiveQueue(uint32_t depth, uint32_t max_sge)
    : depth_(std::max(depth, 1u)),
      max_sge_(max_sge),
      wr_ids_(depth_),
      num_sge_(depth_),
      sges_(std::size_t{depth_} * max_sge) {}

int ReceiveQueue::post(const RecvWr& wr) {
  if (wr.num_sge > max_sge_) return EINVAL;
  if (count_ == depth_) return ENOMEM;
  const uint32_t slot = (head_ + count_) % depth_;
  wr_ids_[slot] = wr.wr_id;
  num_sge_[slot] = wr.num_sge;
  std::copy_n(wr.sge, wr.num_sge, sges_.begin() + std::ptrdiff_t{slot} * max_sge_);
  ++count_;
  return 0;
}

ReceiveQueue::Wqe ReceiveQueue::front() const {
  return Wqe{wr_ids_[head_], std::span<const Sge>(sges_.data() + std::size_t{head_} * max_sge_, num_sge_[head_])};
}

bool ReceiveQueue::pop() {
  head_ = (head_ + 1) % depth_;
  --count_;
  if (limit_ != 0 && count_ < limit_) {
    limit_ = 0;
    return true;
  }
  return false;
}

int ReceiveQueue::arm_limit(uint32_t limit) {
  if (limit > depth_) return EINVAL;
  limit_ = limit;
  return 0;
}

}  // namespace ibfab::fabric
