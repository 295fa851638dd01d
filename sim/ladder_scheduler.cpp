#include "sim/ladder_scheduler.h"

#include <algorithm>

namespace ibfab::sim {
namespace {

constexpr auto later = [](const QueueEntry& a, const QueueEntry& b) { return b.key() < a.key(); };

// The smallest shift with 2^shift * buckets >= span.
unsigned shift_for(int64_t span, std::size_t buckets) {
  const auto per = static_cast<uint64_t>(span) / buckets + 1;
  unsigned shift = 0;
  while ((uint64_t{1} << shift) < per) ++shift;
  return shift;
}

}  // namespace

void LadderScheduler::Rung::reset(int64_t s, int64_t span, unsigned sh) {
  const auto n = static_cast<std::size_t>(((span - 1) >> sh) + 1);
  start = s;
  shift = sh;
  cur = 0;
  count = n;
  if (buckets.size() < n) buckets.resize(n);
}

void LadderScheduler::Rung::put(const QueueEntry& e) {
  buckets[static_cast<std::size_t>((e.when - start) >> shift)].push_back(e);
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
  auto it = std::lower_bound(bottom_.begin(), bottom_.end(), e, later);
  bottom_.insert(it, e);
}

void LadderScheduler::sort_into_bottom(std::vector<QueueEntry>& bucket) const {
  // bottom_ is empty here: every entry in bucket precedes all other tiers.
  bottom_.swap(bucket);
  bucket.clear();
  QueueEntry* b = bottom_.data();
  const std::size_t n = bottom_.size();
  if (n > 64) {
    std::sort(b, b + n, later);
    return;
  }
  // Buckets are small: an insertion sort on the 128-bit keys beats
  // introsort's set-up.
  for (std::size_t i = 1; i < n; ++i) {
    const QueueEntry e = b[i];
    const auto key = e.key();
    std::size_t j = i;
    for (; j > 0 && b[j - 1].key() < key; --j) b[j] = b[j - 1];
    b[j] = e;
  }
}

void LadderScheduler::settle() const {
  while (bottom_.empty()) {
    if (nrungs_ == 0) {
      // Top becomes rung 0, kPerBucket entries per bucket on average.
      const int64_t span = top_max_ - top_min_ + 1;
      Rung& r = rungs_[0];
      r.reset(top_min_, span, shift_for(span, std::max<std::size_t>(1, top_.size() / kPerBucket)));
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
    const int64_t bucket_start = r.cur_start();
    ++r.cur;
    if (bucket.size() > kSplit && r.shift > 0 && nrungs_ < kMaxRungs) {
      // Subdivide this bucket's range into a deeper rung that ends exactly
      // where the bucket did (the parent's next bucket starts there): both
      // widths are powers of two, so the child's buckets tile it.
      const unsigned sh = std::min(r.shift - 1, shift_for(r.width(), bucket.size() / kPerBucket + 1));
      Rung& child = rungs_[nrungs_++];
      child.reset(bucket_start, r.width(), sh);
      for (const QueueEntry& e : bucket) child.put(e);
      bucket.clear();
    } else {
      sort_into_bottom(bucket);
    }
  }
}

}  // namespace ibfab::sim
