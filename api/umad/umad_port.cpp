// libibumad's MAD I/O: an opened port is a connection of its own to the
// engine (its fd is what umad_get_fd returns, and is pollable); agents are
// registered through the client core; MADs go and come as protocol
// messages. Errors are returned as rdma-core 44 returns them.
#include <infiniband/umad.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "api/client/session.h"
#include "api/client/program_clock.h"
#include "api/client/seqpacket.h"
#include "api/umad/export.h"
#include "api/umad/umad_ca.h"
#include "api/umad/umad_state.h"

namespace ibfab::umad {

namespace {

struct Agent {
  uint8_t mgmt_class = 0;
  uint8_t rmpp_version = 0;
  bool registered = false;
};

struct OpenPort {
  uint32_t handle = 0;
  int portnum = 0;
  std::vector<Agent> agents;  // index = agent id; under g_mu
  // A message longer than api::kFragment crosses the socket as several
  // packets. A thread sends, or reads, all of one message's packets under
  // the port's lock, so that another thread's never come between them.
  std::mutex send_mu, recv_mu;
};

// Returns -e with errno = e, as the real library's failing read() and
// poll() leave them (callers such as saquery test errno, not the result).
int fail(int e) {
  errno = e;
  return -e;
}

std::mutex g_mu;
std::map<int, std::shared_ptr<OpenPort>> g_ports;  // by fd

std::shared_ptr<OpenPort> find_port(int fd) {
  std::lock_guard lock(g_mu);
  auto it = g_ports.find(fd);
  return it == g_ports.end() ? nullptr : it->second;
}

// Agent `id` of `port` if it is registered; call under g_mu.
const Agent* registered(const OpenPort& port, int id) {
  if (id < 0 || static_cast<std::size_t>(id) >= port.agents.size()) return nullptr;
  const Agent& a = port.agents[static_cast<std::size_t>(id)];
  return a.registered ? &a : nullptr;
}

int do_register(int fd, uint8_t mgmt_class, uint8_t version, uint8_t rmpp_version, uint32_t oui,
                const uint64_t mask[2]) {
  client::Session* s = client::Session::get();
  std::lock_guard lock(g_mu);
  auto it = g_ports.find(fd);
  if (it == g_ports.end() || !s) return -EINVAL;
  api::RegisterAgent req;
  req.handle = it->second->handle;
  req.mgmt_class = mgmt_class;
  req.class_version = version;
  req.rmpp_version = rmpp_version;
  req.oui = oui;
  if (mask) {
    req.method_mask[0] = mask[0];
    req.method_mask[1] = mask[1];
  }
  const int id = s->register_agent(req);
  if (id < 0) return id;
  auto& agents = it->second->agents;
  if (agents.size() <= static_cast<std::size_t>(id)) agents.resize(static_cast<std::size_t>(id) + 1);
  agents[static_cast<std::size_t>(id)] = Agent{mgmt_class, rmpp_version, true};
  return id;
}

}  // namespace

}  // namespace ibfab::umad

using namespace ibfab;


IBFAB_UMAD_EXPORT int umad_open_port(const char* ca_name, int portnum) {
  client::Session* s = client::Session::get();
  if (!s || portnum < 0) return -ENODEV;
  // ibfab0 is this host's HCA; in embedded mode the other hosts' HCAs can
  // be opened by their libibverbs names too (ibfab1, ...).
  const std::string node = ca_name ? s->node_of(ca_name) : s->node();
  if (node.empty()) return -ENODEV;
  if (portnum == 0) {
    const std::optional<api::NodeReply> n = s->query_node(node);
    if (!n) return -ENODEV;
    portnum = umad::best_port(*n);
  }
  uint32_t handle = 0;
  const int fd = s->open_mad_port(static_cast<uint8_t>(portnum), handle, node);
  if (fd < 0) return fd == -ENODEV ? -ENODEV : -EIO;
  std::lock_guard lock(umad::g_mu);
  auto port = std::make_shared<umad::OpenPort>();
  port->handle = handle;
  port->portnum = portnum;
  umad::g_ports[fd] = std::move(port);
  umad::note_port_opened();
  return fd;
}

IBFAB_UMAD_EXPORT int umad_close_port(int portid) {
  {
    std::lock_guard lock(umad::g_mu);
    if (!umad::g_ports.erase(portid)) return -EINVAL;
  }
  ::close(portid);  // the engine releases the port's agents
  return 0;
}

