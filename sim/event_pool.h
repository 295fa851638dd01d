#pragma once
// Storage for scheduled events: fixed-size records in chunks that never
// move, recycled through a free list. Scheduling and running an event touch
// no allocator once the pool has grown to the simulation's working set.
#include <cstdint>
#include <new>
#include <vector>

#include "sim/event_handle.h"
#include "sim/inline_callback.h"
#include "sim/scheduler.h"

namespace ibfab::sim {

struct EventRecord {
  static constexpr std::size_t kCapacity = 48;  // bytes of captured state
  alignas(16) unsigned char storage[kCapacity];
  const CallbackOps* ops = nullptr;  // null: free, cancelled, or running
  uint32_t generation = 1;           // bumped whenever the event ends
  uint32_t next_free = 0;
};
static_assert(sizeof(EventRecord) == 64, "one event record per cache line");

class EventPool {
 public:
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool();

  EventRecord& at(uint32_t slot) { return chunks_[slot >> kChunkBits][slot & kChunkMask]; }
  const EventRecord& at(uint32_t slot) const {
    return chunks_[slot >> kChunkBits][slot & kChunkMask];
  }

  uint32_t acquire() {
    if (free_head_ != kNone) {
      const uint32_t slot = free_head_;
      free_head_ = at(slot).next_free;
      return slot;
    }
    // Slots are handed out in order the first time, so a simulation touches
    // only as many records as it ever has pending at once.
    if (used_ == capacity()) add_chunk();
    EventRecord* r = &at(used_);
    ::new (r) EventRecord();
    return used_++;
  }

  void release(uint32_t slot) {
    at(slot).next_free = free_head_;
    free_head_ = slot;
  }

  // Ends the event in `slot` without running it: destroys its state and
  // makes every handle to it stale. The slot stays out of the free list until
  // release() (the scheduler still holds an entry for it).
  void retire(uint32_t slot) {
    EventRecord& r = at(slot);
    if (r.ops && r.ops->destroy) r.ops->destroy(r.storage);
    r.ops = nullptr;
    bump(r);
  }

  static void bump(EventRecord& r) {
    if (++r.generation == 0) r.generation = 1;
  }

  // Slots handed out so far (valid handles name slots below this).
  uint32_t used() const { return used_; }
  std::size_t capacity() const { return chunks_.size() << kChunkBits; }

 private:
  // 2 MiB chunks, aligned and advised as transparent huge pages: a large
  // simulation's records are read in an order unrelated to where they sit,
  // and 4 KiB pages would cost a TLB miss per event.
  static constexpr unsigned kChunkBits = 15;
  static constexpr uint32_t kChunkMask = (1u << kChunkBits) - 1;
  static constexpr uint32_t kNone = UINT32_MAX;

  void add_chunk();

  std::vector<EventRecord*> chunks_;
  uint32_t used_ = 0;
  uint32_t free_head_ = kNone;
};

}  // namespace ibfab::sim
