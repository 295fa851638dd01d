#pragma once
// One connection to a served engine, as a host's kernel side would have it
// (protocol.h), for the commands that ask the engine about a host.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "api/client/protocol.h"
#include "api/client/seqpacket.h"

namespace ibfab::cli {

class EngineConnection {
 public:
  // Connects to the engine at `socket` as host `node`. Throws
  // std::runtime_error saying why not (no engine, no such host, refused).
  EngineConnection(const std::string& socket, const std::string& node, api::ConnectionKind kind);
  ~EngineConnection();
  EngineConnection(const EngineConnection&) = delete;
  EngineConnection& operator=(const EngineConnection&) = delete;

  // Sends `type` with `body` and returns the reply's body as a `Reply`.
  // Throws std::runtime_error when the engine is gone or refuses.
  template <class Reply>
  Reply ask(api::MsgType type, const void* body, std::size_t size, api::MsgType reply_type) {
    send(type, body, size);
    std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(Reply)> buf;
    const std::span<const uint8_t> msg = receive(buf);
    if (const std::optional<Reply> r = api::body_as<Reply>(msg, reply_type)) return *r;
    refused(msg);
  }

 private:
  void send(api::MsgType type, const void* body, std::size_t size);
  std::span<const uint8_t> receive(std::span<uint8_t> buf);
  [[noreturn]] static void refused(std::span<const uint8_t> msg);

  int fd_ = -1;
};

}  // namespace ibfab::cli
