// The connection manager's start and its devices: the CM connection to the
// engine, the RDMA devices (ibfab's libibverbs, through the public API),
// opened when an id is first bound to one, and rdma_get_devices.
#include <fcntl.h>
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "api/client/cm_link.h"
#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

std::mutex& devices_mu() {
  static std::mutex mu;
  return mu;
}

// The devices, listed once (the fabric's hosts do not change) and never
// freed: ids and applications keep pointers to them. Guarded by devices_mu().
std::vector<CmDevice*>& devices() {
  static auto* list = new std::vector<CmDevice*>;
  static bool made = false;
  if (!made) {
    made = true;
    int n = 0;
    if (ibv_device** all = ibv_get_device_list(&n)) {
      for (int i = 0; i < n; ++i) {
        auto* d = new CmDevice;
        d->dev = all[i];
        d->guid = ibv_get_device_guid(all[i]);
        list->push_back(d);
      }
      ibv_free_device_list(all);  // the ibv_device objects stay (libibverbs keeps them)
    }
  }
  return *list;
}

// rdma-core's ucma_init_device: opens the device and reads its limits.
bool open_device(CmDevice& d) {
  if (d.verbs) return true;
  if (d.dead) return false;
  d.verbs = ibv_open_device(d.dev);
  ibv_device_attr attr{};
  if (!d.verbs || ibv_query_device(d.verbs, &attr) != 0) {
    if (d.verbs) ibv_close_device(d.verbs);
    d.verbs = nullptr;
    d.dead = true;
    return false;
  }
  d.max_initiator_depth = static_cast<uint8_t>(attr.max_qp_init_rd_atom);
  d.max_responder_resources = static_cast<uint8_t>(attr.max_qp_rd_atom);
  return true;
}

}  // namespace

api::CmReply request(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds) {
  if (client::CmLink* link = client::CmLink::get()) return link->request(type, body, size, fds);
  api::CmReply r;
  r.value = -ENODEV;
  return r;
}

int init() {
  if (!client::CmLink::get()) return fail(ENODEV);
  std::lock_guard lock(devices_mu());
  return devices().empty() ? fail(ENODEV) : 0;
}

CmDevice* acquire_device(__be64 guid) {
  std::lock_guard lock(devices_mu());
  for (CmDevice* d : devices()) {
    if (d->guid != guid || !open_device(*d)) continue;
    if (!d->pd) d->pd = ibv_alloc_pd(d->verbs);
    if (!d->pd) return nullptr;  // errno from ibv_alloc_pd
    ++d->refcnt;
    return d;
  }
  errno = ENODEV;
  return nullptr;
}

void release_device(CmDevice* d) {
  std::lock_guard lock(devices_mu());
  if (--d->refcnt != 0) return;
  if (d->pd) ibv_dealloc_pd(d->pd);
  if (d->xrcd) ibv_close_xrcd(d->xrcd);
  d->pd = nullptr;
  d->xrcd = nullptr;
}

ibv_xrcd* device_xrcd(CmDevice* d) {
  if (!d) {
    errno = EINVAL;
    return nullptr;
  }
  std::lock_guard lock(devices_mu());
  if (!d->xrcd) {
    ibv_xrcd_init_attr attr{};
    attr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
    attr.fd = -1;
    attr.oflags = O_CREAT;
    d->xrcd = ibv_open_xrcd(d->verbs, &attr);
  }
  return d->xrcd;
}

}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

// Every device that opens, each listed once; the list holds them open until
// rdma_free_devices.
IBFAB_RDMACM_EXPORT ibv_context** rdma_get_devices(int* num_devices) {
  ibv_context** out = nullptr;
  int count = 0;
  if (init() == 0) {
    std::lock_guard lock(devices_mu());
    std::vector<CmDevice*> open;
    for (CmDevice* d : devices())
      if (open_device(*d)) open.push_back(d);
    out = static_cast<ibv_context**>(std::calloc(open.size() + 1, sizeof(ibv_context*)));
    if (out) {
      for (CmDevice* d : open) {
        out[count++] = d->verbs;
        ++d->refcnt;
      }
    } else {
      errno = ENOMEM;
    }
  }
  if (num_devices) *num_devices = count;
  return out;
}

IBFAB_RDMACM_EXPORT void rdma_free_devices(ibv_context** list) {
  if (!list) return;
  {
    std::lock_guard lock(devices_mu());
    for (ibv_context** c = list; *c; ++c)
      for (CmDevice* d : devices())
        if (d->verbs == *c) --d->refcnt;
  }
  std::free(list);
}
