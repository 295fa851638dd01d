#pragma once
// How far a long job has got, for a progress line that another thread
// prints: the phase it is in, the work done in that phase against the work
// the phase will do (0: not known in advance), and the simulated clock.
//
// One thread writes (the simulation's); any thread may read. The fields
// are relaxed atomics, each read whole; a reader may pair a phase with a
// count from the phase before, for one read. Writing costs a plain store.
#include <atomic>
#include <cstdint>

namespace ibfab::sim {

class Progress {
 public:
  struct Reading {
    const char* phase = nullptr;  // nullptr: nothing begun yet
    const char* unit = "";        // what done and total count ("SMPs", "nodes")
    uint64_t done = 0, total = 0;
    int64_t now_ps = 0;
    uint64_t events = 0;
  };

  // A new phase; `phase` and `unit` are string literals (kept by pointer).
  void begin(const char* phase, const char* unit, uint64_t total = 0) {
    done_.store(0, kOrder);
    total_.store(total, kOrder);
    unit_.store(unit, kOrder);
    phase_.store(phase, kOrder);
  }
  void advance(uint64_t n = 1) { done_.store(done_.load(kOrder) + n, kOrder); }
  void set_done(uint64_t n) { done_.store(n, kOrder); }
  void clock(int64_t now_ps, uint64_t events) {
    now_ps_.store(now_ps, kOrder);
    events_.store(events, kOrder);
  }

  Reading read() const {
    Reading r;
    r.phase = phase_.load(kOrder);
    r.unit = unit_.load(kOrder);
    r.done = done_.load(kOrder);
    r.total = total_.load(kOrder);
    r.now_ps = now_ps_.load(kOrder);
    r.events = events_.load(kOrder);
    return r;
  }

 private:
  static constexpr std::memory_order kOrder = std::memory_order_relaxed;
  std::atomic<const char*> phase_{nullptr}, unit_{""};
  std::atomic<uint64_t> done_{0}, total_{0};
  std::atomic<int64_t> now_ps_{0};
  std::atomic<uint64_t> events_{0};
};

}  // namespace ibfab::sim
