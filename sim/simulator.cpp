#include "sim/simulator.h"

namespace ibfab::sim {

Simulator::Simulator(uint64_t seed, std::unique_ptr<Scheduler> scheduler)
    : scheduler_(scheduler ? std::move(scheduler) : make_scheduler(kDefaultScheduler)),
      fifo_(64),
      rng_(seed) {}

Simulator::~Simulator() { clear(); }

void Simulator::clear() {
  QueueEntry e;
  while (next_entry(e)) {
    pool_.retire(e.slot());
    pool_.release(e.slot());
  }
  live_ = 0;
  tombstones_ = 0;
}

bool Simulator::pending(EventHandle h) const {
  if (!h.valid() || h.slot >= pool_.used()) return false;
  const EventRecord& r = pool_.at(h.slot);
  return r.generation == h.generation && r.ops != nullptr;
}

bool Simulator::cancel(EventHandle h) {
  if (!pending(h)) return false;
  pool_.retire(h.slot);
  --live_;
  if (++tombstones_ >= kPurgeAt && tombstones_ > live_) purge_tombstones();
  return true;
}

void Simulator::purge_tombstones() {
  const auto drop_if_dead = [this](const QueueEntry& e) {
    if (pool_.at(e.slot()).ops != nullptr) return false;
    pool_.release(e.slot());
    --tombstones_;
    return true;
  };
  // Draining and refilling the scheduler keeps every live entry's key, so
  // the order of the run does not change.
  kept_.clear();
  QueueEntry e;
  while (scheduler_->pop_min(e))
    if (!drop_if_dead(e)) kept_.push_back(e);
  for (const QueueEntry& k : kept_) scheduler_->insert(k);
  const std::size_t mask = fifo_.size() - 1;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < fifo_size_; ++i) {
    const QueueEntry f = fifo_[(fifo_head_ + i) & mask];
    if (!drop_if_dead(f)) fifo_[(fifo_head_ + kept++) & mask] = f;
  }
  fifo_size_ = kept;
}

void Simulator::fifo_push(QueueEntry e) {
  if (fifo_size_ == fifo_.size()) {
    std::vector<QueueEntry> bigger(fifo_.size() * 2);
    for (std::size_t i = 0; i < fifo_size_; ++i)
      bigger[i] = fifo_[(fifo_head_ + i) & (fifo_.size() - 1)];
    fifo_ = std::move(bigger);
    fifo_head_ = 0;
  }
  fifo_[(fifo_head_ + fifo_size_++) & (fifo_.size() - 1)] = e;
}

bool Simulator::next_entry(QueueEntry& out) {
  if (fifo_size_ != 0 && (scheduler_->empty() || fifo_[fifo_head_] < scheduler_->top())) {
    out = fifo_[fifo_head_];
    fifo_head_ = (fifo_head_ + 1) & (fifo_.size() - 1);
    --fifo_size_;
    return true;
  }
  if (!scheduler_->pop_min(out)) return false;
  // Records of events queued long ago are likely cache misses: start
  // loading one a few events ahead, or the next one if that is all the
  // scheduler can tell.
  const QueueEntry* next = scheduler_->upcoming(kPrefetchAhead);
  if (!next) next = scheduler_->upcoming(0);
  if (next) __builtin_prefetch(&pool_.at(next->slot()));
  return true;
}

void Simulator::run_entry(const QueueEntry& e) {
  const uint32_t slot = e.slot();
  EventRecord& r = pool_.at(slot);
  const CallbackOps* ops = r.ops;
  if (ops == nullptr) {  // cancelled: a tombstone
    pool_.release(slot);
    --tombstones_;
    return;
  }
  // The event stops being pending before it runs (its handle goes stale),
  // but its slot is recycled only afterwards: the callable runs in place.
  r.ops = nullptr;
  EventPool::bump(r);
  --live_;
  now_ = Time::ps(e.when);
  if ((++events_run_ & 4095) == 0) progress_->clock(e.when, events_run_);
  ops->invoke(r.storage);
  if (ops->destroy) ops->destroy(r.storage);
  pool_.release(slot);
}

bool Simulator::step() {
  QueueEntry e;
  while (next_entry(e)) {
    const bool live = pool_.at(e.slot()).ops != nullptr;
    run_entry(e);
    if (live) return true;
  }
  return false;
}

void Simulator::run() {
  stopped_ = false;
  QueueEntry e;
  while (!stopped_ && next_entry(e)) run_entry(e);
}

bool Simulator::peek_when(int64_t& when) {
  for (;;) {
    const bool heap = !scheduler_->empty();
    QueueEntry e;
    if (fifo_size_ != 0 && (!heap || fifo_[fifo_head_] < scheduler_->top())) e = fifo_[fifo_head_];
    else if (heap) e = scheduler_->top();
    else return false;
    if (pool_.at(e.slot()).ops != nullptr) {
      when = e.when;
      return true;
    }
    next_entry(e);  // drop the tombstone
    pool_.release(e.slot());
    --tombstones_;
  }
}

void Simulator::run_until(Time limit) {
  stopped_ = false;
  int64_t when;
  while (!stopped_ && peek_when(when) && when <= limit.ps()) {
    QueueEntry e;
    next_entry(e);
    run_entry(e);
  }
  if (!stopped_ && now_ < limit) now_ = limit;
}

}  // namespace ibfab::sim
