#include "api/server/cm_service.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/server/cm_addressing.h"
#include "api/server/port_multicast.h"
#include "fabric/mad/cm_sidr.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/model/hca.h"
#include "fabric/model/sa_client.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"
#include "sm/sa/mcast_groups.h"

namespace ibfab::api {
namespace {

namespace mcm = mad::mcm_comp;
namespace pr = mad::pr_comp;

// ib_cm's SIDR REQ: 4096 ms per try (CMA_CM_RESPONSE_TIMEOUT 20), 15 retries.
constexpr sim::Time kSidrTry = sim::Time::ms(4096);
constexpr unsigned kSidrRetries = 15;
// IPoIB's broadcast join: retried with a backoff doubling from 1 s to 16 s.
constexpr sim::Time kIpoibFirstBackoff = sim::Time::s(1);
constexpr unsigned kIpoibMaxShift = 4;

wire::Gid port_gid(const fabric::Port& p) { return wire::Gid::from(p.gid_prefix, p.guid()); }

uint16_t ps_of_service(uint64_t sid) { return static_cast<uint16_t>(sid >> 16); }

}  // namespace

enum class CmService::State : uint8_t {
  Idle,
  AddrQuery,
  AddrBound,
  AddrResolved,
  RouteQuery,
  RouteResolved,
  Listen,
  Connect,         // SIDR REQ out
  ConnectRequest,  // a SIDR REQ came in, not yet accepted or rejected
  Connected,
};

struct CmService::Channel {
  int fd = -1;
  Client* owner = nullptr;
  std::deque<CmEvent> backlog;
  ~Channel() {
    if (fd >= 0) ::close(fd);
  }
};

struct CmService::Client {
  fabric::Hca* home = nullptr;
  uint32_t pid = 0;
  std::size_t held = 0;  // CmService::held
};

struct CmService::Join {
  uint64_t uid = 0;
  uint64_t member = 0;  // PortMulticast member (gone after a failure)
  uint32_t events = 0;
};

struct CmService::Id {
  uint32_t handle = 0;
  Client* owner = nullptr;
  uint32_t channel = 0;
  uint16_t ps = 0;
  uint8_t qp_type = 0;
  State state = State::Idle;
  fabric::Hca* hca = nullptr;  // the device, once bound to one
  uint8_t port = 0;
  uint16_t pkey = 0xFFFF;
  uint16_t pkey_index = 0;
  sockaddr_storage src{};
  sockaddr_storage dst{};
  std::optional<std::tuple<const fabric::Hca*, uint16_t, uint16_t>> bound;  // key in ports_
  wire::Gid dgid{};
  std::optional<mad::PathRecord> path;
  uint64_t sa_ticket = 0;
  sim::EventHandle timer;
  uint32_t events = 0;
  std::vector<Join> joins;
  // Listening: the requests it may hold unanswered, and how many it does.
  uint32_t backlog = 0;
  uint32_t pending = 0;
  uint32_t listener = 0;  // a CONNECT_REQUEST's id, until answered: its listener's handle
  // SIDR: the request this id sent (active) or answers (passive).
  uint32_t request_id = 0;
  uint64_t service_id = 0;
  fabric::MadAddress peer;  // passive: where the REP goes
  uint64_t tid = 0;         // passive: the REQ's TID, which the REP carries
  unsigned sidr_tries = 0;
  std::array<uint8_t, mad::SidrReq::kPrivateDataSize> req_data{};
};

struct CmService::PortStack {
  fabric::Hca* hca = nullptr;
  uint8_t number = 0;
  std::unique_ptr<fabric::SaClient> sa;
  std::unique_ptr<PortMulticast> mcast;
  std::unique_ptr<CmAgent> cm;
  uint64_t ipoib = 0;  // the broadcast membership (0: none)
  bool ipoib_joined = false;
  unsigned ipoib_failures = 0;
  sim::EventHandle ipoib_retry;
};

struct CmService::HostStack {
  fabric::Hca* hca = nullptr;
  std::vector<PortStack> ports;  // [port - 1]
};

// The host's CM agent on one port: SIDR REQ and REP arrive here.
class CmService::CmAgent final : public fabric::MadAgent {
 public:
  CmAgent(CmService& svc, fabric::Hca& hca, uint8_t port) : svc_(svc), hca_(hca), port_(port) {
    id_ = hca.register_agent({.port = port,
                              .mgmt_class = mad::kCmClass,
                              .class_version = mad::kCmClassVersion,
                              .methods = {uint64_t{1} << wire::mad_method::kSend, 0}},
                             this);
  }
  ~CmAgent() override { hca_.unregister_agent(id_); }
  void on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) override {
    svc_.on_cm_mad(hca_, port_, from, mad);
  }
  uint32_t id() const { return id_; }

 private:
  CmService& svc_;
  fabric::Hca& hca_;
  uint8_t port_;
  uint32_t id_ = 0;
};

