#include "api/client/socket_path.h"

#include <pwd.h>
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

// "uid N (name)", or "uid N" when the name is unknown.
std::string user(uid_t uid) {
  passwd pw;
  passwd* found = nullptr;
  char buf[1024];
  std::string s = "uid " + std::to_string(uid);
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) s += std::string(" (") + found->pw_name + ")";
  return s;
}

std::string private_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/ibfab-" + std::to_string(::geteuid());
}

std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A plain connect(2) to `path`, no questions asked: the fd or -errno.
int raw_connect(const std::string& path) {
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

// Removes a stale socket of this user at `path`: 0 when `path` is free
// now, else -errno with `error` set.
int clear_stale(const std::string& path, std::string& error) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    error = path + ": " + std::strerror(errno);
    return -errno;
  }
  if (!S_ISSOCK(st.st_mode)) {
    error = path + " exists and is not a socket: refusing to replace it (choose another --socket)";
    return -EEXIST;
  }
  if (st.st_uid != ::geteuid()) {
    error = path + " is a socket of " + user(st.st_uid) + ": refusing to replace it";
    return -EEXIST;
  }
  if (const int probe = raw_connect(path); probe >= 0) {
    ::close(probe);
    error = "an engine already serves on " + path;
    return -EADDRINUSE;
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    error = path + ": cannot remove the stale socket: " + std::strerror(errno);
    return -errno;
  }
  return 0;
}

}  // namespace

std::string default_socket_path() {
  const char* run = std::getenv("XDG_RUNTIME_DIR");
  if (run && *run) return std::string(run) + "/ibfab.sock";
  return private_dir() + "/ibfab.sock";
}

std::string client_socket_path() {
  const char* s = std::getenv("IBFAB_SOCKET");
  return s && *s ? std::string(s) : default_socket_path();
}

std::string socket_dir_problem(const std::string& socket) {
  const std::string dir = parent_of(socket);
  if (dir == private_dir() && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot make the socket directory " + dir + ": " + std::strerror(errno);
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return "the socket directory " + dir + ": " + std::strerror(errno);
  const std::string refuse = "refusing the socket directory " + dir + ": ";
  if (!S_ISDIR(st.st_mode)) return refuse + "not a directory";
  if (st.st_uid != ::geteuid()) return refuse + "it belongs to " + user(st.st_uid) + ", not to you";
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return refuse + "its mode is " + mode + ", not 0700 (others could reach or replace the socket)";
  }
  return "";
}

int connect_to(const std::string& path, std::string* why) {
  auto say = [&](const std::string& text) {
    if (why) *why = text;
  };
  const int fd = raw_connect(path);
  if (fd == -EACCES || fd == -EPERM) {
    struct stat st;
    say(path + ": permission denied (" +
        (::lstat(path.c_str(), &st) == 0 ? "the engine there belongs to " + user(st.st_uid)
                                         : "its directory is closed to you") +
        "; an engine serves only its own user)");
    return fd;
  }
  if (fd < 0) {
    say("no ibfab engine at " + path + ": " + std::strerror(-fd));
    return fd;
  }
  ucred peer{};
  socklen_t len = sizeof peer;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
    const int e = errno;
    say(path + ": cannot tell who serves it: " + std::strerror(e));
    ::close(fd);
    return -e;
  }
  if (peer.uid != ::geteuid() && peer.uid != 0) {
    say(path + " is served by " + user(peer.uid) + ", not by you (" + user(::geteuid()) +
        ") or root: refusing to talk to it");
    ::close(fd);
    return -EPERM;
  }
  return fd;
}

int listen_at(const std::string& path, std::string& error) {
  sockaddr_un a;
  if (!fill(a, path)) {
    error = "socket path too long: " + path;
    return -ENAMETOOLONG;
  }
  if (path.empty()) {
    error = "the socket path is empty";
    return -EINVAL;
  }
  if (const int e = clear_stale(path, error)) return e;
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

void unlink_socket(const std::string& path) {
  std::string ignored;
  clear_stale(path, ignored);
}

}  // namespace ibfab::api
