#pragma once
#include <cstdint>

namespace ibfab::sim {

// Names one scheduled event. Always safe to use: once the event has run or
// been cancelled, or the slot has been reused, the handle simply stops
// matching (generation check) and cancel()/pending() treat it as gone.
struct EventHandle {
  uint32_t slot = 0;
  uint32_t generation = 0;  // 0 = names no event
  bool valid() const { return generation != 0; }
};

}  // namespace ibfab::sim
