#pragma once
// A ladder queue (after Tang, Goh and Thng, ACM TOMACS 2005): amortised O(1)
// insert and pop for the time distributions discrete-event models produce.
//
// Three tiers hold disjoint time ranges, earliest first:
//   bottom  a small sorted run, ascending from a head index (a pop moves
//           the head; an insert shifts whichever side of its place is
//           shorter, so both an entry due next and one after the rest cost
//           O(1));
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
// Two rules keep inserts O(1) when many land before the rungs' ranges (a
// burst while a far-future timer, or a cancelled one still queued as a
// tombstone, holds the ranges up): inserts that grow bottom to twice its
// size when last refilled (and to at least kBottomMax) turn it into a new
// deepest rung reaching up to the tier above; and when the last entry is
// popped every range is forgotten, so the next entries go to top and are
// laid out by their own span.
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
    if (bottom_empty()) settle();
    return bottom_[head_];
  }
  void pop() override {
    if (bottom_empty()) settle();
    pop_bottom();
    if (--size_ == 0) reset();
  }
  bool pop_min(QueueEntry& out) override {
    if (size_ == 0) return false;
    if (bottom_empty()) settle();
    out = bottom_[head_];
    pop_bottom();
    if (--size_ == 0) reset();
    return true;
  }
  const QueueEntry* upcoming(std::size_t ahead) const override {
    return ahead < bottom_.size() - head_ ? &bottom_[head_ + ahead] : nullptr;
  }

 private:
  static constexpr std::size_t kMaxRungs = 8;
  static constexpr std::size_t kSplit = 48;   // larger buckets become a rung
  static constexpr std::size_t kPerBucket = 12;  // target fill of a new rung
  static constexpr std::size_t kBottomMax = 64;  // smallest bottom that may become a rung

  // Buckets of 2^shift ps from `start`; the last one is open: it runs to
  // `end`, the rung's exclusive bound (where the tier above begins).
  struct Rung {
    int64_t start = 0;   // time of bucket 0
    int64_t end = 0;     // no entry of this rung is at or after it
    unsigned shift = 0;  // bucket width = 2^shift picoseconds
    std::size_t cur = 0;     // next bucket to visit; earlier ones are spent
    std::size_t count = 0;   // buckets in use
    std::vector<std::vector<QueueEntry>> buckets;

    // Where the unspent range begins (end once every bucket is spent).
    int64_t cur_start() const {
      return cur < count ? start + (static_cast<int64_t>(cur) << shift) : end;
    }
    // Lays the rung out for `n` entries from `lo` to `hi` (lo <= hi < e):
    // about kPerBucket entries a bucket over [lo, hi], the last bucket
    // open up to `e`.
    void build(int64_t lo, int64_t hi, int64_t e, std::size_t n);
    void put(const QueueEntry& e);
  };

  bool bottom_empty() const { return head_ == bottom_.size(); }
  std::size_t bottom_size() const { return bottom_.size() - head_; }
  void pop_bottom() const {
    if (++head_ == bottom_.size()) {
      bottom_.clear();
      head_ = 0;
    }
  }
  void settle() const;  // makes bottom non-empty (precondition: size_ > 0)
  void bottom_insert(const QueueEntry& e);
  // Moves bottom into a new deepest rung reaching from its earliest entry
  // to the tier above. Precondition: !bottom_empty(), nrungs_ < kMaxRungs.
  void bottom_to_rung();
  void reset();  // every tier empty: forget the ranges (precondition: size_ == 0)
  void sort_into_bottom(std::vector<QueueEntry>& bucket) const;

  // Logically const: top() reorganises tiers without changing the contents.
  mutable std::vector<QueueEntry> bottom_;  // ascending from head_; spent before it
  mutable std::size_t head_ = 0;
  mutable std::size_t bottom_limit_ = kBottomMax;  // bottom size that triggers bottom_to_rung
  mutable std::array<Rung, kMaxRungs> rungs_;
  mutable std::size_t nrungs_ = 0;
  mutable std::vector<QueueEntry> top_;
  mutable int64_t top_start_ = INT64_MIN;  // entries at or after go to top_
  mutable int64_t top_min_ = INT64_MAX, top_max_ = INT64_MIN;
  std::size_t size_ = 0;
};

}  // namespace ibfab::sim