CmService::CmService(fabric::Fabric& fabric, const topo::AddressPlan& plan, bool every_host_local)
    : fabric_(fabric), plan_(plan), every_host_local_(every_host_local) {
  stacks_.resize(fabric.node_count());
  for (uint32_t i = 0; i < fabric.node_count(); ++i) {
    if (fabric.node(i).is_switch()) continue;
    auto& hca = static_cast<fabric::Hca&>(fabric.node(i));
    auto s = std::make_unique<HostStack>();
    s->hca = &hca;
    s->ports.resize(hca.num_ports());
    for (uint8_t p = 1; p <= hca.num_ports(); ++p) {
      PortStack& ps = s->ports[p - 1u];
      ps.hca = &hca;
      ps.number = p;
      ps.sa = std::make_unique<fabric::SaClient>(hca, p);
      ps.mcast = std::make_unique<PortMulticast>(hca, p, *ps.sa);
      ps.cm = std::make_unique<CmAgent>(*this, hca, p);
    }
    hca.add_listener(this);
    stacks_[i] = std::move(s);
  }
}

CmService::~CmService() {
  while (!clients_.empty()) close(clients_.back().get());
  for (auto& s : stacks_) {
    if (!s) continue;
    s->hca->remove_listener(this);
    for (PortStack& ps : s->ports) fabric_.sim().cancel(ps.ipoib_retry);
  }
}

// --- Clients ----------------------------------------------------------------

CmService::Client* CmService::open(fabric::Hca* home, uint32_t pid) {
  auto c = std::make_unique<Client>();
  c->home = home;
  c->pid = pid;
  clients_.push_back(std::move(c));
  return clients_.back().get();
}

void CmService::close(Client* client) {
  std::vector<uint32_t> mine;
  for (const auto& [h, id] : ids_)
    if (id->owner == client) mine.push_back(h);
  std::sort(mine.begin(), mine.end());
  for (uint32_t h : mine) destroy_id(*ids_.at(h));
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

CmReply CmService::handle(Client& c, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds) {
  CmReply r;
  auto with_id = [&](uint32_t handle, auto&& fn) {
    Id* id = find_id(c, handle);
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
        with_id(req->id, [&](Id& id) { return migrate_id(c, id, req->channel); });
      else r.value = -EINVAL;
      break;
    case MsgType::CmBindAddr:
    case MsgType::CmResolveAddr:
      if (auto req = body_as<CmAddrRequest>(msg, type))
        with_id(req->id, [&](Id& id) { return type == MsgType::CmBindAddr ? bind(id, req->src) : resolve_addr(id, *req); });
      else r.value = -EINVAL;
      break;
    case MsgType::CmConnect:
    case MsgType::CmAccept:
    case MsgType::CmReject:
      if (auto req = body_as<CmConnect>(msg, type))
        with_id(req->id, [&](Id& id) {
          return type == MsgType::CmConnect ? connect(id, *req) : answer(id, *req, type == MsgType::CmAccept);
        });
      else r.value = -EINVAL;
      break;
    case MsgType::CmJoin:
      if (auto req = body_as<CmJoin>(msg, type)) with_id(req->id, [&](Id& id) { return join(id, *req); });
      else r.value = -EINVAL;
      break;
    case MsgType::CmSetIbPath:
      if (auto req = body_as<CmSetIbPath>(msg, type)) with_id(req->id, [&](Id& id) { return set_ib_path(id, *req); });
      else r.value = -EINVAL;
      break;
    case MsgType::CmLeave:
      if (auto req = body_as<CmLeave>(msg, type)) with_id(req->id, [&](Id& id) { return leave(id, req->uid); });
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
      with_id(req->id, [&](Id& id) -> int64_t {
        switch (type) {
          case MsgType::CmDestroyId: return destroy_id(id);
          case MsgType::CmResolveRoute: return resolve_route(id, req->arg);
          case MsgType::CmListen: return listen(id, req->arg);
          case MsgType::CmQueryId: query(id, r.info); return 0;
          case MsgType::CmInitQpAttr: return init_qp_attr(id, req->arg, r.info);
          default: return -EINVAL;
        }
      });
    }
  }
  return r;
}

int64_t CmService::query_address(const Client& c, uint32_t port, CmPortAddress& out) const {
  if (!c.home || port == 0 || port > 0xFF) return -ENODEV;
  const topo::PortAddress* pa = plan_.of(c.home->index(), static_cast<uint8_t>(port));
  if (!pa) return -ENODEV;
  out.ipv4 = pa->ipv4;
  out.prefix4 = pa->prefix4;
  out.prefix6 = pa->prefix6;
  std::memcpy(out.ipv6, pa->ipv6.data(), sizeof out.ipv6);
  sockaddr_in group{};
  group.sin_family = AF_INET;
  group.sin_addr.s_addr = htonl(0xE0000001);  // 224.0.0.1: any multicast destination routes alike
  out.multicast_route = plan_.route(c.home->index(), reinterpret_cast<const sockaddr*>(&group)) == port;
  return 0;
}

CmService::Id* CmService::find_id(Client& c, uint32_t handle) {
  auto it = ids_.find(handle);
  return it != ids_.end() && it->second->owner == &c ? it->second.get() : nullptr;
}

bool CmService::local(const Client& c, const fabric::Hca& hca) const {
  return every_host_local_ || c.home == &hca;
}

fabric::Hca& CmService::routing_host(const Client& c) const {
  if (c.home) return *c.home;
  for (const auto& s : stacks_)
    if (s) return *s->hca;
  throw std::logic_error("a fabric with no host");
}

CmService::PortStack& CmService::port_stack(const Id& id) { return stack(*id.hca).ports.at(id.port - 1u); }

// --- Channels and ids ----------------------------------------------------------