IBFAB_UMAD_EXPORT int umad_get_fd(int portid) { return portid; }

IBFAB_UMAD_EXPORT int umad_register(int portid, int mgmt_class, int mgmt_version, uint8_t rmpp_version,
                                    long method_mask[16 / sizeof(long)]) {
  uint64_t mask[2] = {};
  if (method_mask) std::memcpy(mask, method_mask, sizeof mask);
  const int id = umad::do_register(portid, static_cast<uint8_t>(mgmt_class), static_cast<uint8_t>(mgmt_version),
                                   rmpp_version, 0, method_mask ? mask : nullptr);
  return id < 0 ? -EPERM : id;
}

IBFAB_UMAD_EXPORT int umad_register_oui(int portid, int mgmt_class, uint8_t rmpp_version, uint8_t oui[3],
                                        long method_mask[16 / sizeof(long)]) {
  if (mgmt_class < 0x30 || mgmt_class > 0x4f) return -EINVAL;
  uint64_t mask[2] = {};
  if (method_mask) std::memcpy(mask, method_mask, sizeof mask);
  const uint32_t o = oui ? (uint32_t{oui[0]} << 16 | uint32_t{oui[1]} << 8 | oui[2]) : 0;
  const int id = umad::do_register(portid, static_cast<uint8_t>(mgmt_class), 1, rmpp_version, o,
                                   method_mask ? mask : nullptr);
  return id < 0 ? -EPERM : id;
}

IBFAB_UMAD_EXPORT int umad_register2(int port_fd, struct umad_reg_attr* attr, uint32_t* agent_id) {
  if (!attr) return EINVAL;
  // Vendor classes of range 2 need an OUI that fits 24 bits and is not 0.
  if (attr->mgmt_class >= 0x30 && attr->mgmt_class <= 0x4f && (attr->oui == 0 || attr->oui > 0xFFFFFF)) {
    attr->flags = 0;
    return EINVAL;
  }
  if (attr->flags & ~static_cast<uint32_t>(UMAD_USER_RMPP)) {
    // An unsupported flag: an error, with the supported flags written back
    // (rdma-core 44 zeroes them before the write-back: attr->flags reads 0).
    attr->flags = 0;
    return EINVAL;
  }
  const uint8_t rmpp = (attr->flags & UMAD_USER_RMPP) ? 0 : attr->rmpp_version;
  const int id = umad::do_register(port_fd, attr->mgmt_class, attr->mgmt_class_version, rmpp, attr->oui,
                                   attr->method_mask);
  if (id < 0) return -id;
  if (agent_id) *agent_id = static_cast<uint32_t>(id);
  return 0;
}

IBFAB_UMAD_EXPORT int umad_unregister(int portid, int agentid) {
  client::Session* s = client::Session::get();
  std::lock_guard lock(umad::g_mu);
  auto it = umad::g_ports.find(portid);
  if (it == umad::g_ports.end() || !s || !umad::registered(*it->second, agentid)) return -EINVAL;
  if (s->unregister_agent(it->second->handle, static_cast<uint32_t>(agentid)) != 0) return -EINVAL;
  it->second->agents[static_cast<std::size_t>(agentid)].registered = false;
  return 0;
}

IBFAB_UMAD_EXPORT int umad_send(int portid, int agentid, void* umad, int length, int timeout_ms, int retries) {
  if (!umad || length < 24) return -EINVAL;
  const auto* data = static_cast<const uint8_t*>(umad_get_mad(umad));
  const std::shared_ptr<umad::OpenPort> port = umad::find_port(portid);
  if (!port) return -EINVAL;
  {
    std::lock_guard lock(umad::g_mu);
    const umad::Agent* agent = umad::registered(*port, agentid);
    if (!agent) return -EINVAL;
    // Longer than one MAD: only a message the RMPP layer is to segment
    // (an RMPP agent, the RMPP Active flag set).
    const bool rmpp = agent->rmpp_version != 0 && length >= 36 && (data[26] & 0x1);
    const std::size_t most = rmpp ? std::size_t{16} << 20 : api::kMaxMad;
    if (static_cast<std::size_t>(length) > most) return -EINVAL;
  }
  auto* u = static_cast<ib_user_mad*>(umad);
  u->agent_id = static_cast<uint32_t>(agentid);
  u->timeout_ms = static_cast<uint32_t>(timeout_ms);
  u->retries = static_cast<uint32_t>(retries);
  u->length = static_cast<uint32_t>(length);
  api::MadEnvelope env;
  env.agent = static_cast<uint32_t>(agentid);
  env.timeout_ms = static_cast<uint32_t>(timeout_ms);
  env.retries = static_cast<uint32_t>(retries);
  env.length = static_cast<uint32_t>(length);
  env.addr = u->addr;
  env.total = static_cast<uint32_t>(length);
  // In fragments of kFragment bytes when it is longer (an RMPP message).
  const std::span<const uint8_t> message(data, static_cast<std::size_t>(length));
  std::lock_guard lock(port->send_mu);
  env.stamp = api::program_clock_ns();  // under the lock: one port's stamps never go back
  for (std::size_t at = 0; at == 0 || at < message.size(); at += api::kFragment) {
    const std::span<const uint8_t> part = message.subspan(at, std::min(api::kFragment, message.size() - at));
    env.length = static_cast<uint32_t>(part.size());
    if (api::send_message(portid, api::MsgType::SendMad, &env, sizeof env, part) != 0) return -EIO;
  }
  return 0;
}

