#pragma once
// SA selectors (IBTA 1.3 vol 1, 15.2.5.16 and 15.2.5.17): the 2-bit field
// in front of MTU, Rate and PacketLifeTime in MCMemberRecord and PathRecord.
// A selector says how the SA compares the record's value with the one it
// has; it applies only when both the selector and the value are in the
// ComponentMask. Replies carry kExactly.
#include <cstdint>

namespace ibfab::mad::selector {

inline constexpr uint8_t kGreaterThan = 0;
inline constexpr uint8_t kLessThan = 1;
inline constexpr uint8_t kExactly = 2;
// 3 asks for the best value available: the largest MTU or Rate, the
// smallest PacketLifeTime.
inline constexpr uint8_t kLargest = 3;
inline constexpr uint8_t kSmallest = 3;

}  // namespace ibfab::mad::selector
