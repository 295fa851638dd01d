#pragma once
// A double-ended queue in one ring buffer: push at either end, pop at the
// front. It allocates only when it grows (doubling), never per element, and
// keeps its capacity when emptied. Elements are default-constructed in the
// buffer's free slots and moved in and out; a popped slot is reset to a
// default-constructed value, so it holds no resources.
#include <cstddef>
#include <utility>
#include <vector>

namespace ibfab::sm {

template <class T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  T& front() { return slots_[head_]; }
  // The new element (default-constructed) at the back or the front.
  T& emplace_back() {
    grow_if_full();
    return slots_[(head_ + size_++) & (slots_.size() - 1)];
  }
  T& emplace_front() {
    grow_if_full();
    head_ = (head_ + slots_.size() - 1) & (slots_.size() - 1);
    ++size_;
    return slots_[head_];
  }
  void pop_front() {
    slots_[head_] = T{};
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

 private:
  void grow_if_full() {
    if (size_ < slots_.size()) return;
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;  // capacity a power of two (or none yet)
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace ibfab::sm
