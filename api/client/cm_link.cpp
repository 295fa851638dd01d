#include "api/client/cm_link.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "api/client/seqpacket.h"
#include "api/client/session.h"
#include "api/client/socket_path.h"

namespace ibfab::client {

CmLink* CmLink::get(std::string* why) {
  static std::mutex once;
  static CmLink* link = nullptr;  // lives as long as the process
  std::lock_guard lock(once);
  if (link) return link;
  std::string error;
  Session* session = Session::get(&error);
  if (!session) {
    if (why) *why = error;
    return nullptr;
  }
  const int fd = api::connect_to(session->socket());
  if (fd < 0) {
    if (why) *why = "no ibfab engine at " + session->socket() + ": " + std::strerror(-fd);
    return nullptr;
  }
  uint32_t handle = 0;
  if (const int e = greet(fd, session->node(), api::ConnectionKind::Cm, 0, handle)) {
    if (why) *why = "the engine refused a connection manager connection: " + std::string(std::strerror(-e));
    ::close(fd);
    return nullptr;
  }
  link = new CmLink(fd);
  return link;
}

api::CmReply CmLink::request(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds) {
  api::CmReply reply;
  std::lock_guard lock(mu_);
  if (const int e = api::send_message(fd_, type, body, size, {}, fds)) {
    reply.value = e;
    return reply;
  }
  static_assert(sizeof(api::CmReply) >= sizeof(api::ErrorBody));
  std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(api::CmReply)> buf;
  const ssize_t n = api::recv_message(fd_, buf);
  if (n <= 0) {
    reply.value = n == 0 ? -ECONNRESET : n;
    return reply;
  }
  const std::span<const uint8_t> msg(buf.data(), static_cast<std::size_t>(n));
  if (auto err = api::body_as<api::ErrorBody>(msg, api::MsgType::Error)) {
    reply.value = -(err->status ? err->status : EPROTO);
  } else if (auto r = api::body_as<api::CmReply>(msg, api::MsgType::CmReply)) {
    reply = *r;
  } else {
    reply.value = -EPROTO;
  }
  return reply;
}

}  // namespace ibfab::client
