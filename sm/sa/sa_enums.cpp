#include "sm/sa/sa_enums.h"

#include <array>

namespace ibfab::sm::sa_enum {
namespace {

// Bandwidth of each rate enum in Mb/s (0: reserved), 64b/66b rates at
// their 8b/10b-equivalent figure.
constexpr std::array<uint32_t, 22> kRateMbps = {
    0,      0,       2500,    10000,  30000,  5000,   20000,  40000,
    60000,  80000,   120000,  17000,  68000,  136000, 204000, 31250,
    125000, 250000,  375000,  35000,  62500,  500000};

int compare(Kind kind, uint8_t a, uint8_t b) {
  if (kind == Kind::kMtu) return a < b ? -1 : (a > b ? 1 : 0);
  return compare_rates(a, b);
}

}  // namespace

bool valid_mtu(uint8_t mtu) { return mtu >= kMinMtu && mtu <= kMaxMtu; }

bool valid_rate(uint8_t rate) { return rate < kRateMbps.size() && kRateMbps[rate] != 0; }

int rate_rank(uint8_t rate) {
  if (!valid_rate(rate)) return 0;
  int rank = 1;
  for (uint32_t v : kRateMbps)
    if (v != 0 && v < kRateMbps[rate]) ++rank;
  return rank;
}

int compare_rates(uint8_t a, uint8_t b) {
  const int ra = rate_rank(a), rb = rate_rank(b);
  return ra < rb ? -1 : (ra > rb ? 1 : 0);
}

std::optional<uint8_t> rate_below(uint8_t rate) {
  std::optional<uint8_t> best;
  for (uint8_t r = 0; r < kRateMbps.size(); ++r) {
    if (!valid_rate(r) || compare_rates(r, rate) >= 0) continue;
    if (!best || compare_rates(r, *best) > 0) best = r;
  }
  return best;
}

bool satisfies(Kind kind, uint8_t have, uint8_t selector, uint8_t want) {
  switch (selector & 3u) {
    case 0: return compare(kind, have, want) > 0;
    case 1: return compare(kind, have, want) < 0;
    case 2: return compare(kind, have, want) == 0;
    default: return true;
  }
}

std::optional<uint8_t> resolve(Kind kind, std::optional<uint8_t> selector, uint8_t want,
                               uint8_t cap) {
  if (!selector || (*selector & 3u) == 3) return cap;
  switch (*selector & 3u) {
    case 0:
      if (compare(kind, cap, want) > 0) return cap;
      return std::nullopt;
    case 1: {
      std::optional<uint8_t> below;
      if (kind == Kind::kMtu) {
        if (want > kMinMtu) below = static_cast<uint8_t>(want - 1);
      } else {
        below = rate_below(want);
      }
      if (!below) return std::nullopt;
      return compare(kind, cap, *below) < 0 ? cap : *below;
    }
    default:
      return want;
  }
}

}  // namespace ibfab::sm::sa_enum
