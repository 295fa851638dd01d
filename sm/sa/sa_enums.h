#pragma once
// MTU and rate enums as the SA compares them (IBTA 1.3 vol 1, 15.2.5.16):
// MTU 1 = 256 .. 5 = 4096 is ordered by value; the rate enum is not
// (2 = 2.5, 3 = 10, 5 = 5 Gb/s ...), so rates compare by rank in
// bandwidth order, counting the 64b/66b rates at their equivalent 8b/10b
// bandwidth as OpenSM does (14 Gb/s ranks as 17, 100 as 125 ...).
#include <cstdint>
#include <optional>

namespace ibfab::sm::sa_enum {

inline constexpr uint8_t kMinMtu = 1;
inline constexpr uint8_t kMaxMtu = 5;

bool valid_mtu(uint8_t mtu);
bool valid_rate(uint8_t rate);
// Rank of a valid rate in bandwidth order (1 = slowest); 0 if invalid.
int rate_rank(uint8_t rate);
// <0, 0, >0 as a is slower than, equal to, faster than b (valid rates).
int compare_rates(uint8_t a, uint8_t b);
// The fastest valid rate strictly slower than `rate`, if any.
std::optional<uint8_t> rate_below(uint8_t rate);

// Kinds of enum a selector applies to.
enum class Kind { kMtu, kRate };

// Does `have` satisfy `want` under `selector` (0 >, 1 <, 2 =, 3 any)?
bool satisfies(Kind kind, uint8_t have, uint8_t selector, uint8_t want);

// The value a new group or path gets when the requester asks for `want`
// under `selector` and the port (or path) can do `cap`: selector 3 or an
// unmasked pair (selector nullopt) gives `cap`; `>` gives cap when
// cap > want; `<` gives min(cap, the value just below want); `=` gives
// want as asked (the caller checks it against cap). nullopt when no value
// can satisfy the request.
std::optional<uint8_t> resolve(Kind kind, std::optional<uint8_t> selector, uint8_t want,
                               uint8_t cap);

}  // namespace ibfab::sm::sa_enum
