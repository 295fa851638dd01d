#include "bench/phold.h"

#include <functional>
#include <queue>
#include <vector>

#include "sim/simulator.h"

namespace ibfab::bench {
namespace {

struct IbfabPhold {
  sim::Simulator sim;
  PholdParams p;
  uint64_t handled = 0;

  IbfabPhold(const PholdParams& params, uint64_t seed, const char* scheduler)
      : sim(seed, sim::make_scheduler(scheduler)), p(params) {}

  void handle(uint32_t lp) {
    if (++handled == p.events) sim.stop();
    uint32_t target;
    int64_t delay;
    phold_draw(sim.rng(), p, lp, target, delay);
    sim.schedule(sim::Time::ps(delay), [this, target] { handle(target); });
  }
};

struct NaiveEvent {
  int64_t when;
  uint64_t seq;
  std::function<void()> fn;
  bool operator>(const NaiveEvent& o) const {
    return when > o.when || (when == o.when && seq > o.seq);
  }
};

struct NaivePhold {
  std::priority_queue<NaiveEvent, std::vector<NaiveEvent>, std::greater<>> queue;
  sim::Rng rng;
  PholdParams p;
  int64_t now = 0;
  uint64_t seq = 0;
  uint64_t handled = 0;

  NaivePhold(const PholdParams& params, uint64_t seed) : rng(seed), p(params) {}

  void handle(uint32_t lp) {
    ++handled;
    uint32_t target;
    int64_t delay;
    phold_draw(rng, p, lp, target, delay);
    queue.push(NaiveEvent{now + delay, seq++, [this, target] { handle(target); }});
  }
};

}  // namespace

int64_t run_phold_ibfab(const PholdParams& p, uint64_t seed, const char* scheduler) {
  IbfabPhold m(p, seed, scheduler);
  for (uint32_t lp = 0; lp < p.lps; ++lp)
    for (uint32_t k = 0; k < p.initial; ++k) {
      const auto d = static_cast<int64_t>(m.sim.rng().exponential(p.mean_delay_ps));
      m.sim.schedule(sim::Time::ps(d), [pm = &m, lp] { pm->handle(lp); });
    }
  m.sim.run();
  return m.sim.now().ps();
}

int64_t run_phold_naive(const PholdParams& p, uint64_t seed) {
  NaivePhold m(p, seed);
  for (uint32_t lp = 0; lp < p.lps; ++lp)
    for (uint32_t k = 0; k < p.initial; ++k) {
      const auto d = static_cast<int64_t>(m.rng.exponential(p.mean_delay_ps));
      m.queue.push(NaiveEvent{d, m.seq++, [pm = &m, lp] { pm->handle(lp); }});
    }
  while (m.handled < p.events && !m.queue.empty()) {
    NaiveEvent e = m.queue.top();
    m.queue.pop();
    m.now = e.when;
    e.fn();
  }
  return m.now;
}

}  // namespace ibfab::bench
