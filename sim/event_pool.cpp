#include "sim/event_pool.h"

#include <sys/mman.h>

#include <cstdlib>
#include <stdexcept>

namespace ibfab::sim {

EventPool::~EventPool() {
  for (EventRecord* c : chunks_) std::free(c);
}

void EventPool::add_chunk() {
  if (capacity() + (std::size_t{1} << kChunkBits) > QueueEntry::kMaxSlots)
    throw std::length_error("more than 2^24 events pending at once (the scenario schedules too much at one time)");
  constexpr std::size_t kBytes = sizeof(EventRecord) << kChunkBits;  // 2 MiB
  void* mem = std::aligned_alloc(kBytes, kBytes);
  if (!mem) throw std::bad_alloc();
  ::madvise(mem, kBytes, MADV_HUGEPAGE);  // a hint; harmless where unsupported
  chunks_.push_back(static_cast<EventRecord*>(mem));
}

}  // namespace ibfab::sim
