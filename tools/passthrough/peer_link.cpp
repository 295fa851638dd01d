#include "tools/passthrough/peer_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "tools/passthrough/rdma_host.h"

namespace ibfab::passthrough {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& what) {
  throw SetupError("--link: " + what + (errno ? std::string(": ") + std::strerror(errno) : ""));
}

// "ADDRESS:PORT" or "[IPV6]:PORT" as a socket address; false if it is not one.
bool parse_address(const std::string& spec, sockaddr_storage& out) {
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || colon + 1 == spec.size()) return false;
  std::string host = spec.substr(0, colon);
  const std::string port = spec.substr(colon + 1);
  char* end = nullptr;
  const long p = std::strtol(port.c_str(), &end, 10);
  if (*end || p < 1 || p > 65535) return false;
  out = {};
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    auto& a = reinterpret_cast<sockaddr_in6&>(out);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<uint16_t>(p));
    return ::inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a.sin6_addr) == 1;
  }
  auto& a = reinterpret_cast<sockaddr_in&>(out);
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(p));
  return ::inet_pton(AF_INET, host.c_str(), &a.sin_addr) == 1;
}

}  // namespace

PeerLink::PeerLink(const std::string& spec, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const auto left_ms = [&] {
    return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
  };
  if (spec.rfind("listen:", 0) == 0) {
    char* end = nullptr;
    const long port = std::strtol(spec.c_str() + 7, &end, 10);
    if (*end || port < 1 || port > 65535) throw SetupError("--link: listen:PORT, PORT 1 to 65535, not '" + spec + "'");
    const int s = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1, zero = 0;
    ::setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    ::setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // IPv4 peers too
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    a.sin6_addr = in6addr_any;
    errno = 0;
    if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s, 1) != 0) {
      if (s >= 0) ::close(s);
      fail("cannot listen on port " + std::to_string(port));
    }
    pollfd p{s, POLLIN, 0};
    const int ready = ::poll(&p, 1, std::max(left_ms(), 0));
    fd_ = ready > 0 ? ::accept4(s, nullptr, nullptr, SOCK_CLOEXEC) : -1;
    ::close(s);
    errno = 0;
    if (fd_ < 0) fail("no peer connected to port " + std::to_string(port) + " in " + std::to_string(timeout.count()) + " ms");
  } else {
    sockaddr_storage a{};
    if (!parse_address(spec, a)) throw SetupError("--link: listen:PORT or ADDRESS:PORT, not '" + spec + "'");
    for (;;) {
      fd_ = ::socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const socklen_t len = a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
      if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&a), len) == 0) break;
      const int err = errno;
      if (fd_ >= 0) ::close(fd_);
      fd_ = -1;
      errno = err;
      if (left_ms() <= 0) fail("cannot connect to " + spec);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the peer may not listen yet
    }
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

PeerLink::~PeerLink() {
  if (fd_ >= 0) ::close(fd_);
}

void PeerLink::send(const std::string& line) {
  const std::string out = line + "\n";
  for (std::size_t sent = 0; sent < out.size();) {
    const ssize_t n = ::send(fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 1000);
    } else if (n < 0 && errno != EINTR) {
      fail("the peer is gone");
    }
  }
}

std::optional<std::string> PeerLink::take_line() {
  for (;;) {
    if (const auto nl = in_.find('\n'); nl != std::string::npos) {
      std::string line = in_.substr(0, nl);
      in_.erase(0, nl + 1);
      return line;
    }
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      in_.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      errno = 0;
      fail("the peer closed the link");
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return std::nullopt;
    } else if (errno != EINTR) {
      fail("reading from the peer");
    }
  }
}

}  // namespace ibfab::passthrough
