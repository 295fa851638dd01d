#include "sim/ladder_scheduler.h"

#include <algorithm>

namespace ibfab::sim {
namespace {

constexpr auto earlier = [](const QueueEntry& a, const QueueEntry& b) { return a.key() < b.key(); };

// The smallest shift with 2^shift * buckets >= span.
unsigned shift_for(int64_t span, std::size_t buckets) {
  const auto per = static_cast<uint64_t>(span) / buckets + 1;
  unsigned shift = 0;
  while ((uint64_t{1} << shift) < per) ++shift;
  return shift;
}

}  // namespace

void LadderScheduler::Rung::build(int64_t lo, int64_t hi, int64_t e, std::size_t n) {
  start = lo;
  end = e;
  shift = shift_for(hi - lo + 1, std::max<std::size_t>(1, n / kPerBucket));
  cur = 0;
  // Buckets up to the one holding hi, one more if the range goes on.
  const auto last = static_cast<std::size_t>((hi - lo) >> shift);
  const auto to_end = static_cast<std::size_t>((e - 1 - lo) >> shift);
  count = std::min(last + 1, to_end) + 1;
  if (buckets.size() < count) buckets.resize(count);
}

void LadderScheduler::Rung::put(const QueueEntry& e) {
  const auto i = static_cast<std::size_t>((e.when - start) >> shift);
  buckets[std::min(i, count - 1)].push_back(e);
}

void LadderScheduler::insert(QueueEntry e) {
  ++size_;
  if (e.when >= top_start_) {
    top_.push_back(e);
    top_min_ = std::min(top_min_, e.when);
    top_max_ = std::max(top_max_, e.when);
    return;
  }
  // Rung 0 covers the latest range below top_start_, deeper rungs earlier
  // ones: the first rung whose unspent range holds the entry takes it.
  for (std::size_t i = 0; i < nrungs_; ++i) {
    if (e.when >= rungs_[i].cur_start()) {
      rungs_[i].put(e);
      return;
    }
  }
  bottom_insert(e);
}

void LadderScheduler::bottom_insert(const QueueEntry& e) {
  if (bottom_size() >= bottom_limit_ && nrungs_ < kMaxRungs) {
    bottom_to_rung();
    if (e.when >= rungs_[nrungs_ - 1].cur_start()) {
      rungs_[nrungs_ - 1].put(e);
      return;
    }
  }
  if (head_ >= kBottomMax && head_ >= bottom_size()) {
    // The spent slots outnumber the live entries: drop them (amortised
    // O(1) a pop), so that a bottom that never runs dry stays its size.
    bottom_.erase(bottom_.begin(), bottom_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  const auto first = bottom_.begin() + static_cast<std::ptrdiff_t>(head_);
  const auto it = std::upper_bound(first, bottom_.end(), e, earlier);
  if (head_ != 0 && it - first < bottom_.end() - it) {
    // Fewer entries before the place than after it: they move one back,
    // into the spent slot before the head.
    std::move(first, it, first - 1);
    *(it - 1) = e;
    --head_;
    return;
  }
  bottom_.insert(it, e);
}

void LadderScheduler::bottom_to_rung() {
  // bottom holds everything before the deepest rung's unspent range (or
  // before top_start_ with no rung), earliest first.
  const int64_t end = nrungs_ != 0 ? rungs_[nrungs_ - 1].cur_start() : top_start_;
  Rung& r = rungs_[nrungs_++];
  r.build(bottom_[head_].when, bottom_.back().when, end, bottom_size());
  for (std::size_t i = head_; i < bottom_.size(); ++i) r.put(bottom_[i]);
  bottom_.clear();
  head_ = 0;
  bottom_limit_ = kBottomMax;
}

void LadderScheduler::reset() {
  bottom_.clear();
  head_ = 0;
  nrungs_ = 0;
  top_.clear();
  top_start_ = INT64_MIN;
  top_min_ = INT64_MAX;
  top_max_ = INT64_MIN;
  bottom_limit_ = kBottomMax;
}

void LadderScheduler::sort_into_bottom(std::vector<QueueEntry>& bucket) const {
  // bottom is empty here: every entry in bucket precedes all other tiers.
  bottom_.swap(bucket);
  bucket.clear();
  head_ = 0;
  QueueEntry* b = bottom_.data();
  const std::size_t n = bottom_.size();
  bottom_limit_ = std::max(kBottomMax, 2 * n);
  if (n > 64) {
    std::sort(b, b + n, earlier);
    return;
  }
  // Buckets are small: an insertion sort on the 128-bit keys beats
  // introsort's set-up.
  for (std::size_t i = 1; i < n; ++i) {
    const QueueEntry e = b[i];
    const auto key = e.key();
    std::size_t j = i;
    for (; j > 0 && key < b[j - 1].key(); --j) b[j] = b[j - 1];
    b[j] = e;
  }
}

void LadderScheduler::settle() const {
  while (bottom_empty()) {
    if (nrungs_ == 0) {
      // Top becomes rung 0, kPerBucket entries per bucket on average.
      Rung& r = rungs_[0];
      r.build(top_min_, top_max_, top_max_ + 1, top_.size());
      for (const QueueEntry& e : top_) r.put(e);
      nrungs_ = 1;
      top_start_ = top_max_ + 1;
      top_.clear();
      top_min_ = INT64_MAX;
      top_max_ = INT64_MIN;
    }
    Rung& r = rungs_[nrungs_ - 1];
    while (r.cur < r.count && r.buckets[r.cur].empty()) ++r.cur;
    if (r.cur == r.count) {
      --nrungs_;
      continue;
    }
    std::vector<QueueEntry>& bucket = r.buckets[r.cur];
    ++r.cur;
    if (bucket.size() > kSplit && nrungs_ < kMaxRungs) {
      const auto [lo, hi] = std::minmax_element(
          bucket.begin(), bucket.end(), [](const QueueEntry& a, const QueueEntry& b) { return a.when < b.when; });
      if (lo->when < hi->when) {
        // Subdivide the bucket into a deeper rung laid out by its entries
        // and reaching to where the bucket ended (the parent's unspent range
        // starts there), so the earliest entries sort in small batches.
        Rung& child = rungs_[nrungs_++];
        child.build(lo->when, hi->when, r.cur_start(), bucket.size());
        for (const QueueEntry& e : bucket) child.put(e);
        bucket.clear();
        continue;
      }
    }
    sort_into_bottom(bucket);
  }
}

}  // namespace ibfab::sim
