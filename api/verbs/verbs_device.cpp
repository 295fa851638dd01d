// Devices and contexts: the device list from the client core, opening a
// context (a verbs connection to the engine), and the async event fd.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "api/client/session.h"
#include "api/client/verbs_protocol.h"
#include "api/verbs/export.h"
#include "api/verbs/verbs_fork.h"
#include "api/verbs/verbs_internal.h"

#undef ibv_get_device_list

namespace ibfab::verbs {
namespace {

// The devices of this process, made once and never freed: applications
// keep ibv_device pointers past ibv_free_device_list, and may use them in
// exit handlers, after static destructors (hence a list never destroyed).
std::vector<Device*>& devices() {
  static std::mutex mu;
  static std::vector<Device*>& list = *new std::vector<Device*>;
  static bool made = false;
  std::lock_guard lock(mu);
  if (made) return list;
  made = true;
  std::string why;
  client::Session* s = client::Session::get(&why);
  if (!s) {
    if (!std::getenv("IBFAB_QUIET")) std::fprintf(stderr, "ibfab: no devices: %s\n", why.c_str());
    return list;
  }
  for (const client::DeviceEntry& e : s->devices()) {
    auto* d = new Device;
    d->node = e.node;
    d->index = static_cast<int>(list.size());
    d->dev.node_type = IBV_NODE_CA;
    d->dev.transport_type = IBV_TRANSPORT_IB;
    std::snprintf(d->dev.name, sizeof d->dev.name, "%s", e.name.c_str());
    std::snprintf(d->dev.dev_name, sizeof d->dev.dev_name, "uverbs%d", d->index);
    std::snprintf(d->dev.dev_path, sizeof d->dev.dev_path, "/sys/class/infiniband_verbs/uverbs%d", d->index);
    std::snprintf(d->dev.ibdev_path, sizeof d->dev.ibdev_path, "/sys/class/infiniband/%s", e.name.c_str());
    list.push_back(d);
  }
  return list;
}

Device* device_of(ibv_device* d) { return reinterpret_cast<Device*>(d); }

// The node GUID, asked once per device over the session (no context needed).
uint64_t node_guid(Device& d) {
  if (d.guid) return d.guid;
  client::Session* s = client::Session::get();
  if (const std::optional<api::NodeReply> n = s ? s->query_node(d.node) : std::nullopt) d.guid = n->node_guid;
  return d.guid;
}

}  // namespace

std::optional<api::NodeReply> query_node(Context& c) {
  api::NodeReply n;
  if (c.link.query_node(n) != 0) return std::nullopt;
  return n;
}

const api::PortRecord* port_of(const api::NodeReply& n, uint8_t port) {
  if (port < 1 || port > n.num_ports || port > api::kMaxPorts) return nullptr;
  return &n.ports[port - 1];
}

bool Context::covers(uint32_t lkey, uint64_t addr, uint64_t length, int access) {
  std::lock_guard lock(mr_mu);
  const uint32_t index = lkey >> 8;
  if (index >= mrs.size() || !mrs[index] || mrs[index]->mr.lkey != lkey) return false;
  const Mr& m = *mrs[index];
  const auto start = reinterpret_cast<uint64_t>(m.mr.addr);
  if ((m.access & access) != access) return false;
  return addr >= start && length <= m.mr.length && addr - start <= m.mr.length - length;
}

}  // namespace ibfab::verbs

using namespace ibfab;
using namespace ibfab::verbs;

IBFAB_VERBS_EXPORT ibv_device** ibv_get_device_list(int* num_devices) {
  apply_fork_environment();  // RDMAV_FORK_SAFE / IBV_FORK_SAFE, as at the real library's start
  const std::vector<Device*>& all = verbs::devices();
  auto** list = static_cast<ibv_device**>(std::calloc(all.size() + 1, sizeof(ibv_device*)));
  if (!list) {
    errno = ENOMEM;
    return nullptr;
  }
  for (std::size_t i = 0; i < all.size(); ++i) list[i] = &all[i]->dev;
  if (num_devices) *num_devices = static_cast<int>(all.size());
  return list;
}

IBFAB_VERBS_EXPORT void ibv_free_device_list(ibv_device** list) { std::free(list); }

IBFAB_VERBS_EXPORT const char* ibv_get_device_name(ibv_device* device) { return device ? device->name : nullptr; }

IBFAB_VERBS_EXPORT __be64 ibv_get_device_guid(ibv_device* device) {
  return device ? htobe64(node_guid(*device_of(device))) : 0;
}

IBFAB_VERBS_EXPORT int ibv_get_device_index(ibv_device* device) { return device ? device_of(device)->index : -1; }

IBFAB_VERBS_EXPORT ibv_context* ibv_open_device(ibv_device* device) {
  client::Session* s = client::Session::get();
  if (!device || !s) return fail_null<ibv_context>(ENODEV);
  auto c = std::make_unique<Context>();
  c->device = device_of(device);
  if (const int e = c->link.open(s->socket(), c->device->node)) return fail_null<ibv_context>(-e);
  install_ops(c->vctx);
  ibv_context& ctx = c->vctx.context;
  ctx.device = device;
  // The kernel's is the uverbs device's file; programs dup and fstat it
  // (pyverbs' import test, before ibv_import_device). /dev/null stands for
  // it: an open character device that no ibfab context can be imported
  // from (ibv_import_device: EOPNOTSUPP).
  ctx.cmd_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ctx.async_fd = c->link.async_fd();
  ctx.num_comp_vectors = 1;
  pthread_mutex_init(&ctx.mutex, nullptr);
  return &c.release()->vctx.context;
}

IBFAB_VERBS_EXPORT int ibv_close_device(ibv_context* context) {
  if (!context) return fail(EINVAL);
  Context* c = Context::from(context);
  if (context->cmd_fd >= 0) ::close(context->cmd_fd);
  pthread_mutex_destroy(&context->mutex);
  delete c;  // closing the connection releases what the engine holds for it
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  if (!context || !event) return fail(EINVAL);
  api::AsyncEvent e;
  const ssize_t n = ::recv(context->async_fd, &e, sizeof e, 0);
  if (n != static_cast<ssize_t>(sizeof e)) {
    if (n >= 0) errno = EIO;
    return -1;
  }
  std::memset(event, 0, sizeof *event);
  event->event_type = static_cast<ibv_event_type>(e.type);
  switch (event->event_type) {
    case IBV_EVENT_CQ_ERR:
      event->element.cq = reinterpret_cast<ibv_cq*>(e.user_handle);
      break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      event->element.qp = reinterpret_cast<ibv_qp*>(e.user_handle);
      break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
      event->element.srq = reinterpret_cast<ibv_srq*>(e.user_handle);  // the Srq, whose first member it is
      break;
    default:
      event->element.port_num = static_cast<int>(e.port);
      break;
  }
  return 0;
}

IBFAB_VERBS_EXPORT void ibv_ack_async_event(ibv_async_event*) {}
