#pragma once
// PHOLD, the standard discrete-event kernel benchmark: `lps` logical
// processes start with `initial` events each; handling an event at LP i
// schedules one new event, at a uniformly chosen other LP with probability
// `remote` and at i otherwise, after an exponentially distributed delay.
// Both drivers below draw the same random numbers in the same order, so they
// do the same work and end at the same simulated time.
#include <cstdint>

#include "sim/rng.h"
#include "sim/scheduler.h"

namespace ibfab::bench {

struct PholdParams {
  uint32_t lps = 10'000;
  uint32_t initial = 10;
  double remote = 0.9;
  double mean_delay_ps = 1'000'000.0;  // 1 us
  uint64_t events = 10'000'000;        // events to run per measurement
};

// The next event's (target LP, delay in ps), drawn from `rng`.
inline void phold_draw(sim::Rng& rng, const PholdParams& p, uint32_t at, uint32_t& target,
                       int64_t& delay) {
  target = at;
  if (rng.uniform01() < p.remote) {
    target = static_cast<uint32_t>(rng.below(p.lps - 1));
    if (target >= at) ++target;
  }
  delay = 1 + static_cast<int64_t>(rng.exponential(p.mean_delay_ps));
}

// Runs PHOLD on ibfab's Simulator with the named scheduler; returns the
// final simulated time in ps.
int64_t run_phold_ibfab(const PholdParams& p, uint64_t seed, const char* scheduler = sim::kDefaultScheduler);
// Runs PHOLD on a std::priority_queue of std::function events (the naive
// baseline); returns the final simulated time in ps.
int64_t run_phold_naive(const PholdParams& p, uint64_t seed);

}  // namespace ibfab::bench
