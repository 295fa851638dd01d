#include "api/client/session.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "api/client/seqpacket.h"
#include "api/client/socket_path.h"

namespace ibfab::client {

namespace {

// Reads one message of type `type` into `out`; 0 or -errno (-EPROTO for
// anything else, -ECONNRESET when the engine closed).
int read_reply(int fd, api::MsgType type, void* out, std::size_t size) {
  static thread_local std::array<uint8_t, sizeof(api::MsgHeader) + sizeof(api::HostsReply)> buf;
  const ssize_t n = api::recv_message(fd, buf);
  if (n == 0) return -ECONNRESET;
  if (n < 0) return static_cast<int>(n);
  const std::span<const uint8_t> msg(buf.data(), static_cast<std::size_t>(n));
  if (api::type_of(msg) == api::MsgType::Error) {
    if (auto e = api::body_as<api::ErrorBody>(msg, api::MsgType::Error)) return -(e->status ? e->status : EPROTO);
    return -EPROTO;
  }
  if (api::type_of(msg) != type || msg.size() != sizeof(api::MsgHeader) + size) return -EPROTO;
  std::memcpy(out, msg.data() + sizeof(api::MsgHeader), size);
  return 0;
}

}  // namespace

int greet(int fd, const std::string& node, api::ConnectionKind kind, uint8_t port, uint32_t& handle, uint32_t* flags) {
  api::Hello h;
  h.pid = static_cast<uint32_t>(::getpid());
  h.kind = kind;
  h.port = port;
  std::strncpy(h.node, node.c_str(), sizeof h.node - 1);
  // An engine that refuses the connection (too many) may have closed it
  // already: its Error is still there to read (errno as it was).
  const int saved_errno = errno;
  if (const int e = api::send_message(fd, api::MsgType::Hello, &h, sizeof h); e == -EPIPE)
    errno = saved_errno;
  else if (e)
    return e;
  api::HelloReply r;
  if (const int e = read_reply(fd, api::MsgType::HelloReply, &r, sizeof r)) return e;
  if (r.status) return r.status;
  handle = r.handle;
  if (flags) *flags = r.flags;
  return 0;
}

namespace {

EmbeddedStarter g_embedded = nullptr;  // set by the engine, when linked in
EmbeddedDriver g_driver = nullptr;     // likewise, at load time (before any thread)
}  // namespace

void register_embedded_starter(EmbeddedStarter starter) { g_embedded = starter; }
void register_embedded_driver(EmbeddedDriver driver) { g_driver = driver; }
int drive_embedded() { return g_driver ? g_driver() : -1; }

Session* Session::get(std::string* error) {
  static std::mutex once;
  static Session* session = nullptr;
  static std::string why;
  std::lock_guard lock(once);
  if (!session && why.empty()) {
    const char* node = std::getenv("IBFAB_NODE");
    const char* topology = std::getenv("IBFAB_TOPOLOGY");
    std::string path = api::client_socket_path();
    if (topology && *topology) {
      // One engine per process, however many of the libraries (each with
      // its own copy of this core) are loaded: the first to start it leaves
      // its socket in IBFAB_EMBEDDED ("<pid>:<path>") for the others.
      const std::string mine = std::to_string(::getpid()) + ":";
      const char* running = std::getenv("IBFAB_EMBEDDED");
      if (running && std::string(running).starts_with(mine)) {
        path = running + mine.size();
      } else if (g_embedded) {
        path = g_embedded(topology, why);
        if (!path.empty()) ::setenv("IBFAB_EMBEDDED", (mine + path).c_str(), 1);
      } else {
        why = "IBFAB_TOPOLOGY is set, but this program has no in-process engine linked in";
      }
    }
    const bool embedded = topology && *topology;
    if (embedded && !node) node = "";
    if (!why.empty()) {
      // the embedded engine could not start
    } else if (!node || (!*node && !embedded)) {
      why = "IBFAB_NODE is not set (run the program with `ibfab exec --node NAME -- ...`)";
    } else if (const int fd = api::connect_to(path, &why); fd < 0) {
      // `why` says: no engine, permission denied, or another user's engine
    } else {
      uint32_t handle = 0, flags = 0;
      if (const int e = greet(fd, node, api::ConnectionKind::Control, 0, handle, &flags)) {
        why = api::refusal(e).empty() ? std::string(node) + ": " + std::strerror(-e)
                                      : "refused by the ibfab engine at " + path + ": " + api::refusal(e);
        ::close(fd);
      } else {
        // lives as long as the process
        session = new Session(fd, node, path, embedded || (flags & api::kEveryHostLocal) != 0);
      }
    }
  }
  if (!session && error) *error = why;
  return session;
}

int Session::request(api::MsgType type, const void* body, std::size_t size, api::MsgType reply_type, void* reply,
                     std::size_t reply_size) {
  std::lock_guard lock(mu_);
  if (const int e = api::send_message(fd_, type, body, size)) return e;
  return read_reply(fd_, reply_type, reply, reply_size);
}

std::optional<api::NodeReply> Session::query_node(const std::string& node) {
  api::NodeReply r;
  api::QueryNodeBody b;
  std::strncpy(b.node, node.c_str(), sizeof b.node - 1);
  if (request(api::MsgType::QueryNode, &b, node.empty() ? 0 : sizeof b, api::MsgType::NodeReply, &r, sizeof r) != 0 ||
      r.status != 0)
    return std::nullopt;
  return r;
}

std::string Session::node_of(const std::string& name) {
  if (name == "ibfab0" && !node_.empty()) return node_;
  for (const DeviceEntry& d : devices())
    if (d.name == name) return d.node;
  return "";
}

std::vector<DeviceEntry> Session::devices() {
  std::call_once(devices_once_, [this] {
    if (!node_.empty()) devices_.push_back({"ibfab0", node_});
    if (!every_host_) return;
    auto r = std::make_unique<api::HostsReply>();
    for (uint32_t first = 0;; first += r->count) {
      const api::ListHosts req{first};
      if (request(api::MsgType::ListHosts, &req, sizeof req, api::MsgType::HostsReply, r.get(), sizeof *r) != 0) break;
      for (uint32_t i = 0; i < r->count && i < api::kHostsPerReply; ++i) {
        std::string host(r->names[i], strnlen(r->names[i], api::kNodeNameSize));
        if (host != node_) devices_.push_back({"ibfab" + std::to_string(devices_.size()), std::move(host)});
      }
      if (r->count == 0 || first + r->count >= r->total) break;
    }
  });
  return devices_;
}

int Session::open_mad_port(uint8_t port, uint32_t& handle, const std::string& node) {
  const int fd = api::connect_to(socket_);
  if (fd < 0) return fd;
  if (const int e = greet(fd, node.empty() ? node_ : node, api::ConnectionKind::MadPort, port, handle)) {
    ::close(fd);
    return e;
  }
  return fd;
}

int Session::register_agent(const api::RegisterAgent& req) {
  api::Result r;
  if (const int e = request(api::MsgType::RegisterAgent, &req, sizeof req, api::MsgType::RegisterReply, &r, sizeof r))
    return e;
  return r.value;
}

int Session::unregister_agent(uint32_t handle, uint32_t agent) {
  api::UnregisterAgent req{handle, agent};
  api::Result r;
  if (const int e =
          request(api::MsgType::UnregisterAgent, &req, sizeof req, api::MsgType::UnregisterReply, &r, sizeof r))
    return e;
  return r.value;
}

}  // namespace ibfab::client
