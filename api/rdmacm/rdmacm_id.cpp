// rdma_cm ids: creation (on a channel, or on one of their own: the
// synchronous ids), destruction once their events are acked, migration
// between channels, options, and the ports of their addresses.
#include <infiniband/ib.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

// The live ids by handle. Lock order: this, then an Id's mu.
struct IdRegistry {
  std::mutex mu;
  std::unordered_map<uint32_t, Id*> ids;
};

IdRegistry& registry() {
  static auto* r = new IdRegistry;  // never destroyed: ids may be used from exit handlers
  return *r;
}

void enroll(Id* id) {
  std::lock_guard lock(registry().mu);
  registry().ids[id->handle] = id;
}

void withdraw(Id* id) {
  std::lock_guard lock(registry().mu);
  registry().ids.erase(id->handle);
}

void wait_acked(Id& id) {
  std::unique_lock lock(id.mu);
  id.acked_cv.wait(lock, [&] { return id.acked >= id.delivered; });
}

__be16 port_of(const sockaddr& addr) {
  switch (addr.sa_family) {
    case AF_INET: return reinterpret_cast<const sockaddr_in&>(addr).sin_port;
    case AF_INET6: return reinterpret_cast<const sockaddr_in6&>(addr).sin6_port;
    case AF_IB:
      return htobe16(static_cast<uint16_t>(be64toh(reinterpret_cast<const sockaddr_ib&>(addr).sib_sid)));
    default: return 0;
  }
}

// rdma_set_option(RDMA_OPTION_ID, ...), as the kernel's ucma_set_option_id
// checks it. The type of service is kept but changes nothing on the fabric;
// an ACK timeout is what rdma_init_qp_attr gives from then on.
int set_id_option(Id& id, int optname, const void* optval, size_t optlen) {
  switch (optname) {
    case RDMA_OPTION_ID_TOS:
      if (optlen != sizeof(uint8_t)) return fail(EINVAL);
      id.tos = *static_cast<const uint8_t*>(optval);
      return 0;
    case RDMA_OPTION_ID_REUSEADDR: {
      if (optlen != sizeof(int)) return fail(EINVAL);
      const bool reuse = *static_cast<const int*>(optval) != 0;
      return (reuse && id.state != State::Listen) || id.state == State::Idle ? 0 : fail(EINVAL);
    }
    case RDMA_OPTION_ID_AFONLY:
      if (optlen != sizeof(int)) return fail(EINVAL);
      return id.state == State::Idle || id.state == State::Bound ? 0 : fail(EINVAL);
    case RDMA_OPTION_ID_ACK_TIMEOUT:  // rdma_set_ack_timeout: the QP's from then on
      if (optlen != sizeof(uint8_t)) return fail(EINVAL);
      if (id.id.qp_type != IBV_QPT_RC && id.id.qp_type != IBV_QPT_XRC_SEND) return fail(EINVAL);
      id.ack_timeout = *static_cast<const uint8_t*>(optval);
      return 0;
    default:
      return fail(ENOSYS);
  }
}

}  // namespace

Id* create_id(rdma_event_channel* channel, void* context, rdma_port_space ps, ibv_qp_type qp_type) {
  if (init() != 0) return nullptr;
  if (static_cast<unsigned>(ps) > UINT16_MAX) {
    errno = EINVAL;  // no port space the kernel knows
    return nullptr;
  }
  auto id = std::make_unique<Id>();
  id->id.context = context;
  id->id.ps = ps;
  id->id.qp_type = qp_type;
  if (!channel) {
    Channel* own = create_channel();
    if (!own) return nullptr;
    id->id.channel = &own->ch;
    id->sync = true;
  } else {
    id->id.channel = channel;
  }
  api::CmCreateId req;
  req.channel = Channel::from(id->id.channel)->handle;
  req.ps = static_cast<uint16_t>(ps);
  req.qp_type = static_cast<uint8_t>(qp_type);
  const api::CmReply r = request(api::MsgType::CmCreateId, &req, sizeof req);
  if (r.value < 0) {
    if (id->sync) destroy_channel(Channel::from(id->id.channel));
    errno = static_cast<int>(-r.value);
    return nullptr;
  }
  id->handle = static_cast<uint32_t>(r.value);
  enroll(id.get());
  return id.release();
}

Id* adopt_id(uint32_t handle, Id& like) {
  auto* id = new Id;
  id->id.channel = like.id.channel;
  id->id.context = like.id.context;
  id->id.ps = like.id.ps;
  id->id.qp_type = like.id.qp_type;
  id->handle = handle;
  id->state = State::Connect;
  enroll(id);
  return id;
}

