#pragma once
// A seeded, platform-independent random source: xoshiro256** seeded through
// splitmix64. Integer draws are pure integer arithmetic; exponential() is a
// 256-layer ziggurat (Marsaglia and Tsang, 2000) whose tables and rare slow
// path use std::exp/std::log, so streams are identical wherever the C
// library's exp and log agree (the same glibc).
#include <cstdint>

namespace ibfab::sim {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A stateless 64-bit mix of two words: for decisions that must be pure
// functions of their inputs (a link dropping a packet, say).
inline uint64_t mix64(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xd6e8feb86659fd93ull);
  return splitmix64(s);
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 1) : seed_(seed) {
    uint64_t s = seed;
    for (uint64_t& w : s_) w = splitmix64(s);
  }

  // A generator whose xoshiro256** state is exactly `s` (not all zero):
  // for checking the stream against the algorithm's published vectors.
  static Rng from_state(const uint64_t (&s)[4]) {
    Rng r(0);
    for (int i = 0; i < 4; ++i) r.s_[i] = s[i];
    return r;
  }

  uint64_t seed() const { return seed_; }

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in [0, bound), unbiased (Lemire's multiply-and-reject).
  uint64_t below(uint64_t bound) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
    auto low = static_cast<uint64_t>(m);
    if (low < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Exponentially distributed with the given mean.
  double exponential(double mean) { return mean * standard_exponential(); }
  // Exponentially distributed with mean 1 (ziggurat: one draw, one compare
  // and one multiply about 98% of the time).
  double standard_exponential();

  bool bernoulli(double p) { return uniform01() < p; }

  // An independent stream derived from this one's seed and `stream`.
  Rng fork(uint64_t stream) const { return Rng(mix64(seed_, stream)); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace ibfab::sim
