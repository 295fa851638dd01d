#pragma once
// The pending-event set behind a Simulator.
//
// Entries are ordered by (when, order): a strict weak order, total because
// `order` is unique. `order` packs the insertion sequence number in its high
// 40 bits and the event's pool slot in its low 24, so comparing it compares
// sequence numbers (slots never decide). This keeps entries at 16 bytes,
// four to a cache line.
//
// Complexity of the implementations (n = pending events):
//   BinaryHeapScheduler   insert O(log n), top O(1), pop O(log n)
// Cancellation is not the scheduler's business: cancelled events stay in the
// set as tombstones and the Simulator skips them when they surface.
#include <cstdint>
#include <memory>
#include <string>

namespace ibfab::sim {

struct QueueEntry {
  int64_t when;    // picoseconds
  uint64_t order;  // seq << kSlotBits | slot

  static constexpr unsigned kSlotBits = 24;
  static constexpr uint64_t kMaxSlots = uint64_t{1} << kSlotBits;
  static constexpr uint64_t kMaxSeq = uint64_t{1} << (64 - kSlotBits);

  uint32_t slot() const { return static_cast<uint32_t>(order & (kMaxSlots - 1)); }
  friend bool operator<(const QueueEntry& a, const QueueEntry& b) {
    return a.when < b.when || (a.when == b.when && a.order < b.order);
  }
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void insert(QueueEntry e) = 0;
  virtual bool empty() const = 0;
  virtual std::size_t size() const = 0;
  virtual const QueueEntry& top() const = 0;  // precondition: !empty()
  virtual void pop() = 0;                     // precondition: !empty()
};

// A binary min-heap on a contiguous vector. pop() uses the bottom-up
// variant: the hole at the root sinks to a leaf along the smaller children
// (one comparison per level), then the last element sifts up from there.
class BinaryHeapScheduler final : public Scheduler {
 public:
  void insert(QueueEntry e) override;
  bool empty() const override { return size_ == 0; }
  std::size_t size() const override { return size_; }
  const QueueEntry& top() const override { return heap_[0]; }
  void pop() override;

 private:
  void grow();
  std::unique_ptr<QueueEntry[]> heap_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// Builds a scheduler by name ("heap"); null for an unknown name.
std::unique_ptr<Scheduler> make_scheduler(const std::string& name);

}  // namespace ibfab::sim
