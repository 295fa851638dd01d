#include "sim/rng.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ibfab::sim {
namespace {

TEST(Rng, SameSeedSameStreamDifferentSeedDifferentStream) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differs = differs || x != c.next();
  }
  EXPECT_TRUE(differs);
}

TEST(Rng, StreamIsPinnedAcrossBuilds) {
  // The first outputs for seed 1 are part of the determinism contract:
  // changing them changes every scenario fingerprint.
  Rng r(1);
  const uint64_t first = r.next();
  Rng again(1);
  EXPECT_EQ(first, again.next());
  EXPECT_NE(first, 0u);
}

TEST(Rng, BelowIsInRangeAndRoughlyUniform) {
  Rng r(5);
  int counts[10] = {};
  for (int i = 0; i < 100'000; ++i) {
    const uint64_t v = r.below(10);
    ASSERT_LT(v, 10u);
    ++counts[v];
  }
  for (int c : counts) EXPECT_NEAR(c, 10'000, 600);
}

TEST(Rng, ExponentialHasTheRequestedMean) {
  Rng r(9);
  double sum = 0;
  const int n = 200'000;
  for (int i = 0; i < n; ++i) {
    const double x = r.exponential(3.0);
    ASSERT_GE(x, 0.0);
    sum += x;
  }
  EXPECT_NEAR(sum / n, 3.0, 0.05);
}

TEST(Rng, ExponentialFollowsTheDistributionNotJustTheMean) {
  // P(X > t) = exp(-t) for the standard exponential, checked at several
  // points including the ziggurat's tail (beyond 7.697).
  Rng r(21);
  const int n = 1'000'000;
  int over[5] = {};
  const double t[5] = {0.1, 1.0, 3.0, 6.0, 8.0};
  for (int i = 0; i < n; ++i) {
    const double x = r.standard_exponential();
    for (int j = 0; j < 5; ++j) over[j] += x > t[j];
  }
  for (int j = 0; j < 5; ++j) {
    const double p = std::exp(-t[j]);
    const double sd = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(static_cast<double>(over[j]) / n, p, 5 * sd + 1e-6) << "t=" << t[j];
  }
}

TEST(Rng, ForkedStreamsAreIndependentAndReproducible) {
  Rng base(11);
  Rng f1 = base.fork(1), f1b = base.fork(1), f2 = base.fork(2);
  EXPECT_EQ(f1.next(), f1b.next());
  EXPECT_NE(f1.next(), f2.next());
}

TEST(Rng, Mix64IsAPureFunction) {
  EXPECT_EQ(mix64(1, 2), mix64(1, 2));
  EXPECT_NE(mix64(1, 2), mix64(2, 1));
}

}  // namespace
}  // namespace ibfab::sim
