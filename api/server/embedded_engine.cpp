// The client core's in-process transport (IBFAB_TOPOLOGY): an engine with
// the built-in SM on a thread of this process, serving a private socket the
// process then connects to as it would to `ibfab serve` (in a directory of
// its own that only this user may enter). Registered with
// the client core at load time; linked into the drop-in libraries. While
// the engine's thread yields its core (cores are scarce), the process's
// threads that post and poll run its rounds themselves (Engine::drive,
// through client::drive_embedded).
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "api/client/session.h"
#include "api/client/socket_path.h"
#include "api/server/engine.h"

namespace ibfab::api {
namespace {

std::string g_dir;  // a private directory (mkdtemp: mode 0700) holding the socket, removed at exit
// The engine this copy of the library started, for progress by its
// callers (Engine::drive); null in a child after fork(), whose copy of it
// has no thread and serves no one.
std::atomic<Engine*> g_engine{nullptr};

int drive() {
  Engine* engine = g_engine.load(std::memory_order_acquire);
  if (!engine) return -1;
  switch (engine->drive()) {
    case Engine::Drive::kBusy: return -1;
    case Engine::Drive::kDone: return 0;
    case Engine::Drive::kWake: return 1;
  }
  return -1;
}

std::string start_embedded(const std::string& topology, std::string& why) {
  static std::atomic<bool> never{false};
  try {
    EngineOptions o;
    o.topology = topology;
    o.every_host_local = true;  // one process: every host is its own
    if (const char* grace = std::getenv("IBFAB_RX_GRACE_US"); grace && *grace) o.rx_grace_us = std::atoll(grace);
    auto* engine = new Engine(o);  // lives as long as the process
    if (const std::string e = engine->bring_up(); !e.empty()) {
      why = "IBFAB_TOPOLOGY=" + topology + ": " + e;
      return "";
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/ibfab-embedded.XXXXXX";
    if (!::mkdtemp(dir.data())) {
      why = "cannot make a directory for the in-process engine's socket: " + dir + ": " + std::strerror(errno);
      return "";
    }
    const std::string path = dir + "/ibfab.sock";
    const int fd = listen_at(path, why);
    if (fd < 0) {
      ::rmdir(dir.c_str());
      return "";
    }
    g_dir = dir;
    std::atexit([] {
      ::unlink((g_dir + "/ibfab.sock").c_str());
      ::rmdir(g_dir.c_str());
    });
    g_engine.store(engine, std::memory_order_release);
    ::pthread_atfork(nullptr, nullptr, [] { g_engine.store(nullptr, std::memory_order_relaxed); });
    std::thread([engine, fd] { engine->serve(fd, never); }).detach();
    return path;
  } catch (const std::exception& e) {
    why = "IBFAB_TOPOLOGY=" + topology + ": " + e.what();
    return "";
  }
}

const bool registered =
    (client::register_embedded_starter(&start_embedded), client::register_embedded_driver(&drive), true);

}  // namespace
}  // namespace ibfab::api
