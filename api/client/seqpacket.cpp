#include "api/client/seqpacket.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

namespace ibfab::api {

int send_message(int fd, MsgType type, const void* body, std::size_t body_size, std::span<const uint8_t> tail) {
  MsgHeader h;
  h.type = static_cast<uint16_t>(type);
  h.length = static_cast<uint32_t>(body_size + tail.size());
  iovec iov[3] = {{&h, sizeof h}, {const_cast<void*>(body), body_size},
                  {const_cast<uint8_t*>(tail.data()), tail.size()}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = tail.empty() ? 2 : 3;
  for (;;) {
    const ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n >= 0) return 0;
    if (errno != EINTR) return -errno;
  }
}

ssize_t recv_message(int fd, std::span<uint8_t> buf) {
  iovec iov{buf.data(), buf.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  for (;;) {
    const ssize_t n = ::recvmsg(fd, &m, 0);
    if (n >= 0) return (m.msg_flags & MSG_TRUNC) ? -EMSGSIZE : n;
    if (errno != EINTR) return -errno;
  }
}

}  // namespace ibfab::api
