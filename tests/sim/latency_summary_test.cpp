#include "sim/latency_summary.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/rng.h"

namespace ibfab::sim {
namespace {

// The report's figures, from every value kept: v[n / 2] and the maximum.
std::string median_of(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return Time::ps(v[v.size() / 2]).str();
}

TEST(LatencySummary, MedianAndMaxPrintAsFromEveryValue) {
  Rng rng(7);
  LatencySummary s;
  std::vector<int64_t> all;
  for (int i = 0; i < 5000; ++i) {
    // 1 us .. 2 ms, so three units of print precision are crossed.
    const int64_t v = 1'000'000 + static_cast<int64_t>(rng.below(2'000'000'000));
    all.push_back(v);
    s.add(Time::ps(v));
    if (i % 997 == 0) {
      EXPECT_EQ(s.median().str(), median_of(all)) << "after " << all.size();
    }
  }
  EXPECT_TRUE(s.exact());
  EXPECT_EQ(s.count(), all.size());
  EXPECT_EQ(s.median().str(), median_of(all));
  EXPECT_EQ(s.max().ps(), *std::max_element(all.begin(), all.end()));
  EXPECT_EQ(s.min().ps(), *std::min_element(all.begin(), all.end()));
}

TEST(LatencySummary, StaysWithinItsBinsWhateverTheCount) {
  LatencySummary s;
  Rng rng(3);
  for (int i = 0; i < 200'000; ++i) s.add(Time::ps(static_cast<int64_t>(rng.below(1'000'000'000'000))));
  EXPECT_LE(s.bins(), LatencySummary::kMaxBins);
  EXPECT_FALSE(s.exact());
  EXPECT_EQ(s.count(), 200'000u);
  // Still a lower bound of the true median, and close: within 1% of the range.
  const int64_t m = s.median().ps();
  EXPECT_GT(m, 490'000'000'000);
  EXPECT_LT(m, 510'000'000'000);
}

TEST(LatencySummary, RepeatedValuesTakeOneBin) {
  LatencySummary s;
  for (int i = 0; i < 100'000; ++i) s.add(Time::us(3) + Time::ps(i % 1000));  // one printed value: 3.000us
  EXPECT_EQ(s.bins(), 1u);
  EXPECT_EQ(s.median().str(), "3.000us");
  EXPECT_EQ(s.max(), Time::us(3) + Time::ps(999));
}

TEST(LatencySummary, MergeKeepsTheFigures) {
  LatencySummary a, b, both;
  for (int i = 1; i <= 9; ++i) {
    (i % 2 ? a : b).add(Time::ns(i));
    both.add(Time::ns(i));
  }
  a.merge(b);
  EXPECT_EQ(a.count(), both.count());
  EXPECT_EQ(a.median(), both.median());
  EXPECT_EQ(a.max(), Time::ns(9));
  EXPECT_EQ(a.sum(), both.sum());
}

}  // namespace
}  // namespace ibfab::sim
