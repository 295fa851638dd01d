#include "tools/cli/engine_connection.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/client/session.h"
#include "api/client/socket_path.h"

namespace ibfab::cli {

EngineConnection::EngineConnection(const std::string& socket, const std::string& node, api::ConnectionKind kind) {
  std::string why;
  fd_ = api::connect_to(socket, &why);
  if (fd_ == -ENOENT || fd_ == -ECONNREFUSED) throw std::runtime_error(why + " (start one with `ibfab serve`)");
  if (fd_ < 0) throw std::runtime_error(why);
  uint32_t handle = 0;
  const int e = client::greet(fd_, node, kind, 0, handle);
  if (e == 0) return;
  ::close(fd_);
  if (e == -ENODEV) throw std::runtime_error("the served fabric has no host named '" + node + "'");
  if (const std::string refused = api::refusal(e); !refused.empty())
    throw std::runtime_error("refused by the ibfab engine at " + socket + ": " + refused);
  throw std::runtime_error(socket + ": " + std::strerror(-e));
}

EngineConnection::~EngineConnection() { ::close(fd_); }

void EngineConnection::send(api::MsgType type, const void* body, std::size_t size) {
  if (const int e = api::send_message(fd_, type, body, size))
    throw std::runtime_error(std::string("the engine went away: ") + std::strerror(-e));
}

std::span<const uint8_t> EngineConnection::receive(std::span<uint8_t> buf) {
  const ssize_t n = api::recv_message(fd_, buf);
  return {buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0};
}

void EngineConnection::refused(std::span<const uint8_t> msg) {
  if (const auto err = api::body_as<api::ErrorBody>(msg, api::MsgType::Error))
    throw std::runtime_error(std::string("the engine refused the request: ") + err->text);
  throw std::runtime_error("the engine gave no answer to a request");
}

}  // namespace ibfab::cli