IBFAB_UMAD_EXPORT int umad_poll(int portid, int timeout_ms) {
  pollfd p{portid, POLLIN, 0};
  const int n = ::poll(&p, 1, timeout_ms);
  if (n < 0) return -errno;
  return n == 0 ? umad::fail(ETIMEDOUT) : 0;
}

IBFAB_UMAD_EXPORT int umad_recv(int portid, void* umad, int* length, int timeout_ms) {
  if (!umad || !length || *length < 0) return umad::fail(EINVAL);
  if (timeout_ms != 0) {
    if (const int e = umad_poll(portid, timeout_ms)) return e;  // a cancellation point while it waits
  }
  const std::shared_ptr<umad::OpenPort> port = umad::find_port(portid);
  if (!port) return umad::fail(EBADF);
  std::lock_guard lock(port->recv_mu);
  // Look at the message first: one that does not fit stays queued.
  static thread_local std::array<uint8_t, api::kMaxMessage> buf;
  ssize_t n = ::recv(portid, buf.data(), buf.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n < 0) return umad::fail(errno == EWOULDBLOCK ? EAGAIN : errno);
  if (n == 0) return umad::fail(ECONNRESET);
  const std::span<const uint8_t> msg(buf.data(), static_cast<std::size_t>(n));
  const std::optional<api::MadEnvelope> env = api::body_as<api::MadEnvelope>(msg, api::MsgType::RecvMad);
  const std::size_t header = sizeof(api::MsgHeader) + sizeof(api::MadEnvelope);
  auto* u = static_cast<ib_user_mad*>(umad);
  if (!env || env->length != msg.size() - header) {
    ::recv(portid, buf.data(), buf.size(), MSG_DONTWAIT);  // drop what is not a MAD
    return umad::fail(EIO);
  }
  const std::size_t hdr = umad_size();
  u->agent_id = env->agent;
  u->status = static_cast<uint32_t>(env->status);
  u->length = static_cast<uint32_t>(hdr + env->total);
  u->addr = env->addr;
  if (static_cast<std::size_t>(*length) < env->total) {
    // Left queued: a coalesced RMPP message asks for a bigger buffer
    // (-ENOSPC, with the length needed); a single MAD that does not fit is
    // the caller's error (-EINVAL), as the kernel answers.
    *length = static_cast<int>(env->total);
    return umad::fail(env->total > api::kMaxMad ? ENOSPC : EINVAL);
  }
  // The message, in as many fragments as it came in (they follow at once).
  auto* out = static_cast<uint8_t*>(umad_get_mad(umad));
  std::size_t copied = 0;
  for (bool first = true; first || copied < env->total; first = false) {
    const ssize_t got = ::recv(portid, buf.data(), buf.size(), first ? MSG_DONTWAIT : 0);
    const std::optional<api::MadEnvelope> part =
        got > 0 ? api::body_as<api::MadEnvelope>(std::span<const uint8_t>(buf.data(), static_cast<std::size_t>(got)),
                                                  api::MsgType::RecvMad)
                : std::nullopt;
    if (!part || part->length > env->total - copied || part->length != static_cast<std::size_t>(got) - header)
      return umad::fail(EIO);
    std::memcpy(out + copied, buf.data() + header, part->length);
    copied += part->length;
  }
  *length = static_cast<int>(env->total);
  return static_cast<int>(env->agent);
}

