#pragma once
// The clock that orders what one process does across its channels
// (docs/ARCHITECTURE.md, program order): CLOCK_MONOTONIC in nanoseconds,
// read by the client when it posts a send or sends a MAD, and by the
// engine when it takes them. One clock for every process of the machine
// (the engine and its clients share a Unix socket, so they share a
// machine): a stamp taken after another in one thread, or after anything
// that happened before, is not smaller.
#include <time.h>

#include <cstdint>

namespace ibfab::api {

inline uint64_t program_clock_ns() {
  timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace ibfab::api
