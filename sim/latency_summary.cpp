#include "sim/latency_summary.h"

#include <algorithm>

namespace ibfab::sim {

int64_t LatencySummary::printed(int64_t ps) {
  // Time::str's units and their thousandths.
  static constexpr int64_t kUnits[] = {1'000'000'000'000, 1'000'000'000, 1'000'000, 1'000};
  for (const int64_t unit : kUnits)
    if (ps >= unit) return ps / (unit / 1000) * (unit / 1000);
  return ps;
}

void LatencySummary::add(Time t) {
  const int64_t v = t.ps();
  if (count_ == 0 || v < min_) min_ = v;
  if (count_ == 0 || v > max_) max_ = v;
  ++count_;
  sum_ += v;
  insert(printed(v), 1);
}

void LatencySummary::merge(const LatencySummary& other) {
  if (other.count_ == 0) return;
  if (count_ == 0 || other.min_ < min_) min_ = other.min_;
  if (count_ == 0 || other.max_ > max_) max_ = other.max_;
  count_ += other.count_;
  sum_ += other.sum_;
  exact_ = exact_ && other.exact_;
  for (const auto& [key, n] : other.bins_) insert(key, n);
}

void LatencySummary::insert(int64_t key, uint64_t n) {
  auto it = std::lower_bound(bins_.begin(), bins_.end(), key,
                             [](const std::pair<int64_t, uint64_t>& b, int64_t k) { return b.first < k; });
  if (it != bins_.end() && it->first == key) {
    it->second += n;
    return;
  }
  if (it != bins_.begin() && !exact_) {
    // Merged bins cover up to the next bin's bound: a key inside one joins it.
    auto below = std::prev(it);
    below->second += n;
    return;
  }
  if (bins_.size() < kMaxBins) {
    bins_.insert(it, {key, n});
    return;
  }
  // Full: merge pairwise, then place the key in the halved list.
  std::size_t out = 0;
  for (std::size_t i = 0; i < bins_.size(); i += 2) {
    bins_[out] = bins_[i];
    if (i + 1 < bins_.size()) bins_[out].second += bins_[i + 1].second;
    ++out;
  }
  bins_.resize(out);
  exact_ = false;
  insert(key, n);
}

Time LatencySummary::at_rank(uint64_t k) const {
  uint64_t seen = 0;
  for (const auto& [key, n] : bins_) {
    seen += n;
    if (k < seen) return Time::ps(key);
  }
  return Time::ps(max_);
}

}  // namespace ibfab::sim
