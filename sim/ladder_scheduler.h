#pragma once
// A ladder queue (after Tang, Goh and Thng, ACM TOMACS 2005): amortised O(1)
// insert and pop for the time distributions discrete-event models produce.
//
// Three tiers hold disjoint time ranges, earliest first:
//   bottom  a small sorted run (descending, so the minimum is at the back);
//   rungs   up to kMaxRungs levels of time buckets; a deeper rung subdivides
//           one bucket of the rung above and covers an earlier range;
//   top     an unsorted append-only batch of everything at or after
//           top_start_.
// A new entry goes to the first tier whose range holds it. When bottom runs
// dry, the deepest rung's next non-empty bucket is either split into a new
// rung (more than kSplit entries and room to subdivide) or sorted into
// bottom; when the rungs run dry, top becomes a new rung. Entries therefore
// move in sequential batches, which keeps the working set cache-friendly
// where a heap of the same size would miss on every level.
//
// Order is exactly that of QueueEntry::operator< (bottom is sorted by the
// full key), so runs are identical to those with a heap. Buckets keep their
// capacity when emptied: after warm-up, insert and pop allocate nothing.
#include <array>
#include <cstdint>
#include <vector>

#include "sim/scheduler.h"

namespace ibfab::sim {

class LadderScheduler final : public Scheduler {
 public:
  void insert(QueueEntry e) override;
  bool empty() const override { return size_ == 0; }
  std::size_t size() const override { return size_; }
  const QueueEntry& top() const override {
    if (bottom_.empty()) settle();
    return bottom_.back();
  }
  void pop() override {
    if (bottom_.empty()) settle();
    bottom_.pop_back();
    --size_;
  }
  bool pop_min(QueueEntry& out) override {
    if (size_ == 0) return false;
    if (bottom_.empty()) settle();
    out = bottom_.back();
    bottom_.pop_back();
    --size_;
    return true;
  }
  const QueueEntry* upcoming(std::size_t ahead) const override {
    return ahead < bottom_.size() ? &bottom_[bottom_.size() - 1 - ahead] : nullptr;
  }

 private:
  static constexpr std::size_t kMaxRungs = 8;
  static constexpr std::size_t kSplit = 48;   // larger buckets become a rung
  static constexpr std::size_t kPerBucket = 12;  // target fill of a new rung

  struct Rung {
    int64_t start = 0;   // time of bucket 0
    unsigned shift = 0;  // bucket width = 2^shift picoseconds
    std::size_t cur = 0;     // next bucket to visit; earlier ones are spent
    std::size_t count = 0;   // buckets in use
    std::vector<std::vector<QueueEntry>> buckets;

    int64_t width() const { return int64_t{1} << shift; }
    int64_t cur_start() const { return start + (static_cast<int64_t>(cur) << shift); }
    // Buckets of 2^shift ps from s on, enough of them to reach s + span.
    void reset(int64_t s, int64_t span, unsigned shift);
    void put(const QueueEntry& e);
  };

  void settle() const;  // makes bottom_ non-empty (precondition: size_ > 0)
  void bottom_insert(const QueueEntry& e);
  void sort_into_bottom(std::vector<QueueEntry>& bucket) const;

  // Logically const: top() reorganises tiers without changing the contents.
  mutable std::vector<QueueEntry> bottom_;  // descending
  mutable std::array<Rung, kMaxRungs> rungs_;
  mutable std::size_t nrungs_ = 0;
  mutable std::vector<QueueEntry> top_;
  mutable int64_t top_start_ = INT64_MIN;  // entries at or after go to top_
  mutable int64_t top_min_ = INT64_MAX, top_max_ = INT64_MIN;
  std::size_t size_ = 0;
};

}  // namespace ibfab::sim
