#pragma once
// A verbs connection to the engine (verbs_protocol.h), as the client holds
// it: the socket for requests, the async event socket's client end, and
// what wakes the engine (the doorbell and the engine page).
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "api/client/protocol.h"
#include "api/client/session.h"
#include "api/client/shared_memory.h"
#include "api/client/verbs_rings.h"

namespace ibfab::client {

class VerbsLink {
 public:
  VerbsLink() = default;
  ~VerbsLink() { close(); }
  VerbsLink(const VerbsLink&) = delete;
  VerbsLink& operator=(const VerbsLink&) = delete;

  // Connects to the engine at `socket` as a verbs context on `node`.
  // Returns 0 or -errno.
  int open(const std::string& socket, const std::string& node);
  void close();

  // Sends a request (with `fds`, which stay the caller's) and waits for its
  // VerbsReply: the value (>= 0) or -errno. One request at a time.
  int64_t request(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds = {});
  // QueryNode on this connection; 0 or -errno.
  int query_node(api::NodeReply& out);

  // After posting work: wakes the engine if it sleeps, unless it yields
  // and this thread could move the work itself (the in-process
  // transport's engine: drive_embedded). No system call while it runs.
  void doorbell() const {
    page_->posts.value.fetch_add(1, std::memory_order_release);  // after the WQEs: EnginePage::posts
    std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with the engine's before it sleeps
    const uint32_t sleeping = page_->sleeping.value.load(std::memory_order_relaxed);
    if (sleeping && (sleeping != api::rings::EnginePage::kYielding || drive_embedded() != 0)) ring();
  }
  // From a poll that found nothing: while the engine yields, moves its
  // work on from this thread if it can (drive_embedded), waking the
  // engine when that left it work.
  void progress() const {
    if (page_->sleeping.value.load(std::memory_order_relaxed) == api::rings::EnginePage::kYielding &&
        drive_embedded() > 0)
      ring();
  }
  int async_fd() const { return async_fd_; }

 private:
  void ring() const;
  int64_t exchange(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds,
                   api::MsgType reply_type, void* reply, std::size_t reply_size);

  std::mutex mu_;
  int fd_ = -1;
  int async_fd_ = -1;
  int doorbell_ = -1;
  api::SharedMemory page_region_;
  api::rings::EnginePage* page_ = nullptr;
};

}  // namespace ibfab::client
