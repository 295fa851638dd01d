#pragma once
// A type-erased `void()` callable stored in caller-provided bytes.
//
// Contract: the callable must fit in the storage it is emplaced into and be
// at most 16-byte aligned (checked at compile time), so scheduling an event
// never allocates. Trivially destructible callables skip the destroy call.
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace ibfab::sim {

struct CallbackOps {
  void (*invoke)(void* storage);
  void (*destroy)(void* storage);  // null when the callable is trivially destructible
};

template <class F>
struct CallbackOpsFor {
  static void invoke(void* p) { (*std::launder(static_cast<F*>(p)))(); }
  static void destroy(void* p) { std::launder(static_cast<F*>(p))->~F(); }
  static constexpr CallbackOps ops{&invoke,
                                   std::is_trivially_destructible_v<F> ? nullptr : &destroy};
};

// Constructs `f` in `storage` and returns its ops table.
template <std::size_t Capacity, class F>
const CallbackOps* emplace_callback(void* storage, F&& f) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_r_v<void, Fn&>, "an event callback takes no arguments");
  static_assert(sizeof(Fn) <= Capacity,
                "event callback captures too much: capture a pointer or an index instead");
  static_assert(alignof(Fn) <= 16, "event callback is over-aligned");
  ::new (storage) Fn(std::forward<F>(f));
  return &CallbackOpsFor<Fn>::ops;
}

}  // namespace ibfab::sim
