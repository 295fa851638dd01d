#include "sim/trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/simulator.h"

namespace ibfab::sim {
namespace {

TEST(Trace, DisabledWithoutASink) {
  Trace t;
  EXPECT_FALSE(t.enabled());
  t.emit(Time::ns(1), "x", "nothing %d", 1);  // must be a harmless no-op
}

TEST(Trace, LinesCarryTimeSourceAndText) {
  StringTraceSink sink;
  Trace t;
  t.attach(&sink);
  t.emit(Time::ns(2), "S1", "fwd dlid=%u port=%u", 5u, 3u);
  EXPECT_EQ(sink.text(), "2000 S1 fwd dlid=5 port=3\n");
}

TEST(Trace, OverlongLinesAreCutNotOverflowed) {
  StringTraceSink sink;
  Trace t;
  t.attach(&sink);
  const std::string big(2000, 'x');
  t.emit(Time::ps(1), "n", "%s", big.c_str());
  EXPECT_LT(sink.text().size(), 600u);
  EXPECT_EQ(sink.text().back(), '\n');
}

TEST(DigestTraceSink, FingerprintsTheExactBytes) {
  DigestTraceSink a, b, c;
  a.line("1 x hello");
  b.line("1 x hello");
  c.line("1 x hellp");
  EXPECT_EQ(a.digest(), b.digest());
  EXPECT_NE(a.digest(), c.digest());
  EXPECT_EQ(a.hex().size(), 16u);
  EXPECT_EQ(a.lines(), 1u);
}

TEST(RunDigest, EveryByteAndEveryFieldCounts) {
  // Lengths around the 8-byte and 64-byte steps of the four lanes.
  for (std::size_t n : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 55u, 56u, 57u, 63u, 64u, 65u, 71u, 72u,
                        127u, 128u, 129u, 256u, 290u}) {
    std::vector<uint8_t> bytes(n);
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 37);
    RunDigest base;
    base.fold_bytes(bytes);
    for (std::size_t i = 0; i < n; ++i)
      for (int bit = 0; bit < 8; ++bit) {
        std::vector<uint8_t> flipped = bytes;
        flipped[i] ^= static_cast<uint8_t>(1u << bit);
        RunDigest d;
        d.fold_bytes(flipped);
        ASSERT_NE(d.value(), base.value()) << n << " bytes, byte " << i << " bit " << bit;
      }
    RunDigest shorter;
    shorter.fold_bytes(std::span<const uint8_t>(bytes).first(n - 1));
    EXPECT_NE(shorter.value(), base.value()) << "a trailing zero byte counts too";
  }
  auto event = [](int64_t ps, uint64_t source, uint32_t kind, uint64_t field) {
    RunDigest d;
    d.event(Time::ps(ps), source, kind);
    d.fold(field);
    return d.value();
  };
  const uint64_t e = event(10, 3, kind_tag("rx"), 7);
  EXPECT_EQ(e, event(10, 3, kind_tag("rx"), 7));
  EXPECT_NE(e, event(11, 3, kind_tag("rx"), 7));
  EXPECT_NE(e, event(10, 4, kind_tag("rx"), 7));
  EXPECT_NE(e, event(10, 3, kind_tag("link"), 7));
  EXPECT_NE(e, event(10, 3, kind_tag("rx"), 6));
  RunDigest d;
  EXPECT_EQ(d.hex().size(), 16u);
}

TEST(RunDigest, TextAndDigestAreIndependent) {
  Trace t;
  RunDigest d;
  t.attach_digest(&d);
  EXPECT_EQ(t.digest(), &d);
  EXPECT_FALSE(t.enabled()) << "a digest alone asks for no text";
}

// The determinism contract: the same seed and the same work give a
// byte-identical trace; a different seed gives a different one.
std::string random_walk_trace(uint64_t seed) {
  Simulator sim(seed);
  StringTraceSink sink;
  sim.trace().attach(&sink);
  struct Walker {
    Simulator* sim;
    int id;
    int left;
    void step() {
      sim->trace().emit(sim->now(), "walker", "id=%d left=%d", id, left);
      if (--left > 0) {
        const auto d = Time::ps(static_cast<int64_t>(sim->rng().below(1000)));
        sim->schedule(d, [this] { step(); });
      }
    }
  };
  Walker w[8];
  for (int i = 0; i < 8; ++i) {
    w[i] = Walker{&sim, i, 50};
    sim.schedule(Time::zero(), [p = &w[i]] { p->step(); });
  }
  sim.run();
  return sink.text();
}

TEST(Determinism, SameSeedGivesByteIdenticalTrace) {
  const std::string a = random_walk_trace(123), b = random_walk_trace(123);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, random_walk_trace(124));
}

}  // namespace
}  // namespace ibfab::sim
