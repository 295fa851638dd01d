#include "api/server/verbs_cq.h"

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <atomic>

#include "api/server/verbs_context.h"

namespace ibfab::api {

using rings::Cqe;
using rings::CqRing;

void write_record(int fd, const void* data, std::size_t size) {
  if (fd >= 0) (void)::send(fd, data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
}

Cqe receive_cqe(const fabric::WorkCompletion& wc) {
  Cqe c;
  c.flags = Cqe::kConnected | Cqe::kReceive;
  c.status = wc.status;
  c.opcode = wc.opcode;
  c.byte_len = wc.byte_len;
  c.vendor_err = static_cast<uint16_t>(wc.vendor_err);
  c.wr_id = wc.wr_id;
  c.qp_num = wc.qp_num;
  c.src_qp = wc.src_qp;
  c.slid = wc.slid;
  c.sl = wc.sl;
  c.pkey_index = wc.pkey_index;
  c.dlid_path_bits = wc.dlid_path_bits;
  c.imm_data = wc.imm_data;
  if (wc.wc_flags & fabric::wc_flag::kGrh) c.flags |= Cqe::kGrh;
  if (wc.wc_flags & fabric::wc_flag::kWithImm) c.flags |= Cqe::kImmediate;
  if (wc.wc_flags & fabric::wc_flag::kWithInv) c.flags |= Cqe::kInvalidate;
  return c;
}

bool VerbsService::Cq::push(const Cqe& e, bool solicited) {
  // An overrun CQ is in error for good: it takes no more completions.
  if (overrun_ || head_ - ring_->tail.value.load(std::memory_order_acquire) >= depth_) {
    ring_->overrun.value.store(1, std::memory_order_release);
    if (!overrun_) ctx_.object_event(IBV_EVENT_CQ_ERR, user_handle_);
    overrun_ = true;
    return false;
  }
  ring_->entries()[head_ & (depth_ - 1)] = e;
  ring_->head.value.store(++head_, std::memory_order_release);
  // A completion event for an armed CQ: any completion for "next", a
  // solicited one or an error for "solicited only". The fence pairs with
  // the client's after it arms: either this sees the arm, or the client's
  // poll after arming sees this completion; never neither.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint32_t armed = ring_->armed.value.load(std::memory_order_acquire);
  const bool fire = armed == CqRing::kArmNext ||
                    (armed == CqRing::kArmSolicited && (solicited || e.status != IBV_WC_SUCCESS));
  if (fire && channel_ && ring_->armed.value.compare_exchange_strong(armed, 0)) {
    write_record(channel_->fd, &user_handle_, sizeof user_handle_);
  }
  return true;
}

int VerbsService::Cq::resize(SharedMemory mem, uint32_t depth) {
  auto* next = mem.as<CqRing>();
  const uint32_t tail = ring_->tail.value.load(std::memory_order_acquire);
  const uint32_t waiting = head_ - tail;  // a tail past the head reads as too many
  if (waiting > depth) return EINVAL;
  for (uint32_t i = 0; i < waiting; ++i) next->entries()[i] = ring_->entries()[(tail + i) & (depth_ - 1)];
  next->tail.value.store(0, std::memory_order_relaxed);
  next->overrun.value.store(ring_->overrun.value.load(std::memory_order_relaxed), std::memory_order_relaxed);
  next->armed.value.store(ring_->armed.value.load(std::memory_order_acquire), std::memory_order_relaxed);
  next->head.value.store(waiting, std::memory_order_release);
  mem_ = std::move(mem);
  ring_ = next;
  depth_ = depth;
  head_ = waiting;
  return 0;
}

}  // namespace ibfab::api
