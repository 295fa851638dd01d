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
//   DaryHeapScheduler<D>  insert O(log_D n), top O(1), pop O(D log_D n)
//   ("heap" = D 2; "heap4", "heap8")
//   LadderScheduler       insert O(1), pop O(1) amortised ("ladder", the
//                         default: the fastest on PHOLD and on bring-up)
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
  // One 128-bit comparison (when is never negative in a queue).
  unsigned __int128 key() const {
    return static_cast<unsigned __int128>(static_cast<uint64_t>(when)) << 64 | order;
  }
  friend bool operator<(const QueueEntry& a, const QueueEntry& b) { return a.key() < b.key(); }
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual void insert(QueueEntry e) = 0;
  virtual bool empty() const = 0;
  virtual std::size_t size() const = 0;
  virtual const QueueEntry& top() const = 0;  // precondition: !empty()
  virtual void pop() = 0;                     // precondition: !empty()
  // Moves the earliest entry to `out`; false if empty. One call instead of
  // empty() + top() + pop() on the simulator's hot path.
  virtual bool pop_min(QueueEntry& out) {
    if (empty()) return false;
    out = top();
    pop();
    return true;
  }
  // The entry that will surface `ahead` pops from now, if the scheduler
  // knows it cheaply (null otherwise). A hint for prefetching only.
  virtual const QueueEntry* upcoming(std::size_t ahead) const {
    return ahead == 0 && !empty() ? &top() : nullptr;
  }
};

// A D-ary min-heap (D = 2: the binary heap, the default) on one contiguous
// array laid out so that the D children of every node share cache lines
// (index 1 starts a line; children of i are D*i+1 .. D*i+D). pop() is the
// bottom-up variant: the hole at the root sinks to a leaf along the smallest
// child, chosen without branches, then the last element sifts up from there.
template <unsigned D>
class DaryHeapScheduler final : public Scheduler {
  static_assert(D >= 2 && (D & (D - 1)) == 0, "arity must be a power of two");

 public:
  DaryHeapScheduler() = default;
  DaryHeapScheduler(const DaryHeapScheduler&) = delete;
  DaryHeapScheduler& operator=(const DaryHeapScheduler&) = delete;
  ~DaryHeapScheduler() override;

  void insert(QueueEntry e) override;
  bool empty() const override { return size_ == 0; }
  std::size_t size() const override { return size_; }
  const QueueEntry& top() const override { return heap_[0]; }
  void pop() override;

 private:
  void grow();
  QueueEntry* heap_ = nullptr;  // heap_[0] is the root
  void* block_ = nullptr;       // owning allocation
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

using BinaryHeapScheduler = DaryHeapScheduler<2>;
using QuaternaryHeapScheduler = DaryHeapScheduler<4>;

extern template class DaryHeapScheduler<2>;
extern template class DaryHeapScheduler<4>;
extern template class DaryHeapScheduler<8>;

// Builds a scheduler by name ("heap", "heap4", "heap8", "ladder"); null for an unknown name.
std::unique_ptr<Scheduler> make_scheduler(const std::string& name);
// The scheduler a Simulator gets when none is named.
inline constexpr const char* kDefaultScheduler = "ladder";

}  // namespace ibfab::sim
