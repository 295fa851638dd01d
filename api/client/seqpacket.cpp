#include "api/client/seqpacket.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ibfab::api {

int ReceivedFds::take(std::size_t i) {
  if (i >= count) return -1;
  const int f = fd[i];
  fd[i] = -1;
  return f;
}

void ReceivedFds::close_all() {
  for (std::size_t i = 0; i < count; ++i)
    if (fd[i] >= 0) ::close(fd[i]);
  count = 0;
}

namespace {
union FdControl {
  char buf[CMSG_SPACE(sizeof(int) * kMaxFds)];
  cmsghdr align;
};
}  // namespace

int send_message(int fd, MsgType type, const void* body, std::size_t body_size, std::span<const uint8_t> tail,
                 std::span<const int> fds) {
  if (fds.size() > kMaxFds) return -EINVAL;
  MsgHeader h;
  h.type = static_cast<uint16_t>(type);
  h.length = static_cast<uint32_t>(body_size + tail.size());
  iovec iov[3] = {{&h, sizeof h}, {const_cast<void*>(body), body_size},
                  {const_cast<uint8_t*>(tail.data()), tail.size()}};
  msghdr m{};
  m.msg_iov = iov;
  m.msg_iovlen = tail.empty() ? 2 : 3;
  FdControl control;
  if (!fds.empty()) {
    std::memset(&control, 0, sizeof control);
    m.msg_control = control.buf;
    m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n >= 0) return 0;
    if (errno != EINTR) return -errno;
  }
}

ssize_t recv_message(int fd, std::span<uint8_t> buf, ReceivedFds* fds) {
  iovec iov{buf.data(), buf.size()};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  FdControl control;
  m.msg_control = control.buf;
  m.msg_controllen = sizeof control.buf;
  ssize_t n;
  for (;;) {
    n = ::recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
    if (n >= 0 || errno != EINTR) break;
  }
  if (n < 0) return -errno;
  ReceivedFds local;
  ReceivedFds& out = fds ? *fds : local;
  out.close_all();
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < k; ++i) {
      int f;
      std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
      if (out.count < kMaxFds) out.fd[out.count++] = f;
      else ::close(f);
    }
  }
  if (m.msg_flags & MSG_CTRUNC) out.close_all();
  return (m.msg_flags & MSG_TRUNC) ? -EMSGSIZE : n;
}

std::string refusal(int error) {
  if (error == -EUSERS) return "the engine serves as many connections as it takes (ibfab serve --max-clients)";
  if (error == -EMFILE) return "the engine is out of file descriptors (ulimit -n of ibfab serve)";
  return "";
}

}  // namespace ibfab::api
