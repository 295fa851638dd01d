#include "api/client/socket_path.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ibfab::api {

namespace {

bool fill(sockaddr_un& a, const std::string& path) {
  a = {};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) return false;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return true;
}

}  // namespace

std::string default_socket_path() {
  const char* run = std::getenv("XDG_RUNTIME_DIR");
  if (run && *run) return std::string(run) + "/ibfab.sock";
  return "/tmp/ibfab-" + std::to_string(::getuid()) + ".sock";
}

std::string client_socket_path() {
  const char* s = std::getenv("IBFAB_SOCKET");
  return s && *s ? std::string(s) : default_socket_path();
}

int connect_to(const std::string& path) {
  sockaddr_un a;
  if (!fill(a, path)) return -ENAMETOOLONG;
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    const int e = errno;
    ::close(fd);
    return -e;
  }
  return fd;
}

int listen_at(const std::string& path, std::string& error) {
  sockaddr_un a;
  if (!fill(a, path)) {
    error = "socket path too long: " + path;
    return -ENAMETOOLONG;
  }
  if (const int probe = connect_to(path); probe >= 0) {
    ::close(probe);
    error = "an engine already serves on " + path;
    return -EADDRINUSE;
  }
  ::unlink(path.c_str());  // a stale socket file nobody answers on
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return -errno;
  }
  const mode_t old = ::umask(0077);  // no group or other permission: only this user connects
  const int b = ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  const int e = errno;
  ::umask(old);
  if (b != 0 || ::listen(fd, 128) != 0) {
    error = path + ": " + std::strerror(b != 0 ? e : errno);
    ::close(fd);
    return -EADDRNOTAVAIL;
  }
  return fd;
}

}  // namespace ibfab::api
