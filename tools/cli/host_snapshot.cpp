#include "tools/cli/host_snapshot.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "api/client/seqpacket.h"
#include "api/client/session.h"
#include "api/client/socket_path.h"

namespace ibfab::cli {
namespace {

// A connection of `kind` to the engine as `node`, closed on scope exit.
class Connection {
 public:
  Connection(const std::string& socket, const std::string& node, api::ConnectionKind kind) {
    std::string why;
    fd_ = api::connect_to(socket, &why);
    if (fd_ == -ENOENT || fd_ == -ECONNREFUSED) throw std::runtime_error(why + " (start one with `ibfab serve`)");
    if (fd_ < 0) throw std::runtime_error(why);
    uint32_t handle = 0;
    const int e = client::greet(fd_, node, kind, 0, handle);
    if (e == -ENODEV) throw std::runtime_error("the served fabric has no host named '" + node + "'");
    if (const std::string refused = api::refusal(e); !refused.empty())
      throw std::runtime_error("refused by the ibfab engine at " + socket + ": " + refused);
    if (e < 0) throw std::runtime_error(socket + ": " + std::strerror(-e));
  }
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends `type` with `body` and returns the reply's body as a `Reply`.
  template <class Reply>
  Reply ask(api::MsgType type, const void* body, std::size_t size, api::MsgType reply_type) {
    if (const int e = api::send_message(fd_, type, body, size))
      throw std::runtime_error(std::string("the engine went away: ") + std::strerror(-e));
    std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(Reply)> buf;
    const ssize_t n = api::recv_message(fd_, buf);
    const std::span<const uint8_t> msg(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
    if (const std::optional<Reply> r = api::body_as<Reply>(msg, reply_type)) return *r;
    if (const auto err = api::body_as<api::ErrorBody>(msg, api::MsgType::Error))
      throw std::runtime_error(std::string("the engine refused the request: ") + err->text);
    throw std::runtime_error("the engine gave no answer to a device query");
  }

 private:
  int fd_ = -1;
};

}  // namespace

HostSnapshot take_snapshot(const std::string& socket, const std::string& node) {
  HostSnapshot s;
  {
    Connection control(socket, node, api::ConnectionKind::Control);
    s.node = control.ask<api::NodeReply>(api::MsgType::QueryNode, nullptr, 0, api::MsgType::NodeReply);
    if (s.node.status != 0) throw std::runtime_error("the engine has no HCA for host '" + node + "'");
  }
  Connection cm(socket, node, api::ConnectionKind::Cm);
  const uint32_t ports = std::min<uint32_t>(s.node.num_ports, api::kMaxPorts);
  for (uint32_t port = 1; port <= ports; ++port) {
    api::CmIdRequest q;
    q.arg = port;
    const api::CmReply r = cm.ask<api::CmReply>(api::MsgType::CmQueryAddress, &q, sizeof q, api::MsgType::CmReply);
    s.addresses.push_back(r.value == 0 ? r.address : api::CmPortAddress{});
  }
  return s;
}

}  // namespace ibfab::cli
