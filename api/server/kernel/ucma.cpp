#include "api/server/kernel/ucma.h"

#include <rdma/rdma_cma.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "api/server/kernel/rdma_cm_addressing.h"

namespace ibfab::api {

struct Ucma::Channel {
  int fd = -1;
  UcmaClient* owner = nullptr;
  std::deque<CmEvent> backlog;
  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() {
    if (fd >= 0) ::close(fd);
  }
};

Ucma::Ucma(RdmaCm& rdma_cm, const topo::AddressPlan& plan) : rdma_cm_(rdma_cm), plan_(plan) {}

Ucma::~Ucma() {
  while (!clients_.empty()) close(clients_.back().get());
}

// --- Clients ----------------------------------------------------------------

UcmaClient* Ucma::open(fabric::Hca* home, uint32_t pid) {
  auto c = std::make_unique<UcmaClient>();
  c->home = home;
  c->pid = pid;
  clients_.push_back(std::move(c));
  return clients_.back().get();
}

void Ucma::close(UcmaClient* client) {
  std::vector<uint32_t> mine;
  for (const auto& [h, id] : rdma_cm_.ids())
    if (id->owner == client) mine.push_back(h);
  std::sort(mine.begin(), mine.end());
  for (uint32_t h : mine) destroy_id(*rdma_cm_.find(h));
  for (auto it = channels_.begin(); it != channels_.end();) {
    if (it->second->owner == client) {
      backlogged_ -= it->second->backlog.size();
      it = channels_.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(clients_, [&](const auto& c) { return c.get() == client; });
}

CmReply Ucma::handle(UcmaClient& c, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds) {
  CmReply r;
  auto with_id = [&](uint32_t handle, auto&& fn) {
    RdmaCmId* id = find_id(c, handle);
    r.value = id ? fn(*id) : -EINVAL;
  };
  switch (type) {
    case MsgType::CmCreateChannel:
      r.value = body_as<CmCreateChannel>(msg, type) ? create_channel(c, fds) : -EINVAL;
      break;
    case MsgType::CmCreateId:
      if (auto req = body_as<CmCreateId>(msg, type)) r.value = create_id(c, *req);
      else r.value = -EINVAL;
      break;
    case MsgType::CmMigrateId:
      if (auto req = body_as<CmMigrateId>(msg, type))
        with_id(req->id, [&](RdmaCmId& id) { return migrate_id(c, id, req->channel); });
      else r.value = -EINVAL;
      break;
    case MsgType::CmBindAddr:
    case MsgType::CmResolveAddr:
      if (auto req = body_as<CmAddrRequest>(msg, type))
        with_id(req->id, [&](RdmaCmId& id) {
          return type == MsgType::CmBindAddr ? rdma_cm_.bind(id, req->src) : rdma_cm_.resolve_addr(id, *req);
        });
      else r.value = -EINVAL;
      break;
    case MsgType::CmConnect:
    case MsgType::CmAccept:
    case MsgType::CmReject:
      if (auto req = body_as<CmConnect>(msg, type))
        with_id(req->id, [&](RdmaCmId& id) {
          return type == MsgType::CmConnect ? rdma_cm_.connect(id, *req) : answer(id, *req, type == MsgType::CmAccept);
        });
      else r.value = -EINVAL;
      break;
    case MsgType::CmJoin:
      if (auto req = body_as<CmJoin>(msg, type)) with_id(req->id, [&](RdmaCmId& id) { return rdma_cm_.join(id, *req); });
      else r.value = -EINVAL;
      break;
    case MsgType::CmSetIbPath:
      if (auto req = body_as<CmSetIbPath>(msg, type))
        with_id(req->id, [&](RdmaCmId& id) { return rdma_cm_.set_ib_path(id, *req); });
      else r.value = -EINVAL;
      break;
    case MsgType::CmLeave:
      if (auto req = body_as<CmLeave>(msg, type)) with_id(req->id, [&](RdmaCmId& id) { return leave(id, req->uid); });
      else r.value = -EINVAL;
      break;
    default: {
      const std::optional<CmIdRequest> req = body_as<CmIdRequest>(msg, type);
      if (!req) {
        r.value = -EINVAL;
        break;
      }
      if (type == MsgType::CmDestroyChannel) {
        r.value = destroy_channel(c, req->id);
        break;
      }
      if (type == MsgType::CmQueryAddress) {
        r.value = query_address(c, req->arg, r.address);
        break;
      }
      if (type == MsgType::CmQueryListener) {
        r.value = !c.home ? -ENODEV : rdma_cm_.listening(*c.home, static_cast<uint16_t>(req->arg)) ? 1 : 0;
        break;
      }
      with_id(req->id, [&](RdmaCmId& id) -> int64_t {
        switch (type) {
          case MsgType::CmDestroyId: return destroy_id(id);
          case MsgType::CmResolveRoute: return rdma_cm_.resolve_route(id, req->arg);
          case MsgType::CmListen: return listen(id, req->arg);
          case MsgType::CmQueryId:
            rdma_cm_.query(id, r.info);
            end_request(id);  // a CONNECT_REQUEST's new id: librdmacm has read the event
            return 0;
          case MsgType::CmInitQpAttr: return rdma_cm_.init_qp_attr(id, req->arg, r.info);
          case MsgType::CmDisconnect: return rdma_cm_.disconnect(id);
          case MsgType::CmNotify: return rdma_cm_.notify(id, req->arg);
          default: return -EINVAL;
        }
      });
    }
  }
  return r;
}

int64_t Ucma::query_address(const UcmaClient& c, uint32_t port, CmPortAddress& out) const {
  if (!c.home) return -ENODEV;
  return cm::port_address(plan_, c.home->index(), port, out);
}

RdmaCmId* Ucma::find_id(UcmaClient& c, uint32_t handle) {
  RdmaCmId* id = rdma_cm_.find(handle);
  return id && id->owner == &c ? id : nullptr;
}

bool Ucma::owns_channel(const UcmaClient& c, uint32_t channel) const {
  auto it = channels_.find(channel);
  return it != channels_.end() && it->second->owner == &c;
}

// --- Channels and ids ----------------------------------------------------------

int64_t Ucma::create_channel(UcmaClient& c, ReceivedFds& fds) {
  if (fds.count != 1) return -EINVAL;
  auto ch = std::make_unique<Channel>();
  ch->fd = fds.take(0);
  ch->owner = &c;
  hold(c, sizeof(Channel));
  const uint32_t h = next_handle_++;
  channels_.emplace(h, std::move(ch));
  return h;
}

int64_t Ucma::destroy_channel(UcmaClient& c, uint32_t handle) {
  if (!owns_channel(c, handle)) return -EINVAL;
  for (const auto& [h, id] : rdma_cm_.ids())
    if (id->channel == handle) return -EBUSY;
  auto it = channels_.find(handle);
  backlogged_ -= it->second->backlog.size();
  hold(c, -static_cast<std::ptrdiff_t>(sizeof(Channel) + it->second->backlog.size() * sizeof(CmEvent)));
  channels_.erase(it);
  return 0;
}

int64_t Ucma::create_id(UcmaClient& c, const CmCreateId& req) {
  if (!owns_channel(c, req.channel) || !RdmaCm::known_port_space(req.ps)) return -EINVAL;
  RdmaCmId& id = rdma_cm_.create(next_handle_++, req.ps, req.qp_type, c.home);
  id.owner = &c;
  id.channel = req.channel;
  hold(c, sizeof(RdmaCmId));
  return id.handle;
}

int64_t Ucma::destroy_id(RdmaCmId& id) {
  end_request(id);
  const int64_t events = id.events;
  hold(*id.owner, -static_cast<std::ptrdiff_t>(sizeof(RdmaCmId)));
  rdma_cm_.destroy(id);
  return events;
}

int64_t Ucma::migrate_id(UcmaClient& c, RdmaCmId& id, uint32_t channel) {
  if (!owns_channel(c, channel)) return -EINVAL;
  id.channel = channel;
  return id.events;
}

int64_t Ucma::listen(RdmaCmId& id, uint32_t backlog) {
  constexpr uint32_t kMaxBacklog = 1024;  // net.rdma_ucm.max_backlog's default
  const auto asked = static_cast<int32_t>(backlog);
  id.backlog = asked <= 0 || asked > static_cast<int32_t>(kMaxBacklog) ? kMaxBacklog : backlog;
  return rdma_cm_.listen(id);
}

int64_t Ucma::answer(RdmaCmId& id, const CmConnect& req, bool accept) {
  const int64_t e = rdma_cm_.answer(id, req, accept);
  if (e == 0) end_request(id);
  return e;
}

int64_t Ucma::leave(RdmaCmId& id, uint64_t uid) {
  const std::optional<RdmaCmJoin> left = rdma_cm_.leave(id, uid);
  return left ? int64_t{left->events} : -EADDRNOTAVAIL;
}

bool Ucma::adopt(RdmaCmId& id, RdmaCmId& listener) {
  if (listener.pending >= listener.backlog) return false;
  id.handle = next_handle_++;
  id.owner = listener.owner;
  id.channel = listener.channel;
  id.listener = listener.handle;
  ++listener.pending;
  hold(*id.owner, sizeof(RdmaCmId));
  return true;
}

void Ucma::end_request(RdmaCmId& id) {
  // Handles are never reused: a listener gone is simply not found.
  if (RdmaCmId* l = id.listener ? rdma_cm_.find(id.listener) : nullptr) --l->pending;
  id.listener = 0;
}

// --- Events -------------------------------------------------------------------

void Ucma::deliver(RdmaCmId& id, CmEvent& ev) {
  ev.id = id.handle;
  ++id.events;
  if (ev.event == RDMA_CM_EVENT_MULTICAST_JOIN || ev.event == RDMA_CM_EVENT_MULTICAST_ERROR) {
    auto j = std::find_if(id.joins.begin(), id.joins.end(), [&](const RdmaCmJoin& x) { return x.uid == ev.uid; });
    if (j != id.joins.end()) ++j->events;
  }
  auto ch = channels_.find(id.channel);
  if (ch != channels_.end()) write(*ch->second, ev);
}

void Ucma::write(Channel& ch, const CmEvent& ev) {
  if (ch.backlog.empty()) {
    const ssize_t n = ::send(ch.fd, &ev, sizeof ev, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof ev) || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return;
  }
  ch.backlog.push_back(ev);
  ++backlogged_;
  hold(*ch.owner, sizeof(CmEvent));
}

void Ucma::hold(UcmaClient& c, std::ptrdiff_t bytes) {
  c.held += static_cast<std::size_t>(bytes);
  held_changed_ = true;
}

void Ucma::flush() {
  for (auto& [h, ch] : channels_) {
    while (!ch->backlog.empty()) {
      const ssize_t n = ::send(ch->fd, &ch->backlog.front(), sizeof(CmEvent), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      ch->backlog.pop_front();  // sent, or the client's end is gone
      --backlogged_;
      hold(*ch->owner, -static_cast<std::ptrdiff_t>(sizeof(CmEvent)));
    }
  }
}

}  // namespace ibfab::api