int64_t CmService::create_channel(Client& c, ReceivedFds& fds) {
  if (fds.count != 1) return -EINVAL;
  auto ch = std::make_unique<Channel>();
  ch->fd = fds.take(0);
  ch->owner = &c;
  hold(c, sizeof(Channel));
  const uint32_t h = next_handle_++;
  channels_.emplace(h, std::move(ch));
  return h;
}

int64_t CmService::destroy_channel(Client& c, uint32_t handle) {
  auto it = channels_.find(handle);
  if (it == channels_.end() || it->second->owner != &c) return -EINVAL;
  for (const auto& [h, id] : ids_)
    if (id->channel == handle) return -EBUSY;
  backlogged_ -= it->second->backlog.size();
  hold(c, -static_cast<std::ptrdiff_t>(sizeof(Channel) + it->second->backlog.size() * sizeof(CmEvent)));
  channels_.erase(it);
  return 0;
}

int64_t CmService::create_id(Client& c, const CmCreateId& req) {
  auto ch = channels_.find(req.channel);
  if (ch == channels_.end() || ch->second->owner != &c) return -EINVAL;
  switch (req.ps) {
    case cm::kPsUdp:
    case cm::kPsIpoib:
    case cm::kPsIb:
    case cm::kPsTcp:
      break;
    default:
      return -EINVAL;
  }
  auto id = std::make_unique<Id>();
  id->handle = next_handle_++;
  id->owner = &c;
  id->channel = req.channel;
  id->ps = req.ps;
  id->qp_type = req.qp_type;
  const uint32_t h = id->handle;
  ids_.emplace(h, std::move(id));
  hold(c, sizeof(Id));
  return h;
}

int64_t CmService::destroy_id(Id& id) {
  fabric_.sim().cancel(id.timer);
  if (id.sa_ticket && id.hca) port_stack(id).sa->cancel(id.sa_ticket);
  for (const Join& j : id.joins)
    if (id.hca) port_stack(id).mcast->leave(j.member);
  if (id.bound) ports_.erase(*id.bound);
  if (id.state == State::Connect) sidr_out_.erase(id.request_id);
  if (id.state == State::ConnectRequest) {  // ib_cm rejects a SIDR REQ whose id goes away unanswered
    sidr_rep_to(*id.hca, id.port, id.peer, id.tid, id.request_id, id.service_id, mad::sidr_status::kRejected, 0, 0, {});
    end_request(id);
  }
  const int64_t events = id.events;
  hold(*id.owner, -static_cast<std::ptrdiff_t>(sizeof(Id)));
  ids_.erase(id.handle);
  return events;
}

int64_t CmService::migrate_id(Client& c, Id& id, uint32_t channel) {
  auto ch = channels_.find(channel);
  if (ch == channels_.end() || ch->second->owner != &c) return -EINVAL;
  id.channel = channel;
  return id.events;
}

void CmService::attach_device(Id& id, fabric::Hca& hca, uint8_t port) {
  id.hca = &hca;
  id.port = port;
  const fabric::Port& p = hca.port(port);
  id.pkey_index = 0;
  id.pkey = p.pkeys.empty() ? 0xFFFF : p.pkeys[0];
}

// --- Addresses ----------------------------------------------------------------

int64_t CmService::bind(Id& id, const sockaddr_storage& addr) {
  if (id.state != State::Idle) return -EINVAL;
  if (cm::address_size(addr) == 0) return -EAFNOSUPPORT;
  fabric::Hca* hca = nullptr;
  uint8_t port = 0;
  if (!cm::is_any(addr)) {
    if (addr.ss_family == cm::kAfIb) {
      // A GID: only the client's own hosts can carry it.
      const auto& sib = reinterpret_cast<const cm::SockaddrIb&>(addr);
      auto check = [&](fabric::Hca& h) {
        for (uint8_t p = 1; p <= h.num_ports(); ++p)
          if (std::equal(std::begin(sib.sib_addr), std::end(sib.sib_addr), port_gid(h.port(p)).raw.begin())) {
            hca = &h;
            port = p;
          }
      };
      if (!every_host_local_ && id.owner->home) check(*id.owner->home);
      for (const auto& s : stacks_)
        if (every_host_local_ && s && !hca) check(*s->hca);
    } else if (const topo::PortAddress* pa = plan_.find(reinterpret_cast<const sockaddr*>(&addr))) {
      hca = static_cast<fabric::Hca*>(&fabric_.node(pa->node));
      port = pa->port;
    }
    if (!hca || !local(*id.owner, *hca)) return -EADDRNOTAVAIL;
  }
  const fabric::Hca* key_host = hca ? hca : id.owner->home;
  uint16_t number = cm::port_of(addr);
  if (number == 0) {
    for (int tries = 0; tries < 28232; ++tries) {
      const uint16_t candidate = next_ephemeral_;
      next_ephemeral_ = next_ephemeral_ == 60999 ? 32768 : static_cast<uint16_t>(next_ephemeral_ + 1);
      if (!ports_.count({key_host, id.ps, candidate})) {
        number = candidate;
        break;
      }
    }
    if (number == 0) return -EADDRINUSE;
  } else if (ports_.count({key_host, id.ps, number})) {
    return -EADDRINUSE;
  }
  id.bound = std::make_tuple(key_host, id.ps, number);
  ports_[*id.bound] = id.handle;
  id.src = addr;
  cm::set_port(id.src, number);
  if (hca) attach_device(id, *hca, port);
  id.state = State::AddrBound;
  return 0;
}

