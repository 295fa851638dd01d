#pragma once
// A test fixture's engine: built from EngineOptions (fat-tree:2:4 unless
// they name a topology), brought up, and served on a private socket by a
// thread of the test, as `ibfab serve` serves it. stop() pauses serving so
// that the test may read or change the fabric; resume() goes on.
// serve_until() waits for a state of the engine rather than for a time.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "api/client/socket_path.h"
#include "api/server/engine.h"

namespace ibfab::api::testing {

class EngineThread {
 public:
  // "" when it serves, else why not.
  std::string start(EngineOptions o, const std::string& name) {
    path_ = "/tmp/ibfab-" + name + "-" + std::to_string(::getpid()) + ".sock";
    if (o.topology.empty()) o.topology = "fat-tree:2:4";
    engine_ = std::make_unique<Engine>(o);
    if (std::string e = engine_->bring_up(); !e.empty()) return e;
    std::string error;
    listen_fd_ = listen_at(path_, error);
    if (listen_fd_ < 0) return error;
    resume();
    return "";
  }
  ~EngineThread() {
    stop();
    engine_.reset();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  void stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
  }
  void resume() {
    stop_ = false;
    thread_ = std::thread([this] { engine_->serve(listen_fd_, stop_); });
  }
  // Serves rounds on the calling thread, the engine's own thread stopped,
  // until `holds()` (called between rounds, so it may read the engine) is
  // true or `deadline` has passed; the engine's thread then serves again.
  // Whether it held. The deadline only decides when to give up.
  template <class Pred>
  bool serve_until(Pred holds, std::chrono::seconds deadline = std::chrono::seconds(60)) {
    stop();
    const auto end = std::chrono::steady_clock::now() + deadline;
    bool held = holds();
    while (!held && std::chrono::steady_clock::now() < end) {
      engine_->serve_once(listen_fd_, 100);
      held = holds();
    }
    resume();
    return held;
  }
  // What `read()` returns, called with the engine's thread stopped.
  template <class Read>
  auto read(Read read) {
    stop();
    auto value = read();
    resume();
    return value;
  }
  const std::string& path() const { return path_; }
  Engine& engine() { return *engine_; }

 private:
  std::string path_;
  std::unique_ptr<Engine> engine_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ibfab::api::testing
