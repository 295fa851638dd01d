#include "sim/scheduler.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "sim/ladder_scheduler.h"

namespace ibfab::sim {

template <unsigned D>
DaryHeapScheduler<D>::~DaryHeapScheduler() {
  std::free(block_);
}

template <unsigned D>
void DaryHeapScheduler<D>::grow() {
  const std::size_t cap = std::max<std::size_t>(1024, capacity_ * 2);
  // Over-allocate by one line and place index 1 on a line boundary, so that
  // each sibling group D*i+1 .. D*i+D (D * 16 bytes) starts a cache line.
  constexpr std::size_t kLine = 64;
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  const std::size_t bytes = (cap + 1) * sizeof(QueueEntry) + kLine;
  // Large heaps are read at random on every pop: back them with
  // transparent huge pages so the lower levels cost no TLB misses.
  void* block = bytes >= kHuge ? std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge)
                               : std::malloc(bytes);
  if (!block) throw std::bad_alloc();
  if (bytes >= kHuge) ::madvise(block, (bytes + kHuge - 1) / kHuge * kHuge, MADV_HUGEPAGE);
  auto base = reinterpret_cast<uintptr_t>(block);
  const uintptr_t first_child = (base + sizeof(QueueEntry) + kLine - 1) & ~(kLine - 1);
  auto* heap = reinterpret_cast<QueueEntry*>(first_child - sizeof(QueueEntry));
  std::copy(heap_, heap_ + size_, heap);
  std::free(block_);
  block_ = block;
  heap_ = heap;
  capacity_ = cap;
}

template <unsigned D>
void DaryHeapScheduler<D>::insert(QueueEntry e) {
  if (size_ == capacity_) grow();
  QueueEntry* h = heap_;
  std::size_t i = size_++;
  const auto key = e.key();
  while (i > 0) {
    const std::size_t parent = (i - 1) / D;
    if (key >= h[parent].key()) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

template <unsigned D>
void DaryHeapScheduler<D>::pop() {
  QueueEntry* h = heap_;
  const std::size_t n = --size_;
  if (n == 0) return;
  const QueueEntry last = h[n];
  std::size_t i = 0;
  // Sink the hole along the smallest children while a full sibling group
  // exists below it; each choice is a conditional move, not a branch.
  for (std::size_t first = 1; first + D <= n; first = D * i + 1) {
    std::size_t best = first;
    auto best_key = h[first].key();
    for (unsigned k = 1; k < D; ++k) {
      const auto kk = h[first + k].key();
      const bool less = kk < best_key;
      best = less ? first + k : best;
      best_key = less ? kk : best_key;
    }
    h[i] = h[best];
    i = best;
  }
  // A last, partial sibling group.
  if (const std::size_t first = D * i + 1; first < n) {
    std::size_t best = first;
    for (std::size_t c = first + 1; c < n; ++c)
      if (h[c] < h[best]) best = c;
    h[i] = h[best];
    i = best;
  }
  const auto key = last.key();
  while (i > 0) {
    const std::size_t parent = (i - 1) / D;
    if (key >= h[parent].key()) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = last;
}

template class DaryHeapScheduler<2>;
template class DaryHeapScheduler<4>;
template class DaryHeapScheduler<8>;

std::unique_ptr<Scheduler> make_scheduler(const std::string& name) {
  if (name == "heap") return std::make_unique<DaryHeapScheduler<2>>();
  if (name == "heap4") return std::make_unique<DaryHeapScheduler<4>>();
  if (name == "heap8") return std::make_unique<DaryHeapScheduler<8>>();
  if (name == "ladder") return std::make_unique<LadderScheduler>();
  return nullptr;
}

}  // namespace ibfab::sim