int64_t CmService::resolve_addr(Id& id, const CmAddrRequest& req) {
  if (cm::address_size(req.dst) == 0) return -EINVAL;
  if (id.state == State::Idle) {
    sockaddr_storage src = req.src;
    if (src.ss_family == 0) {
      src = {};
      src.ss_family = req.dst.ss_family;  // the wildcard of the destination's family
    }
    if (const int64_t e = bind(id, src)) return e;
  }
  if (id.state != State::AddrBound) return -EINVAL;
  if (id.src.ss_family != req.dst.ss_family && !cm::is_any(id.src)) return -EINVAL;
  const bool multicast = cm::is_multicast(req.dst);
  const topo::PortAddress* target = nullptr;
  if (!id.hca) {
    fabric::Hca& from = routing_host(*id.owner);
    std::optional<uint8_t> port;
    if (req.dst.ss_family == cm::kAfIb) port = uint8_t{1};
    else port = plan_.route(from.index(), reinterpret_cast<const sockaddr*>(&req.dst));
    if (!port) return -ENETUNREACH;
    attach_device(id, from, *port);
    // The source address becomes the port's, as the route's preferred source.
    if (const topo::PortAddress* pa = plan_.of(from.index(), *port); pa && req.dst.ss_family != cm::kAfIb) {
      id.src.ss_family = req.dst.ss_family;  // a wildcard of the other family takes the destination's
      cm::set_host(id.src, pa->ipv4, pa->ipv6);
    }
  }
  id.dst = req.dst;
  id.state = State::AddrQuery;
  bool found = multicast;
  if (req.dst.ss_family == cm::kAfIb) {
    std::memcpy(id.dgid.raw.data(), reinterpret_cast<const cm::SockaddrIb&>(req.dst).sib_addr, 16);
    found = true;
  } else if (!multicast && (target = plan_.find(reinterpret_cast<const sockaddr*>(&req.dst)))) {
    const auto& peer = static_cast<const fabric::Hca&>(fabric_.node(target->node));
    const fabric::Port& pp = peer.port(target->port);
    // ARP needs the peer's port up and in our subnet.
    found = pp.state() == fabric::PortState::Active && id.hca->port(id.port).state() == fabric::PortState::Active &&
            plan_.route(id.hca->index(), reinterpret_cast<const sockaddr*>(&req.dst)) == id.port;
    id.dgid = port_gid(pp);
  } else if (multicast) {
    id.dgid = cm::mgid_for(req.dst, id.ps, broadcast_mgid(port_stack(id)));
  }
  const uint32_t h = id.handle;
  if (found) {
    id.state = State::AddrResolved;
    CmEvent ev;
    ev.event = RDMA_CM_EVENT_ADDR_RESOLVED;
    emit(id, ev);
    return 0;
  }
  // No neighbour answers: ADDR_ERROR when the timeout runs out.
  id.timer = fabric_.sim().schedule(sim::Time::ms(req.timeout_ms), [this, h] {
    auto it = ids_.find(h);
    if (it == ids_.end()) return;
    Id& late = *it->second;
    late.state = State::AddrBound;
    CmEvent ev;
    ev.event = RDMA_CM_EVENT_ADDR_ERROR;
    ev.status = -ETIMEDOUT;
    emit(late, ev);
  });
  return 0;
}

int64_t CmService::resolve_route(Id& id, uint32_t timeout_ms) {
  if (id.state != State::AddrResolved || !id.hca) return -EINVAL;
  id.state = State::RouteQuery;
  mad::PathRecord want;
  want.dgid = id.dgid;
  want.sgid = port_gid(id.hca->port(id.port));
  want.p_key = id.pkey;
  want.numb_path = 1;
  want.reversible = true;
  std::array<uint8_t, mad::PathRecord::kSize> rec{};
  want.pack(rec);
  const uint32_t h = id.handle;
  // rdma_resolve_route's timeout is the SA query's total (sa_query.c).
  const fabric::SaRetry retry = fabric::SaRetry::kernel(sim::Time::ms(std::max<uint32_t>(timeout_ms, 1)));
  id.sa_ticket = port_stack(id).sa->send(
      wire::mad_method::kGet, mad::PathRecord::kAttributeId, pr::kDgid | pr::kSgid | pr::kPKey | pr::kNumbPath | pr::kReversible,
      rec, retry, [this, h](int status, std::span<const uint8_t> mad) {
        auto it = ids_.find(h);
        if (it == ids_.end()) return;
        Id& id = *it->second;
        id.sa_ticket = 0;
        CmEvent ev;
        if (status == 0) {
          id.path = mad::PathRecord::unpack(mad::sa_data(mad::ConstSaBuffer(mad.data(), wire::kMadSize)));
          id.state = State::RouteResolved;
          ev.event = RDMA_CM_EVENT_ROUTE_RESOLVED;
        } else {
          id.state = State::AddrResolved;
          ev.event = RDMA_CM_EVENT_ROUTE_ERROR;
          ev.status = status;
        }
        emit(id, ev);
      });
  return 0;
}

int64_t CmService::set_ib_path(Id& id, const CmSetIbPath& req) {
  if (id.state != State::AddrResolved || !id.hca) return -EINVAL;  // as rdma_set_ib_path: from ADDR_RESOLVED only
  id.path = mad::PathRecord::unpack(req.path_record);
  id.state = State::RouteResolved;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_ROUTE_RESOLVED;
  emit(id, ev);
  return 0;
}

