#include "sim/scheduler.h"

#include <algorithm>

namespace ibfab::sim {

void BinaryHeapScheduler::grow() {
  const std::size_t cap = std::max<std::size_t>(1024, capacity_ * 2);
  auto bigger = std::make_unique<QueueEntry[]>(cap);
  std::copy(heap_.get(), heap_.get() + size_, bigger.get());
  heap_ = std::move(bigger);
  capacity_ = cap;
}

void BinaryHeapScheduler::insert(QueueEntry e) {
  if (size_ == capacity_) grow();
  QueueEntry* h = heap_.get();
  std::size_t i = size_++;
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!(e < h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

void BinaryHeapScheduler::pop() {
  QueueEntry* h = heap_.get();
  const std::size_t n = --size_;
  if (n == 0) return;
  const QueueEntry last = h[n];
  // Sink the hole at the root to a leaf, always taking the smaller child.
  std::size_t i = 0;
  for (std::size_t child = 1; child < n; child = 2 * i + 1) {
    if (child + 1 < n && h[child + 1] < h[child]) ++child;
    h[i] = h[child];
    i = child;
  }
  // Sift the former last element up from the hole.
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!(last < h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = last;
}

std::unique_ptr<Scheduler> make_scheduler(const std::string& name) {
  if (name == "heap") return std::make_unique<BinaryHeapScheduler>();
  return nullptr;
}

}  // namespace ibfab::sim
