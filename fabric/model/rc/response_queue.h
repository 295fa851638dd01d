#pragma once
// What a responder has to send, in PSN order: ACKs and NAKs, the responses
// to RDMA READs (one packet at a time, read from host memory as each is
// built) and atomic acknowledges. A fixed ring: the responder accepts at
// most max_dest_rd_atomic READs and atomics at once, with an ACK between
// any two, and an ACK pushed behind another not yet sent replaces it (ACK
// coalescing: the later PSN acknowledges both).
#include <array>
#include <cstdint>

#include "fabric/model/host_memory.h"

namespace ibfab::fabric::rc {

struct Response {
  enum class Kind : uint8_t { kAck, kRead, kAtomic };
  Kind kind = Kind::kAck;
  uint32_t psn = 0;       // ACK/NAK: the PSN it names; READ: the next response's; atomic: its request's
  uint8_t syndrome = 0;   // ACK/NAK: the AETH syndrome
  // READ: `length` bytes at `addr` of `memory`, `offset` of them sent.
  HostMemory* memory = nullptr;
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t offset = 0;
  uint64_t read_key = 0;  // its ReadAhead key (Hca::response_reads)
  uint64_t original = 0;  // atomic: the value before the operation
};

class ResponseQueue {
 public:
  static constexpr uint32_t kMaxRdAtomic = 16;  // the device's max_qp_rd_atom
  static constexpr uint32_t kCapacity = 2 * kMaxRdAtomic + 3;

  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == kCapacity; }
  uint32_t size() const { return count_; }
  Response& front() { return items_[head_]; }
  Response& back() { return items_[(head_ + count_ - 1) % kCapacity]; }
  // False when full.
  bool push(const Response& r) {
    if (full()) return false;
    items_[(head_ + count_) % kCapacity] = r;
    ++count_;
    return true;
  }
  void pop() {
    head_ = (head_ + 1) % kCapacity;
    --count_;
  }
  void clear() { head_ = count_ = 0; }
  // READs and atomics queued (not yet fully sent).
  uint32_t rd_atomic() const {
    uint32_t n = 0;
    for (uint32_t i = 0; i < count_; ++i)
      if (items_[(head_ + i) % kCapacity].kind != Response::Kind::kAck) ++n;
    return n;
  }

 private:
  std::array<Response, kCapacity> items_{};
  uint32_t head_ = 0;
  uint32_t count_ = 0;
};

// The responder's last atomic results, by request PSN, so that a duplicate
// atomic is answered without being executed again.
class AtomicCache {
 public:
  void put(uint32_t psn, uint64_t original) {
    slots_[next_] = Slot{psn, original, true};
    next_ = (next_ + 1) % ResponseQueue::kMaxRdAtomic;
  }
  bool find(uint32_t psn, uint64_t& original) const {
    for (const Slot& s : slots_)
      if (s.used && s.psn == psn) {
        original = s.original;
        return true;
      }
    return false;
  }
  void clear() { slots_ = {}; }

 private:
  struct Slot {
    uint32_t psn = 0;
    uint64_t original = 0;
    bool used = false;
  };
  std::array<Slot, ResponseQueue::kMaxRdAtomic> slots_{};
  uint32_t next_ = 0;
};

}  // namespace ibfab::fabric::rc