void CmService::query(const Id& id, CmIdInfo& info) const {
  if (id.hca) {
    std::strncpy(info.node, id.hca->name().c_str(), sizeof info.node - 1);
    info.node_guid = id.hca->guid();
    info.port = id.port;
    info.pkey = id.pkey;
    info.pkey_index = id.pkey_index;
    const wire::Gid sgid = port_gid(id.hca->port(id.port));
    std::memcpy(info.sgid, sgid.raw.data(), 16);
  }
  info.ps = id.ps;
  std::memcpy(info.dgid, id.dgid.raw.data(), 16);
  info.src = id.src;
  info.dst = id.dst;
  if (id.path) {
    const mad::PathRecord& p = *id.path;
    info.num_paths = 1;
    std::memcpy(info.path.dgid, p.dgid.raw.data(), 16);
    std::memcpy(info.path.sgid, p.sgid.raw.data(), 16);
    info.path.dlid = p.dlid;
    info.path.slid = p.slid;
    info.path.flow_label = p.flow_label;
    info.path.pkey = p.p_key;
    info.path.hop_limit = p.hop_limit;
    info.path.traffic_class = p.tclass;
    info.path.sl = p.sl;
    info.path.mtu = p.mtu;
    info.path.rate = p.rate;
    info.path.packet_life_time = p.packet_life_time;
    info.path.numb_path = p.numb_path;
    info.path.reversible = p.reversible;
  }
}

std::optional<uint32_t> CmService::qkey_of(const Id& id) {
  if (id.ps != cm::kPsIpoib) return cm::kUdpQkey;
  if (!id.hca) return std::nullopt;
  const mad::McMemberRecord* b = broadcast(port_stack(id));
  if (!b) return std::nullopt;
  return b->q_key;
}

int64_t CmService::init_qp_attr(Id& id, uint32_t state, CmIdInfo& info) {
  if (!id.hca) return -EINVAL;
  if (id.qp_type != IBV_QPT_UD) return -ENOSYS;
  info.qp_state = static_cast<uint8_t>(state);
  switch (state) {
    case IBV_QPS_INIT: {
      const std::optional<uint32_t> qkey = qkey_of(id);
      if (!qkey) return -EADDRNOTAVAIL;
      info.qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
      info.pkey_index = id.pkey_index;
      info.port = id.port;
      info.qkey = *qkey;
      return 0;
    }
    case IBV_QPS_RTR:
      info.qp_attr_mask = IBV_QP_STATE;
      return 0;
    case IBV_QPS_RTS:
      info.qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
      info.sq_psn = 0;
      return 0;
    default:
      return -EINVAL;
  }
}

// --- Events -------------------------------------------------------------------

void CmService::emit(Id& id, CmEvent& ev) {
  ev.id = id.handle;
  ++id.events;
  auto ch = channels_.find(id.channel);
  if (ch != channels_.end()) write(*ch->second, ev);
}

