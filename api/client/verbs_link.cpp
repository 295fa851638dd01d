#include "api/client/verbs_link.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "api/client/seqpacket.h"
#include "api/client/socket_path.h"
#include "api/client/verbs_protocol.h"

namespace ibfab::client {

int VerbsLink::open(const std::string& socket, const std::string& node) {
  close();
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return -errno;
  fd_ = api::connect_to(socket);
  if (fd_ < 0) {
    const int e = fd_;
    ::close(pair[0]);
    ::close(pair[1]);
    return e;
  }
  async_fd_ = pair[0];
  // The engine reads and writes the memory this process registers
  // (process_vm_readv/writev): under Yama's ptrace_scope 1 that needs this
  // process to name it as its ptracer. Without Yama the call fails, and
  // nothing is needed.
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0 && peer.pid > 0 && peer.pid != ::getpid())
    (void)::prctl(PR_SET_PTRACER, static_cast<unsigned long>(peer.pid), 0, 0, 0);
  api::Hello h;
  h.pid = static_cast<uint32_t>(::getpid());
  h.kind = api::ConnectionKind::Verbs;
  std::strncpy(h.node, node.c_str(), sizeof h.node - 1);
  const int give[] = {pair[1]};
  int e = api::send_message(fd_, api::MsgType::Hello, &h, sizeof h, {}, give);
  ::close(pair[1]);  // the engine has its own copy now
  api::HelloReply r;
  api::ReceivedFds fds;
  if (e == 0) {
    std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(api::ErrorBody) + sizeof r> buf;
    const ssize_t n = api::recv_message(fd_, buf, &fds);
    const std::span<const uint8_t> msg(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
    if (n <= 0) e = n == 0 ? -ECONNRESET : static_cast<int>(n);
    else if (auto err = api::body_as<api::ErrorBody>(msg, api::MsgType::Error)) e = -(err->status ? err->status : EPROTO);
    else if (auto reply = api::body_as<api::HelloReply>(msg, api::MsgType::HelloReply)) e = reply->status;
    else e = -EPROTO;
    if (e == 0 && fds.count != 2) e = -EPROTO;
  }
  if (e == 0) {
    doorbell_ = fds.take(0);
    e = page_region_.map(fds.take(1), sizeof(api::rings::EnginePage));
    page_ = page_region_.as<api::rings::EnginePage>();
  }
  if (e != 0) close();
  return e;
}

void VerbsLink::close() {
  for (int* f : {&fd_, &async_fd_, &doorbell_}) {
    if (*f >= 0) ::close(*f);
    *f = -1;
  }
  page_region_.reset();
  page_ = nullptr;
}

void VerbsLink::ring() const {
  const uint64_t one = 1;
  (void)!::write(doorbell_, &one, sizeof one);
}

int64_t VerbsLink::exchange(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds,
                            api::MsgType reply_type, void* reply, std::size_t reply_size) {
  std::lock_guard lock(mu_);
  if (fd_ < 0) return -ENOTCONN;
  if (const int e = api::send_message(fd_, type, body, size, {}, fds)) return e;
  std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(api::NodeReply)> buf;
  const ssize_t n = api::recv_message(fd_, buf);
  if (n <= 0) return n == 0 ? -ECONNRESET : n;
  const std::span<const uint8_t> msg(buf.data(), static_cast<std::size_t>(n));
  if (auto err = api::body_as<api::ErrorBody>(msg, api::MsgType::Error)) return -(err->status ? err->status : EPROTO);
  if (api::type_of(msg) != reply_type || msg.size() != sizeof(api::MsgHeader) + reply_size) return -EPROTO;
  std::memcpy(reply, msg.data() + sizeof(api::MsgHeader), reply_size);
  return 0;
}

int64_t VerbsLink::request(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds) {
  api::VerbsReply r;
  if (const int64_t e = exchange(type, body, size, fds, api::MsgType::VerbsReply, &r, sizeof r)) return e;
  return r.value;
}

int VerbsLink::query_node(api::NodeReply& out) {
  const char none = 0;
  return static_cast<int>(exchange(api::MsgType::QueryNode, &none, 0, {}, api::MsgType::NodeReply, &out, sizeof out));
}

}  // namespace ibfab::client
