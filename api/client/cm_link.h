#pragma once
// The process's connection manager connection (cm_protocol.h): one per
// process, opened on first use over the session's socket, as the host the
// session names. Requests go one at a time (a mutex) and each waits for
// its CmReply. Event channels are sockets of their own, handed to the
// engine with CmCreateChannel; nothing but replies comes back here.
#include <cstddef>
#include <mutex>
#include <span>
#include <string>

#include "api/client/cm_protocol.h"
#include "api/client/protocol.h"

namespace ibfab::client {

class CmLink {
 public:
  // The process's CM connection, opened now if it is not yet; nullptr when
  // there is no session or the engine refuses the connection (`why`, if
  // given, then says why). A failed attempt is tried again on the next call.
  static CmLink* get(std::string* why = nullptr);

  // Sends a request (with `fds`, which stay the caller's) and waits for its
  // reply. The reply's value is the engine's (>= 0, or -errno as the
  // kernel's rdma_ucm returns it); an Error message or a broken connection
  // gives -errno there too (-ECONNRESET: the engine is gone).
  api::CmReply request(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds = {});

  CmLink(const CmLink&) = delete;
  CmLink& operator=(const CmLink&) = delete;

 private:
  explicit CmLink(int fd) : fd_(fd) {}

  std::mutex mu_;  // one request at a time: held from the send to the reply
  int fd_;
};

}  // namespace ibfab::client
