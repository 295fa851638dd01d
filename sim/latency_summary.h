#pragma once
// A bounded summary of many latencies, for reports that print a count, a
// median and a maximum: the count, sum, minimum and maximum are exact, and
// the distribution is a sorted histogram whose bins are Time::str's printed
// precision (a thousandth of the value's unit: 1 ps below 1 us, 1 ns below
// 1 ms, 1 us below 1 s, 1 ms from 1 s). Truncating to that precision is
// monotone, so at_rank(k) prints exactly what the k-th smallest of every
// value added prints.
//
// Memory: at most kMaxBins bins of 16 bytes, whatever the count. A new
// distinct bin past the cap merges the bins pairwise (each pair keeps its
// lower bound) and exact() turns false: from then on a rank reads a lower
// bound, within the merged bin's width. In a simulation latencies take few
// distinct values (kMaxBins is far above what the scenarios and soaks see).
//
// add() costs a binary search (and, for a new bin, a move of the bins
// above it); nothing is allocated once the bins exist.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/time.h"

namespace ibfab::sim {

class LatencySummary {
 public:
  static constexpr std::size_t kMaxBins = 4096;

  void add(Time t);
  // Adds every value of `other` (as its bins hold them).
  void merge(const LatencySummary& other);

  uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  Time min() const { return Time::ps(min_); }
  Time max() const { return Time::ps(max_); }
  Time sum() const { return Time::ps(sum_); }
  // The k-th smallest (0-based) at the printed precision; k < count().
  Time at_rank(uint64_t k) const;
  // v[count / 2] of the sorted values: the report's median.
  Time median() const { return at_rank(count_ / 2); }
  bool exact() const { return exact_; }
  std::size_t bins() const { return bins_.size(); }

  // The printed precision's truncation of `t` (what Time::str shows of it).
  static int64_t printed(int64_t ps);

 private:
  void insert(int64_t key, uint64_t n);
  std::vector<std::pair<int64_t, uint64_t>> bins_;  // (lower bound in ps, count), ascending
  uint64_t count_ = 0;
  int64_t sum_ = 0, min_ = 0, max_ = 0;
  bool exact_ = true;
};

}  // namespace ibfab::sim
