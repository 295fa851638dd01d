#include "tools/cli/fabric_network.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "api/client/socket_path.h"
#include "tools/cli/host_network.h"

namespace ibfab::cli {
namespace {

inline constexpr const char* kBridge = "fabric0";

// What `ibfab exec` sends: its host's snapshot.
struct Request {
  api::NodeReply node;
  uint32_t count = 0;
  api::CmPortAddress addresses[api::kMaxPorts];
};

// What the keeper answers: 0 and the namespace's fd, or an errno and why not.
struct Reply {
  int32_t status = 0;
  char why[200] = {};
};

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what + ": " + std::strerror(errno)); }

int open_own_namespace() {
  const int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open this thread's network namespace");
  return fd;
}

// Runs `fn` with this thread in network namespace `ns` (-1: a new one,
// whose fd is returned); the thread's own namespace is restored after.
int in_namespace(int ns, const std::function<void()>& fn) {
  const int own = open_own_namespace();
  int made = -1;
  const bool entered = ns >= 0 ? ::setns(ns, CLONE_NEWNET) == 0 : ::unshare(CLONE_NEWNET) == 0;
  if (!entered) {
    ::close(own);
    fail("cannot enter a new network namespace (serve needs root for the hosts' networks)");
  }
  try {
    if (ns < 0) made = open_own_namespace();
    fn();
  } catch (...) {
    ::setns(own, CLONE_NEWNET);
    ::close(own);
    if (made >= 0) ::close(made);
    throw;
  }
  ::setns(own, CLONE_NEWNET);
  ::close(own);
  return made;
}

void send_reply(int fd, const Reply& r, int ns) {
  iovec io{const_cast<Reply*>(&r), sizeof r};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (ns >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &ns, sizeof ns);
  }
  (void)::sendmsg(fd, &m, MSG_NOSIGNAL);
}

}  // namespace

std::string fabric_network_path(const std::string& engine_socket) { return engine_socket + ".net"; }

FabricNetwork::FabricNetwork(const std::string& engine_socket) : path_(fabric_network_path(engine_socket)) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) fail("pipe");
  keeper_ = ::fork();
  if (keeper_ < 0) fail("fork");
  if (keeper_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    ::close(report[0]);
    std::string error = "ok";
    try {
      set_up();
    } catch (const std::exception& e) {
      error = e.what();
    }
    (void)!::write(report[1], error.data(), error.size());
    ::close(report[1]);
    if (error != "ok") ::_exit(1);
    serve();
  }
  ::close(report[1]);
  std::string said;
  char buf[256];
  for (ssize_t n; (n = ::read(report[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
  ::close(report[0]);
  if (said != "ok") {
    ::waitpid(keeper_, nullptr, 0);
    throw std::runtime_error(said.empty() ? "the network keeper died" : said);
  }
}

FabricNetwork::~FabricNetwork() {
  ::kill(keeper_, SIGTERM);
  while (::waitpid(keeper_, nullptr, 0) < 0 && errno == EINTR) {
  }
  api::unlink_socket(path_);
}

void FabricNetwork::set_up() {
  // Bound before the bridge is made, so that a path that is taken (another
  // serve's keeper, a file that is no stale socket) changes nothing.
  std::string error;
  listen_ = api::listen_at(path_, error);
  if (listen_ == -EADDRINUSE) throw std::runtime_error("another serve keeps the hosts' networks at " + path_);
  if (listen_ < 0) throw std::runtime_error("cannot serve the hosts' networks: " + error);
  ::fcntl(listen_, F_SETFL, ::fcntl(listen_, F_GETFL) & ~O_NONBLOCK);  // serve() waits in accept
  try {
    fabric_ = in_namespace(-1, [] {
      run_command({"ip", "link", "set", "lo", "up"});
      run_command({"ip", "link", "add", kBridge, "type", "bridge"});
      write_net_sysctl(std::string("ipv6/conf/") + kBridge + "/addr_gen_mode", "1");
      run_command({"ip", "link", "set", kBridge, "up"});
    });
  } catch (const std::exception&) {
    ::close(listen_);
    api::unlink_socket(path_);
    throw;
  }
}

void FabricNetwork::serve() {
  for (;;) {
    const int c = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      ::_exit(1);
    }
    Request req;
    Reply r;
    int ns = -1;
    if (::recv(c, &req, sizeof req, 0) != static_cast<ssize_t>(sizeof req) || req.count > api::kMaxPorts ||
        req.count != req.node.num_ports) {
      r.status = EINVAL;
      std::strncpy(r.why, "malformed request", sizeof r.why - 1);
    } else {
      HostSnapshot host;
      host.node = req.node;
      host.addresses.assign(req.addresses, req.addresses + req.count);
      std::string why;
      ns = host_namespace(host, why);
      if (ns < 0) {
        r.status = EIO;
        std::strncpy(r.why, why.c_str(), sizeof r.why - 1);
      }
    }
    send_reply(c, r, ns);
    ::close(c);
  }
}

int FabricNetwork::host_namespace(const HostSnapshot& host, std::string& why) {
  const std::string name(host.node.name, strnlen(host.node.name, sizeof host.node.name));
  if (const auto it = hosts_.find(name); it != hosts_.end()) return it->second;
  // Peers are named by attempt, so that a failed one leaves no name taken.
  const std::string peer_prefix = "h" + std::to_string(attempts_++) + "p";
  const std::string fabric_path = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fabric_);
  int ns = -1;
  try {
    ns = in_namespace(-1, [&] { configure_host_network(host, fabric_path, peer_prefix); });
    in_namespace(fabric_, [&] {
      for (std::size_t i = 0; i < host.addresses.size(); ++i) {
        const std::string peer = peer_prefix + std::to_string(i);
        write_net_sysctl("ipv6/conf/" + peer + "/addr_gen_mode", "1");
        run_command({"ip", "link", "set", peer, "master", kBridge, "up"});
      }
    });
    hosts_.emplace(name, ns);
    return ns;
  } catch (const std::exception& e) {
    if (ns >= 0) ::close(ns);  // its interfaces, and their peers, go with it
    why = e.what();
    return -1;
  }
}

int join_fabric_network(const std::string& engine_socket, const HostSnapshot& host) {
  const std::string path = fabric_network_path(engine_socket);
  std::string why;
  const int fd = api::connect_to(path, &why);
  if (fd == -EPERM) throw std::runtime_error(why);  // a keeper of another user: never take its namespace
  if (fd < 0) return -1;                            // no keeper: serve is not root
  Request req;
  req.node = host.node;
  req.count = static_cast<uint32_t>(host.addresses.size());
  std::copy(host.addresses.begin(), host.addresses.end(), req.addresses);
  if (::send(fd, &req, sizeof req, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof req)) {
    ::close(fd);
    fail("cannot ask for the host's network at " + path);
  }
  Reply r;
  iovec io{&r, sizeof r};
  msghdr m{};
  m.msg_iov = &io;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
  ::close(fd);
  int ns = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&ns, CMSG_DATA(c), sizeof ns);
  if (n != static_cast<ssize_t>(sizeof r) || r.status != 0 || ns < 0) {
    if (ns >= 0) ::close(ns);
    throw std::runtime_error("the host's network could not be made: " +
                             std::string(n == static_cast<ssize_t>(sizeof r) ? r.why : "no answer from " + path));
  }
  return ns;
}

}  // namespace ibfab::cli