void CmService::write(Channel& ch, const CmEvent& ev) {
  if (ch.backlog.empty()) {
    const ssize_t n = ::send(ch.fd, &ev, sizeof ev, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n == static_cast<ssize_t>(sizeof ev) || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return;
  }
  ch.backlog.push_back(ev);
  ++backlogged_;
  hold(*ch.owner, sizeof(CmEvent));
}

void CmService::hold(Client& c, std::ptrdiff_t bytes) {
  c.held += static_cast<std::size_t>(bytes);
  held_changed_ = true;
}

std::size_t CmService::held(const Client& client) const { return client.held; }

void CmService::end_request(Id& id) {
  // Handles are never reused: a listener gone is simply not found.
  if (auto l = ids_.find(id.listener); id.listener && l != ids_.end()) --l->second->pending;
  id.listener = 0;
}

void CmService::flush() {
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

// --- Multicast ----------------------------------------------------------------

wire::Gid CmService::broadcast_mgid(const PortStack& ps) {
  const fabric::Port& p = ps.hca->port(ps.number);
  return sm::McastGroups::ipoib_broadcast_mgid(2, p.pkeys.empty() ? 0xFFFF : static_cast<uint16_t>(p.pkeys[0] | 0x8000));
}

const mad::McMemberRecord* CmService::broadcast(PortStack& ps) const {
  return ps.ipoib_joined ? ps.mcast->joined(broadcast_mgid(ps)) : nullptr;
}

int64_t CmService::join(Id& id, const CmJoin& req) {
  if (!id.hca || (id.state != State::AddrBound && id.state != State::AddrResolved)) return -EINVAL;
  if (id.qp_type != IBV_QPT_UD) return -EINVAL;
  uint8_t bit = 0;
  if (req.join_flags == RDMA_MC_JOIN_FLAG_FULLMEMBER) bit = mad::join_state::kFull;
  else if (req.join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) bit = mad::join_state::kSendOnlyFull;
  else return -EINVAL;
  if (cm::address_size(req.addr) == 0) return -EINVAL;
  PortStack& ps = port_stack(id);
  const mad::McMemberRecord* bcast = broadcast(ps);
  if (!bcast) return -EADDRNOTAVAIL;  // ipoib has not joined the partition's broadcast group
  const std::optional<uint32_t> qkey = qkey_of(id);
  mad::McMemberRecord rec = *bcast;
  rec.mgid = cm::mgid_for(req.addr, id.ps, bcast->mgid);
  rec.p_key = id.pkey;
  rec.q_key = *qkey;
  rec.join_state = bit;
  uint64_t mask = mcm::kMgid | mcm::kPortGid | mcm::kPKey | mcm::kJoinState | mcm::kQKey | mcm::kSl |
                  mcm::kFlowLabel | mcm::kTClass;
  if (id.ps == cm::kPsIpoib)
    mask |= mcm::kRate | mcm::kRateSelector | mcm::kMtuSelector | mcm::kMtu | mcm::kHopLimit;
  const uint32_t h = id.handle;
  const uint64_t uid = req.uid;
  const uint8_t port = id.port;
  Join j;
  j.uid = uid;
  j.member = ps.mcast->join(rec, mask, [this, h, uid, port](int status, const mad::McMemberRecord& got) {
    auto it = ids_.find(h);
    if (it == ids_.end()) return;
    Id& id = *it->second;
    auto jt = std::find_if(id.joins.begin(), id.joins.end(), [&](const Join& x) { return x.uid == uid; });
    if (jt == id.joins.end()) return;
    ++jt->events;
    CmEvent ev;
    ev.uid = uid;
    ev.status = status;
    if (status != 0) {
      ev.event = RDMA_CM_EVENT_MULTICAST_ERROR;
      emit(id, ev);
      return;
    }
    ev.event = RDMA_CM_EVENT_MULTICAST_JOIN;
    ev.qp_num = 0xFFFFFF;
    ev.qkey = got.q_key;
    ev.mlid = got.mlid;
    std::memcpy(ev.mgid, got.mgid.raw.data(), 16);
    ev.ah.dlid = got.mlid;
    ev.ah.sl = got.sl;
    ev.ah.static_rate = got.rate;
    ev.ah.port_num = port;
    ev.ah.is_global = 1;
    std::memcpy(ev.ah.dgid, got.mgid.raw.data(), 16);
    ev.ah.flow_label = got.flow_label;
    ev.ah.hop_limit = got.hop_limit;
    ev.ah.traffic_class = got.tclass;
    ev.ah.sgid_index = 0;
    emit(id, ev);
  });
  id.joins.push_back(j);
  return 0;
}

int64_t CmService::leave(Id& id, uint64_t uid) {
  auto jt = std::find_if(id.joins.begin(), id.joins.end(), [&](const Join& x) { return x.uid == uid; });
  if (jt == id.joins.end()) return -EADDRNOTAVAIL;
  port_stack(id).mcast->leave(jt->member);
  const int64_t events = jt->events;
  id.joins.erase(jt);
  return events;
}

void CmService::ipoib_join(fabric::Hca& hca, uint8_t port) {
  PortStack& ps = stack(hca).ports.at(port - 1u);
  const fabric::Port& p = hca.port(port);
  if (ps.ipoib || p.state() != fabric::PortState::Active) return;
  mad::McMemberRecord rec;
  rec.mgid = broadcast_mgid(ps);
  rec.p_key = p.pkeys.empty() ? 0xFFFF : static_cast<uint16_t>(p.pkeys[0] | 0x8000);
  rec.join_state = mad::join_state::kFull;
  fabric::Hca* h = &hca;
  ps.ipoib = ps.mcast->join(rec, mcm::kMgid | mcm::kPortGid | mcm::kPKey | mcm::kJoinState,
                            [this, h, port](int status, const mad::McMemberRecord&) {
                              PortStack& ps = stack(*h).ports.at(port - 1u);
                              if (status == 0) {
                                ps.ipoib_joined = true;
                                ps.ipoib_failures = 0;
                                return;
                              }
                              ps.ipoib = 0;
                              ps.ipoib_joined = false;
                              if (status == -ENETRESET) return;  // the port event joins again
                              const sim::Time backoff = kIpoibFirstBackoff * (int64_t{1} << std::min(ps.ipoib_failures, kIpoibMaxShift));
                              ++ps.ipoib_failures;
                              ps.ipoib_retry = fabric_.sim().schedule(backoff, [this, h, port] { ipoib_join(*h, port); });
                            });
}

bool CmService::ipoib_settled() {
  const auto settled = [](const HostStack& s) {
    for (uint8_t p = 1; p <= s.hca->num_ports(); ++p) {
      const PortStack& ps = s.ports[p - 1u];
      if (s.hca->port(p).state() == fabric::PortState::Active && !ps.ipoib_joined && ps.ipoib_failures < 2) return false;
    }
    return true;
  };
  const auto first_unsettled = [&](std::size_t from) {
    while (from < stacks_.size() && (!stacks_[from] || settled(*stacks_[from]))) ++from;
    return from;
  };
  const std::size_t from = ipoib_cursor_;
  ipoib_cursor_ = first_unsettled(from);
  // A pass that began past the first host looks again from the start.
  if (ipoib_cursor_ == stacks_.size() && from != 0) ipoib_cursor_ = first_unsettled(0);
  if (ipoib_cursor_ < stacks_.size()) return false;
  ipoib_cursor_ = 0;
  return true;
}

void CmService::on_port_event(fabric::Hca& hca, uint8_t port, fabric::PortEvent event) {
  PortStack& ps = stack(hca).ports.at(port - 1u);
  if (event == fabric::PortEvent::Active) {
    ipoib_join(hca, port);
    return;
  }
  if (event == fabric::PortEvent::PkeyChange) return;
  // PORT_ERR, LID change, SM change, client reregister: the multicast state
  // is gone (members told -ENETRESET, no leave sent); ipoib joins again.
  fabric_.sim().cancel(ps.ipoib_retry);
  ps.mcast->reset(-ENETRESET);
  ps.ipoib = 0;
  ps.ipoib_joined = false;
  ps.ipoib_failures = 0;
  for (auto& [h, id] : ids_)
    if (id->hca == &hca && id->port == port)
      for (Join& j : id->joins) j.member = 0;
  fabric::Hca* hp = &hca;
  ps.ipoib_retry = fabric_.sim().schedule(sim::Time::zero(), [this, hp, port] { ipoib_join(*hp, port); });
}

// --- SIDR ---------------------------------------------------------------------

int64_t CmService::listen(Id& id, uint32_t backlog) {
  constexpr uint32_t kMaxBacklog = 1024;  // net.rdma_ucm.max_backlog's default
  const auto asked = static_cast<int32_t>(backlog);
  id.backlog = asked <= 0 || asked > static_cast<int32_t>(kMaxBacklog) ? kMaxBacklog : backlog;
  if (id.state == State::Listen) return 0;
  if (id.state == State::Idle) {
    sockaddr_storage any{};
    any.ss_family = AF_INET;
    if (const int64_t e = bind(id, any)) return e;
  }
  if (id.state != State::AddrBound) return -EINVAL;
  id.state = State::Listen;
  return 0;
}

int64_t CmService::connect(Id& id, const CmConnect& req) {
  if (id.qp_type != IBV_QPT_UD) return -EOPNOTSUPP;  // RC/UC connections: not modelled
  if (id.state != State::RouteResolved || !id.path) return -EINVAL;
  if (req.private_data_len > kCmUdPrivateData) return -EINVAL;
  if (id.src.ss_family == cm::kAfIb) return -EOPNOTSUPP;
  id.request_id = next_request_++;
  id.service_id = cm::service_id(id.ps, cm::port_of(id.dst));
  id.req_data.fill(0);
  cm::pack_header(std::span<uint8_t, cm::kHeaderSize>(id.req_data.data(), cm::kHeaderSize), id.src, id.dst);
  std::copy_n(req.private_data, req.private_data_len, id.req_data.begin() + cm::kHeaderSize);
  id.state = State::Connect;
  id.sidr_tries = 0;
  sidr_out_[id.request_id] = id.handle;
  send_sidr(id);
  return 0;
}

void CmService::send_sidr(Id& id) {
  mad::SidrReq req;
  req.request_id = id.request_id;
  req.p_key = id.pkey;
  req.service_id = id.service_id;
  req.private_data = id.req_data;
  const mad::CmMad m = mad::make_cm_mad(id.request_id, req);
  fabric::MadAddress to;
  to.lid = id.path->dlid;
  to.sl = id.path->sl;
  to.qpn = 1;
  to.pkey_index = id.pkey_index;
  id.hca->send_mad(port_stack(id).cm->id(), to, m);
  const uint32_t h = id.handle;
  id.timer = fabric_.sim().schedule(kSidrTry, [this, h] {
    auto it = ids_.find(h);
    if (it == ids_.end() || it->second->state != State::Connect) return;
    Id& id = *it->second;
    if (++id.sidr_tries <= kSidrRetries) return send_sidr(id);
    sidr_out_.erase(id.request_id);
    id.state = State::RouteResolved;
    CmEvent ev;
    ev.event = RDMA_CM_EVENT_UNREACHABLE;
    ev.status = -ETIMEDOUT;
    emit(id, ev);
  });
}

void CmService::on_cm_mad(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  if (mad.size() < wire::kMadSize || mad[3] != wire::mad_method::kSend) return;
  const uint16_t attribute = wire::load_be16(&mad[16]);
  if (attribute == mad::SidrReq::kAttributeId) sidr_request(hca, port, from, mad);
  else if (attribute == mad::SidrRep::kAttributeId) sidr_reply(mad);
}

void CmService::sidr_request(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from,
                             std::span<const uint8_t> mad) {
  const mad::SidrReq req = mad::SidrReq::unpack(mad.subspan<mad::kCmDataOffset, mad::kCmDataSize>());
  const uint64_t tid = wire::load_be64(&mad[8]);
  // A retry of a REQ still waiting for its answer.
  for (const auto& [h, id] : ids_)
    if (id->state == State::ConnectRequest && id->hca == &hca && id->request_id == req.request_id &&
        id->peer.lid == from.lid)
      return;
  const uint16_t ps = ps_of_service(req.service_id);
  const auto number = static_cast<uint16_t>(req.service_id);
  Id* listener = nullptr;
  for (const fabric::Hca* key : {static_cast<const fabric::Hca*>(&hca), static_cast<const fabric::Hca*>(nullptr)}) {
    auto it = ports_.find({key, ps, number});
    if (it == ports_.end()) continue;
    Id& cand = *ids_.at(it->second);
    if (cand.state == State::Listen && (key || every_host_local_) && (!cand.hca || cand.hca == &hca)) {
      listener = &cand;
      break;
    }
  }
  const auto header = cm::unpack_header(std::span<const uint8_t, cm::kHeaderSize>(req.private_data.data(), cm::kHeaderSize));
  if (!listener || (req.service_id >> 32) != 0 || !header) {
    sidr_rep_to(hca, port, from, tid, req.request_id, req.service_id, mad::sidr_status::kSidNotSupported, 0, 0, {});
    return;
  }
  if (listener->pending >= listener->backlog) {
    sidr_rep_to(hca, port, from, tid, req.request_id, req.service_id, mad::sidr_status::kRejected, 0, 0, {});
    return;
  }
  auto conn = std::make_unique<Id>();
  Id& id = *conn;
  id.handle = next_handle_++;
  id.owner = listener->owner;
  id.channel = listener->channel;
  id.ps = listener->ps;
  id.qp_type = listener->qp_type;
  id.state = State::ConnectRequest;
  id.listener = listener->handle;
  ++listener->pending;
  attach_device(id, hca, port);
  for (std::size_t i = 0; i < hca.port(port).pkeys.size(); ++i)
    if ((hca.port(port).pkeys[i] & 0x7FFF) == (req.p_key & 0x7FFF)) {
      id.pkey_index = static_cast<uint16_t>(i);
      id.pkey = hca.port(port).pkeys[i];
      break;
    }
  id.src = header->dst;
  cm::set_port(id.src, number);
  id.dst = header->src;
  const topo::PortAddress* peer = plan_.find(reinterpret_cast<const sockaddr*>(&id.dst));
  if (peer) id.dgid = port_gid(static_cast<const fabric::Hca&>(fabric_.node(peer->node)).port(peer->port));
  id.request_id = req.request_id;
  id.service_id = req.service_id;
  id.peer = from;
  id.tid = tid;
  const uint32_t h = id.handle;
  hold(*id.owner, sizeof(Id));
  ids_.emplace(h, std::move(conn));
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_CONNECT_REQUEST;
  ev.listen_id = listener->handle;
  ev.private_data_len = static_cast<uint32_t>(req.private_data.size() - cm::kHeaderSize);
  std::copy(req.private_data.begin() + cm::kHeaderSize, req.private_data.end(), ev.private_data);
  emit(*ids_.at(h), ev);
}

int64_t CmService::answer(Id& id, const CmConnect& req, bool accept) {
  if (id.state != State::ConnectRequest) return -EINVAL;
  if (req.private_data_len > mad::SidrRep::kPrivateDataSize) return -EINVAL;
  uint32_t qkey = req.qkey;
  if (accept && qkey == 0) {
    const std::optional<uint32_t> own = qkey_of(id);
    if (!own) return -EADDRNOTAVAIL;
    qkey = *own;
  }
  sidr_rep_to(*id.hca, id.port, id.peer, id.tid, id.request_id, id.service_id,
              accept ? mad::sidr_status::kValid : mad::sidr_status::kRejected, accept ? req.qp_num : 0,
              accept ? qkey : 0, std::span<const uint8_t>(req.private_data, req.private_data_len));
  end_request(id);
  id.state = State::Connected;
  return 0;
}

void CmService::sidr_rep_to(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& to, uint64_t tid,
                            uint32_t request_id, uint64_t service_id, uint8_t status, uint32_t qpn, uint32_t qkey,
                            std::span<const uint8_t> private_data) {
  mad::SidrRep rep;
  rep.request_id = request_id;
  rep.status = status;
  rep.qpn = qpn;
  rep.service_id = service_id;
  rep.q_key = qkey;
  std::copy_n(private_data.begin(), std::min(private_data.size(), rep.private_data.size()), rep.private_data.begin());
  const mad::CmMad m = mad::make_cm_mad(tid, rep);
  hca.send_mad(stack(hca).ports.at(port - 1u).cm->id(), to, m, /*keep_tid=*/true);
}

void CmService::sidr_reply(std::span<const uint8_t> mad) {
  const mad::SidrRep rep = mad::SidrRep::unpack(mad.subspan<mad::kCmDataOffset, mad::kCmDataSize>());
  auto out = sidr_out_.find(rep.request_id);
  if (out == sidr_out_.end()) return;
  auto it = ids_.find(out->second);
  sidr_out_.erase(out);
  if (it == ids_.end() || it->second->state != State::Connect) return;
  Id& id = *it->second;
  fabric_.sim().cancel(id.timer);
  CmEvent ev;
  if (rep.status != mad::sidr_status::kValid) {
    id.state = State::RouteResolved;
    ev.event = RDMA_CM_EVENT_UNREACHABLE;
    ev.status = rep.status;
  } else {
    id.state = State::Connected;
    ev.event = RDMA_CM_EVENT_ESTABLISHED;
    ev.qp_num = rep.qpn;
    ev.qkey = rep.q_key;
    const mad::PathRecord& p = *id.path;
    ev.ah.dlid = p.dlid;
    ev.ah.sl = p.sl;
    ev.ah.static_rate = p.rate;
    ev.ah.port_num = id.port;
    ev.ah.src_path_bits = static_cast<uint8_t>(p.slid & ((1u << id.hca->port(id.port).lmc) - 1));
    if (p.hop_limit > 1) {
      ev.ah.is_global = 1;
      std::memcpy(ev.ah.dgid, p.dgid.raw.data(), 16);
      ev.ah.flow_label = p.flow_label;
      ev.ah.hop_limit = p.hop_limit;
      ev.ah.traffic_class = p.tclass;
    }
  }
  ev.private_data_len = static_cast<uint32_t>(rep.private_data.size());
  std::copy(rep.private_data.begin(), rep.private_data.end(), ev.private_data);
  emit(id, ev);
}

}  // namespace ibfab::api
