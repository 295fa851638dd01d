#pragma once
// The engine the engine-facing fuzzers drive: fat-tree:2:4 with its SM up,
// one per fuzzer process, run a few rounds at a time with no listening
// socket (connections are adopted socketpairs).
#include <cstdlib>

#include "api/server/engine.h"

namespace ibfab::fuzz {

inline api::Engine& engine() {
  static api::Engine* e = [] {
    api::EngineOptions o;
    o.topology = "fat-tree:2:4";
    auto* made = new api::Engine(o);
    if (!made->bring_up().empty()) std::abort();
    return made;
  }();
  return *e;
}

inline void pump() {
  for (int i = 0; i < 4; ++i) engine().serve_once(-1, 0);
}

}  // namespace ibfab::fuzz
