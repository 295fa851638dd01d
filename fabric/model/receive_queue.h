#pragma once
// A receive queue: a QP's own or a shared one (SRQ). It holds posted
// receive WQEs, SGEs copied in, in a ring sized at creation (no allocation
// after). An SRQ's limit (ibv_modify_srq IBV_SRQ_LIMIT) is armed once and
// fires once, when a WQE taken leaves fewer than `limit` posted.
#include <cerrno>
#include <cstdint>
#include <span>
#include <vector>

#include "fabric/model/work_request.h"

namespace ibfab::fabric {

class ReceiveQueue {
 public:
  // depth >= 1 WQEs of at most max_sge SGEs each.
  ReceiveQueue(uint32_t depth, uint32_t max_sge);

  // 0, ENOMEM (full) or EINVAL (more SGEs than max_sge).
  int post(const RecvWr& wr);
  bool empty() const { return count_ == 0; }
  uint32_t size() const { return count_; }
  uint32_t depth() const { return depth_; }
  uint32_t max_sge() const { return max_sge_; }

  struct Wqe {
    uint64_t wr_id = 0;
    std::span<const Sge> sge;
  };
  // The oldest WQE. Precondition: !empty(). Valid until the next post or pop.
  Wqe front() const;
  // Takes the oldest WQE; true when this fired the armed limit.
  bool pop();

  // Arms the limit (0 disarms). EINVAL when limit > depth.
  int arm_limit(uint32_t limit);
  uint32_t limit() const { return limit_; }

 private:
  uint32_t depth_;
  uint32_t max_sge_;
  uint32_t head_ = 0;  // next to take
  uint32_t count_ = 0;
  uint32_t limit_ = 0;
  std::vector<uint64_t> wr_ids_;
  std::vector<uint32_t> num_sge_;
  std::vector<Sge> sges_;  // depth * max_sge
};

}  // namespace ibfab::fabric