void free_id(Id* id) {
  if (id->device) release_device(id->device);
  std::free(id->id.route.path_rec);
  if (id->sync) destroy_channel(Channel::from(id->id.channel));
  delete id;
}

Id* claim_id(uint32_t handle) {
  std::lock_guard lock(registry().mu);
  const auto it = registry().ids.find(handle);
  if (it == registry().ids.end()) return nullptr;
  std::lock_guard id_lock(it->second->mu);
  ++it->second->delivered;
  return it->second;
}

void complete_event(Id& owner, Join* join) {
  std::lock_guard lock(owner.mu);
  ++owner.acked;
  if (join) ++join->acked;
  owner.acked_cv.notify_all();
}

bool event_is_for(const Id& id, const api::CmEvent& e) {
  switch (e.event) {
    case RDMA_CM_EVENT_CONNECT_REQUEST: return e.listen_id == id.handle;
    case RDMA_CM_EVENT_MULTICAST_JOIN:
    case RDMA_CM_EVENT_MULTICAST_ERROR: {
      std::lock_guard lock(id.mu);
      for (const Join* j : id.joins)
        if (j->uid() == e.uid) return true;
      return false;
    }
    default: return e.id == id.handle;
  }
}

int migrate(Id& id, Channel* target, bool sync) {
  Channel* old = Channel::from(id.id.channel);
  const api::CmMigrateId req{id.handle, target->handle};
  const api::CmReply r = request(api::MsgType::CmMigrateId, &req, sizeof req);
  if (r.value < 0) return fail(static_cast<int>(-r.value));
  // The engine sends the id's events to `target` from now on; those it
  // already sent to the old channel and nobody read follow them there, as
  // the kernel moves them.
  for (const api::CmEvent& e : drain(*old)) requeue(event_is_for(id, e) ? *target : *old, e);
  if (id.sync) {
    if (id.id.event) {
      rdma_ack_cm_event(id.id.event);
      id.id.event = nullptr;
    }
    destroy_channel(old);
  }
  {
    std::lock_guard lock(id.mu);
    id.sync = sync;
    id.id.channel = &target->ch;
  }
  wait_acked(id);
  return 0;
}

}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context,
                                       rdma_port_space ps) {
  if (init() != 0) return -1;
  if (!id) return fail(EINVAL);
  const ibv_qp_type type = ps == RDMA_PS_IPOIB || ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
  Id* made = create_id(channel, context, ps, type);
  if (!made) return -1;
  *id = &made->id;
  return 0;
}

IBFAB_RDMACM_EXPORT int rdma_destroy_id(rdma_cm_id* id) {
  if (init() != 0) return -1;
  if (!id) return fail(EINVAL);
  Id* i = Id::from(id);
  withdraw(i);  // its events still unread are dropped from now on
  const api::CmIdRequest req{i->handle, 0};
  const api::CmReply r = request(api::MsgType::CmDestroyId, &req, sizeof req);
  if (r.value < 0) {
    enroll(i);
    return fail(static_cast<int>(-r.value));
  }
  retire_joins(*i);
  if (id->event) rdma_ack_cm_event(id->event);
  wait_acked(*i);
  free_id(i);
  return 0;
}

IBFAB_RDMACM_EXPORT int rdma_migrate_id(rdma_cm_id* id, rdma_event_channel* channel) {
  if (init() != 0) return -1;
  if (!id) return fail(EINVAL);
  Id& i = *Id::from(id);
  if (i.sync && !channel) return fail(EINVAL);
  const bool sync = channel == nullptr;
  Channel* target = sync ? create_channel() : Channel::from(channel);
  if (!target) return -1;
  const int ret = migrate(i, target, sync);
  if (ret != 0 && sync) destroy_channel(target);
  return ret;
}

IBFAB_RDMACM_EXPORT int rdma_set_option(rdma_cm_id* id, int level, int optname, void* optval, size_t optlen) {
  if (init() != 0) return -1;
  if (!id) return fail(EINVAL);
  if (!optval && optlen) return fail(EFAULT);  // the kernel copies the value in first
  switch (level) {
    case RDMA_OPTION_ID: return set_id_option(*Id::from(id), optname, optval, optlen);
    case RDMA_OPTION_IB: return optname == RDMA_OPTION_IB_PATH ? set_ib_path(*Id::from(id), optval, optlen) : fail(ENOSYS);
    default: return fail(ENOSYS);
  }
}

IBFAB_RDMACM_EXPORT __be16 rdma_get_src_port(rdma_cm_id* id) { return id ? port_of(id->route.addr.src_addr) : 0; }

IBFAB_RDMACM_EXPORT __be16 rdma_get_dst_port(rdma_cm_id* id) { return id ? port_of(id->route.addr.dst_addr) : 0; }
