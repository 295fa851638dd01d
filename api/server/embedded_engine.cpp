// The client core's in-process transport (IBFAB_TOPOLOGY): an engine with
// the built-in SM on a thread of this process, serving a private socket the
// process then connects to as it would to `ibfab serve`. Registered with
// the client core at load time; linked into the drop-in libraries.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>

#include "api/client/session.h"
#include "api/client/socket_path.h"
#include "api/server/engine.h"

namespace ibfab::api {
namespace {

std::string g_path;  // the socket file, removed at exit

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
    const std::string path = "/tmp/ibfab-embedded-" + std::to_string(::getpid()) + ".sock";
    const int fd = listen_at(path, why);
    if (fd < 0) return "";
    g_path = path;
    std::atexit([] { ::unlink(g_path.c_str()); });
    std::thread([engine, fd] { engine->serve(fd, never); }).detach();
    return path;
  } catch (const std::exception& e) {
    why = "IBFAB_TOPOLOGY=" + topology + ": " + e.what();
    return "";
  }
}

const bool registered = (client::register_embedded_starter(&start_embedded), true);

}  // namespace
}  // namespace ibfab::api
