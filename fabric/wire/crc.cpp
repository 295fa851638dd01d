#include "fabric/wire/crc.h"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#define IBFAB_WIRE_CLMUL 1
#endif

#include "fabric/wire/bth.h"
#include "fabric/wire/grh.h"
#include "fabric/wire/lrh.h"

namespace ibfab::wire {
namespace {

// Slicing-by-8 tables for a reflected CRC of width <= 32: kT[0] is the usual
// byte table, kT[k][n] the contribution of byte n followed by k zero bytes.
template <class T>
constexpr std::array<std::array<T, 256>, 8> make_tables(T reflected_poly) {
  std::array<std::array<T, 256>, 8> t{};
  for (unsigned n = 0; n < 256; ++n) {
    T c = static_cast<T>(n);
    for (int k = 0; k < 8; ++k) c = static_cast<T>((c & 1) ? (c >> 1) ^ reflected_poly : c >> 1);
    t[0][n] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (unsigned n = 0; n < 256; ++n)
      t[k][n] = static_cast<T>((t[k - 1][n] >> 8) ^ t[0][t[k - 1][n] & 0xff]);
  return t;
}

constexpr auto kCrc32 = make_tables<uint32_t>(0xedb88320u);  // 0x04C11DB7 reflected
constexpr auto kCrc16 = make_tables<uint16_t>(0xd008u);      // 0x100B reflected

inline uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

template <class T>
T update(const std::array<std::array<T, 256>, 8>& t, T reg, const uint8_t* p, std::size_t n) {
  uint32_t c = reg;
  while (n >= 8) {
    const uint32_t lo = load_le32(p) ^ c;
    const uint32_t hi = load_le32(p + 4);
    c = uint32_t{t[7][lo & 0xff]} ^ t[6][lo >> 8 & 0xff] ^ t[5][lo >> 16 & 0xff] ^ t[4][lo >> 24] ^
        t[3][hi & 0xff] ^ t[2][hi >> 8 & 0xff] ^ t[1][hi >> 16 & 0xff] ^ t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return static_cast<T>(c);
}

#if IBFAB_WIRE_CLMUL
// Carry-less multiply folding for long buffers (any reflected CRC of width
// <= 32). A 64-bit lane whose first bit lies `d` bits before the end of the
// block it is folded into is replaced by lane * K, with
// K = bitrev64(x^(d - 64) mod P): the product (< 96 bits) is congruent to the
// lane's contribution and lands inside that block. Folding keeps the message
// congruent mod P, so the table CRC of the final 16-byte accumulator (then of
// the tail) gives the CRC of the whole buffer; the register is XORed into
// the first bytes, which is what a reflected CRC's preset means.
constexpr uint64_t xn_mod(unsigned n, uint64_t poly, unsigned width) {
  uint64_t r = 1;  // x^0
  for (unsigned i = 0; i < n; ++i) {
    r <<= 1;
    if (r >> width & 1) r ^= poly | uint64_t{1} << width;
  }
  return r;
}

constexpr uint64_t bitrev64(uint64_t v) {
  uint64_t r = 0;
  for (int i = 0; i < 64; ++i) r |= (v >> i & 1) << (63 - i);
  return r;
}

struct FoldKeys {
  __m128i by64, by48, by32, by16;  // (lo lane key, hi lane key)
};

// The key for a lane whose first bit is `bytes_before` bytes before the
// destination block starts: d = 127 + 8 * bytes_before.
constexpr uint64_t fold_key(unsigned bytes_before, uint64_t poly, unsigned width) {
  return bitrev64(xn_mod(127 + 8 * bytes_before - 64, poly, width));
}

template <uint64_t kPoly, unsigned kWidth>
__attribute__((target("pclmul,sse4.1"))) FoldKeys make_keys() {
  auto pair = [](unsigned lo_before, unsigned hi_before) {
    return _mm_set_epi64x(static_cast<long long>(fold_key(hi_before, kPoly, kWidth)),
                          static_cast<long long>(fold_key(lo_before, kPoly, kWidth)));
  };
  return {pair(64, 56), pair(48, 40), pair(32, 24), pair(16, 8)};
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i acc, __m128i keys, __m128i next) {
  const __m128i lo = _mm_clmulepi64_si128(acc, keys, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(acc, keys, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

inline __m128i load128(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }

// Precondition: n >= 64.
template <class T, uint64_t kPoly, unsigned kWidth>
__attribute__((target("pclmul,sse4.1"))) T update_clmul(const std::array<std::array<T, 256>, 8>& t,
                                                       T reg, const uint8_t* p, std::size_t n) {
  static const FoldKeys k = make_keys<kPoly, kWidth>();
  __m128i x0 = _mm_xor_si128(load128(p), _mm_cvtsi32_si128(static_cast<int>(reg)));
  __m128i x1 = load128(p + 16);
  __m128i x2 = load128(p + 32);
  __m128i x3 = load128(p + 48);
  p += 64;
  n -= 64;
  while (n >= 64) {
    x0 = fold(x0, k.by64, load128(p));
    x1 = fold(x1, k.by64, load128(p + 16));
    x2 = fold(x2, k.by64, load128(p + 32));
    x3 = fold(x3, k.by64, load128(p + 48));
    p += 64;
    n -= 64;
  }
  __m128i x = fold(x0, k.by48, x3);
  x = _mm_xor_si128(x, fold(x1, k.by32, _mm_setzero_si128()));
  x = _mm_xor_si128(x, fold(x2, k.by16, _mm_setzero_si128()));
  while (n >= 16) {
    x = fold(x, k.by16, load128(p));
    p += 16;
    n -= 16;
  }
  uint8_t last[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(last), x);
  const T r = update(t, T{0}, last, sizeof last);
  return update(t, r, p, n);
}

bool have_clmul() {
  static const bool yes = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return yes;
}
#endif

// Below this many bytes the tables win over folding's set-up.
constexpr std::size_t kClmulMin = 128;

}  // namespace

uint32_t crc32_update(uint32_t reg, std::span<const uint8_t> data) {
#if IBFAB_WIRE_CLMUL
  if (data.size() >= kClmulMin && have_clmul())
    return update_clmul<uint32_t, 0x04c11db7u, 32>(kCrc32, reg, data.data(), data.size());
#endif
  return update(kCrc32, reg, data.data(), data.size());
}

uint16_t crc16_update(uint16_t reg, std::span<const uint8_t> data) {
#if IBFAB_WIRE_CLMUL
  if (data.size() >= kClmulMin && have_clmul())
    return update_clmul<uint16_t, 0x100bu, 16>(kCrc16, reg, data.data(), data.size());
#endif
  return update(kCrc16, reg, data.data(), data.size());
}

uint32_t compute_icrc(std::span<const uint8_t> covered) {
  constexpr std::size_t kMaxMasked = Lrh::kSize + Grh::kSize + Bth::kSize;
  uint8_t hdr[kMaxMasked];
  const bool global = covered.size() > 1 && (covered[1] & 0x3) == Lrh::kLnhIbaGlobal;
  const std::size_t masked_len =
      std::min(covered.size(), Lrh::kSize + (global ? Grh::kSize : 0) + Bth::kSize);
  std::copy_n(covered.data(), masked_len, hdr);
  auto set_ones = [&](std::size_t off, uint8_t mask) {
    if (off < masked_len) hdr[off] |= mask;
  };
  std::size_t bth = Lrh::kSize;
  if (global) {
    for (std::size_t i = 0; i < Lrh::kSize; ++i) set_ones(i, 0xff);
    set_ones(Lrh::kSize + 0, 0x0f);  // TClass 7:4
    set_ones(Lrh::kSize + 1, 0xff);  // TClass 3:0, FlowLabel 19:16
    set_ones(Lrh::kSize + 2, 0xff);  // FlowLabel 15:0
    set_ones(Lrh::kSize + 3, 0xff);
    set_ones(Lrh::kSize + 7, 0xff);  // HopLmt
    bth += Grh::kSize;
  } else {
    set_ones(0, 0xf0);  // VL
  }
  set_ones(bth + Bth::kResv8aOffset, 0xff);

  uint32_t reg = crc32_update(0xffffffffu, std::span<const uint8_t>(hdr, masked_len));
  reg = crc32_update(reg, covered.subspan(masked_len));
  return ~reg;
}

uint16_t compute_vcrc(std::span<const uint8_t> covered) {
  return static_cast<uint16_t>(~crc16_update(0xffff, covered));
}

void seal_crcs(std::span<uint8_t> wire) {
  if (wire.size() < kIcrcSize + kVcrcSize) return;
  const std::size_t icrc_at = wire.size() - kIcrcSize - kVcrcSize;
  store_icrc(wire.data() + icrc_at, compute_icrc(wire.first(icrc_at)));
  reseal_vcrc(wire);
}

void reseal_vcrc(std::span<uint8_t> wire) {
  if (wire.size() < kVcrcSize) return;
  const std::size_t vcrc_at = wire.size() - kVcrcSize;
  store_vcrc(wire.data() + vcrc_at, compute_vcrc(wire.first(vcrc_at)));
}

bool icrc_ok(std::span<const uint8_t> wire) {
  if (wire.size() < kIcrcSize + kVcrcSize) return false;
  const std::size_t icrc_at = wire.size() - kIcrcSize - kVcrcSize;
  return load_icrc(wire.data() + icrc_at) == compute_icrc(wire.first(icrc_at));
}

bool vcrc_ok(std::span<const uint8_t> wire) {
  if (wire.size() < kVcrcSize) return false;
  const std::size_t vcrc_at = wire.size() - kVcrcSize;
  return load_vcrc(wire.data() + vcrc_at) == compute_vcrc(wire.first(vcrc_at));
}

}  // namespace ibfab::wire
