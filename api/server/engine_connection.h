#pragma once
// What the engine's own files share about a client connection: the
// Connection record (engine.cpp serves it, engine_admission.cpp admits it
// and charges it to the budget) and the clock both pace by. Private to
// api/server.
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "api/server/engine.h"

namespace ibfab::api {

// CLOCK_MONOTONIC in nanoseconds: the paced clock and the admission timers.
inline int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One client connection, of any kind (protocol.h: control, MAD port, verbs, CM).
struct Engine::Connection {
  int fd = -1;
  bool greeted = false;
  ConnectionKind kind = ConnectionKind::Control;
  uint32_t pid = 0;
  fabric::Hca* hca = nullptr;  // null for a control session that names no host
  VerbsContext* verbs = nullptr;  // a verbs connection's objects
  CmService::Client* cm = nullptr;  // a connection manager's ids
  uint8_t port = 0;
  uint32_t handle = 0;
  std::vector<std::unique_ptr<UmadAgent>> agents;  // index = the client's agent id (null: unregistered)
  // Messages the socket could not take yet, oldest first, sent when it is
  // writable again.
  std::deque<std::vector<uint8_t>> out;
  std::vector<uint8_t> partial;  // the fragments of a long SendMad so far (its whole size reserved)
  std::size_t charged = 0;       // of the engine's budget: `out`'s bytes, `partial`'s capacity, cm_charged
  std::size_t cm_charged = 0;    // a CM connection: CmService::held as last charged
  std::vector<uint8_t> held;     // MAD port: a message read, not yet handled (program order)
  uint64_t held_stamp = 0;       // its SendMad stamp (0: any other message, handled first)
  bool broken = false;  // a write failed (not for lack of room): close it
  std::string who() const { return "client pid " + std::to_string(pid); }
};

}  // namespace ibfab::api
