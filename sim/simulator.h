#pragma once
// The discrete-event simulator: an object, never a singleton, so several can
// live in one process.
//
// Order: events run in (time, insertion sequence) order, a strict weak order
// with no ties, so a run is a deterministic function of its inputs. Events
// scheduled with zero delay go to a FIFO beside the scheduler; that is only
// a shortcut, the order is the same as if they had gone through it.
//
// Cost: schedule() and cancel() allocate nothing once the event pool and the
// scheduler have grown to the working set. cancel() is amortised O(1): the
// entry stays queued as a tombstone, skipped when it surfaces, and once the
// tombstones number kPurgeAt and outnumber the live events one pass drops
// them all. So cancelled timers hold no memory for their whole timeout (a
// far-off live event, such as a periodic sweep, would otherwise keep every
// timeout cancelled after it queued), and the working set is at most the
// live events twice over, plus kPurgeAt.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/event_handle.h"
#include "sim/event_pool.h"
#include "sim/rng.h"
#include "sim/scheduler.h"
#include "sim/time.h"
#include "sim/progress.h"
#include "sim/trace.h"

namespace ibfab::sim {

class Simulator {
 public:
  explicit Simulator(uint64_t seed = 1, std::unique_ptr<Scheduler> scheduler = nullptr);
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;
  ~Simulator();

  Time now() const { return now_; }

  // Runs `fn` at now() + delay. Precondition: delay >= 0 (throws otherwise).
  template <class F>
  EventHandle schedule(Time delay, F&& fn) {
    if (delay < Time::zero()) throw std::invalid_argument("ibfab: negative event delay");
    return enqueue(now_ + delay, delay == Time::zero(), std::forward<F>(fn));
  }

  // Runs `fn` at absolute time `when`. Precondition: when >= now().
  template <class F>
  EventHandle schedule_at(Time when, F&& fn) {
    if (when < now_) throw std::invalid_argument("ibfab: event scheduled in the past");
    return enqueue(when, when == now_, std::forward<F>(fn));
  }

  // Cancels a pending event. Returns false (and does nothing) if the handle
  // names no pending event: already run, already cancelled, or never valid.
  bool cancel(EventHandle h);
  bool pending(EventHandle h) const;

  // Runs one event; false when nothing is pending or stop() was called.
  bool step();
  // Runs until nothing is pending or stop() is called.
  void run();
  // Runs every event at or before `limit`, then sets now() to `limit`
  // (if it is later than now()).
  void run_until(Time limit);
  // Makes run()/run_until() return after the current event.
  void stop() { stopped_ = true; }
  // Discards every pending event, destroying its captured state without
  // running it. Time does not change.
  void clear();

  // When the earliest pending event is due; nullopt when nothing is pending.
  std::optional<Time> next_time() {
    int64_t when = 0;
    return peek_when(when) ? std::optional<Time>(Time::ps(when)) : std::nullopt;
  }

  uint64_t events_run() const { return events_run_; }
  std::size_t events_pending() const { return live_; }
  // Entries queued: the pending events and the tombstones of cancelled ones.
  std::size_t events_queued() const { return live_ + tombstones_; }

  // Tombstones that may stay queued before a purge.
  static constexpr std::size_t kPurgeAt = 4096;

  Rng& rng() { return rng_; }
  Trace& trace() { return trace_; }
  // Where the model reports how far a long job has got (sim/progress.h);
  // the clock is stored there every 4,096 events. Not owned; by default an
  // instance nobody reads.
  Progress& progress() { return *progress_; }
  void report_progress_to(Progress& p) { progress_ = &p; }

 private:
  template <class F>
  EventHandle enqueue(Time when, bool now_fifo, F&& fn) {
    if (seq_ == QueueEntry::kMaxSeq) throw std::length_error("ibfab: event sequence exhausted");
    const uint32_t slot = pool_.acquire();
    EventRecord& r = pool_.at(slot);
    r.ops = emplace_callback<EventRecord::kCapacity>(r.storage, std::forward<F>(fn));
    const QueueEntry e{when.ps(), (seq_++ << QueueEntry::kSlotBits) | slot};
    if (now_fifo) fifo_push(e);
    else scheduler_->insert(e);
    ++live_;
    return EventHandle{slot, r.generation};
  }

  static constexpr std::size_t kPrefetchAhead = 2;

  void fifo_push(QueueEntry e);
  bool next_entry(QueueEntry& out);  // pops the earliest entry of heap and FIFO
  bool peek_when(int64_t& when);     // earliest pending time, skipping tombstones
  void run_entry(const QueueEntry& e);
  void purge_tombstones();  // drops every tombstone, keeping the order

  std::unique_ptr<Scheduler> scheduler_;
  EventPool pool_;
  std::vector<QueueEntry> fifo_;  // ring buffer; capacity a power of two
  std::size_t fifo_head_ = 0, fifo_size_ = 0;
  Time now_ = Time::zero();
  uint64_t seq_ = 0;
  uint64_t events_run_ = 0;
  std::size_t live_ = 0;        // scheduled and neither run nor cancelled
  std::size_t tombstones_ = 0;  // cancelled and still queued
  std::vector<QueueEntry> kept_;  // purge_tombstones()'s scratch
  bool stopped_ = false;
  Rng rng_;
  Trace trace_;
  Progress own_progress_;
  Progress* progress_ = &own_progress_;
};

}  // namespace ibfab::sim
