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

// The values below come from outside this code base. The splitmix64 and
// xoshiro256** vectors are the ones rand_xoshiro (rust-random/rngs,
// src/splitmix64.rs and src/xoshiro256starstar.rs, tests `reference`) records
// as produced by Vigna's reference C files splitmix64.c and
// xoshiro256starstar.c. No published vector covers this seeding (four
// splitmix64 draws from the seed fill the state), so Rng(1)'s first draws were
// computed by a separate ten-line Python implementation of both reference
// algorithms, which reproduces the two published vectors first.

TEST(Rng, SplitMix64MatchesTheReferenceVector) {
  uint64_t state = 1477776061723855037ull;
  const uint64_t expected[] = {1985237415132408290ull, 2979275885539914483ull,
                               13511426838097143398ull, 8488337342461049707ull,
                               15141737807933549159ull};
  for (uint64_t e : expected) EXPECT_EQ(splitmix64(state), e);
}

TEST(Rng, Xoshiro256StarStarMatchesTheReferenceVector) {
  Rng r = Rng::from_state({1, 2, 3, 4});
  const uint64_t expected[] = {11520ull,
                               0ull,
                               1509978240ull,
                               1215971899390074240ull,
                               1216172134540287360ull,
                               607988272756665600ull,
                               16172922978634559625ull,
                               8476171486693032832ull,
                               10595114339597558777ull,
                               2904607092377533576ull};
  for (uint64_t e : expected) EXPECT_EQ(r.next(), e);
}

TEST(Rng, StreamIsPinnedAcrossBuilds) {
  // Part of the determinism contract: changing these changes every scenario
  // fingerprint. Computed independently (see above), not by this class.
  Rng r(1);
  EXPECT_EQ(r.next(), 0xb3f2af6d0fc710c5ull);
  EXPECT_EQ(r.next(), 0x853b559647364ceaull);
  EXPECT_EQ(r.next(), 0x92f89756082a4514ull);
  EXPECT_EQ(r.next(), 0x642e1c7bc266a3a7ull);
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
