// rdma_cm's ids, addresses and routes. Joins are in rdma_cm_join.cpp,
// listen/connect/accept in rdma_cm_connect.cpp.
#include "api/server/kernel/rdma_cm.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/server/kernel/rdma_cm_addressing.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/model/sa_client.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::api {
namespace {

namespace pr = mad::pr_comp;
using State = RdmaCmState;

}  // namespace

wire::Gid RdmaCm::port_gid(const fabric::Port& p) { return wire::Gid::from(p.gid_prefix, p.guid()); }

RdmaCm::RdmaCm(fabric::Fabric& fabric, const topo::AddressPlan& plan, HostStacks& stacks, IbCm& ib_cm, User& user,
               bool every_host_local)
    : fabric_(fabric), plan_(plan), stacks_(stacks), ib_cm_(ib_cm), user_(user), every_host_local_(every_host_local) {}

// --- Ids ----------------------------------------------------------------------

bool RdmaCm::listening(const fabric::Hca& hca, uint16_t port) const {
  for (const uint16_t ps : {cm::kPsTcp, cm::kPsUdp, cm::kPsIb, cm::kPsIpoib})
    for (const fabric::Hca* key : {&hca, static_cast<const fabric::Hca*>(nullptr)}) {
      const auto it = ports_.find({key, ps, port});
      if (it != ports_.end() && ids_.at(it->second)->state == State::Listen && (key || every_host_local_)) return true;
    }
  return false;
}

bool RdmaCm::known_port_space(uint16_t ps) {
  switch (ps) {
    case cm::kPsUdp:
    case cm::kPsIpoib:
    case cm::kPsIb:
    case cm::kPsTcp:
      return true;
    default:
      return false;
  }
}

RdmaCmId& RdmaCm::create(uint32_t handle, uint16_t ps, uint8_t qp_type, fabric::Hca* home) {
  auto id = std::make_unique<RdmaCmId>();
  id->handle = handle;
  id->home = home;
  id->ps = ps;
  id->qp_type = qp_type;
  id->seq_num = first_psn(handle);
  return *ids_.emplace(handle, std::move(id)).first->second;
}

RdmaCmId* RdmaCm::find(uint32_t handle) {
  auto it = ids_.find(handle);
  return it != ids_.end() ? it->second.get() : nullptr;
}

void RdmaCm::destroy(RdmaCmId& id) {
  fabric_.sim().cancel(id.timer);
  if (id.sa_ticket && id.hca) port_stack(id).sa->cancel(id.sa_ticket);
  for (const RdmaCmJoin& j : id.joins)
    if (id.hca) port_stack(id).mcast->leave(j.member);
  if (id.bound) ports_.erase(*id.bound);
  if (id.state == State::Connect && !connected_type(id)) ib_cm_.cancel_sidr_req(id.request_id);
  if (id.state == State::ConnectRequest && !connected_type(id))  // ib_cm rejects a SIDR REQ left unanswered
    ib_cm_.send_sidr_rep(id.requester, mad::sidr_status::kRejected, 0, 0, {});
  if (id.state == State::Listen && connected_type(id)) listen_connected(id, false);
  drop_connection(id);
  ids_.erase(id.handle);
}

void RdmaCm::attach_device(RdmaCmId& id, fabric::Hca& hca, uint8_t port) {
  id.hca = &hca;
  id.port = port;
  const fabric::Port& p = hca.port(port);
  id.pkey_index = 0;
  id.pkey = p.pkeys.empty() ? 0xFFFF : p.pkeys[0];
}

// --- Addresses ----------------------------------------------------------------

int64_t RdmaCm::bind(RdmaCmId& id, const sockaddr_storage& addr) {
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
      if (!every_host_local_ && id.home) check(*id.home);
      stacks_.for_each([&](const HostStack& s) {
        if (every_host_local_ && !hca) check(*s.hca);
      });
    } else if (const topo::PortAddress* pa = plan_.find(reinterpret_cast<const sockaddr*>(&addr))) {
      hca = static_cast<fabric::Hca*>(&fabric_.node(pa->node));
      port = pa->port;
    }
    if (!hca || !local(id, *hca)) return -EADDRNOTAVAIL;
  }
  const fabric::Hca* key_host = hca ? hca : id.home;
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

int64_t RdmaCm::resolve_addr(RdmaCmId& id, const CmAddrRequest& req) {
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
    fabric::Hca& from = routing_host(id);
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
    id.dgid = cm::mgid_for(req.dst, id.ps, Ipoib::broadcast_mgid(id.hca->port(id.port)));
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
    RdmaCmId* late = find(h);
    if (!late) return;
    late->state = State::AddrBound;
    CmEvent ev;
    ev.event = RDMA_CM_EVENT_ADDR_ERROR;
    ev.status = -ETIMEDOUT;
    emit(*late, ev);
  });
  return 0;
}

int64_t RdmaCm::resolve_route(RdmaCmId& id, uint32_t timeout_ms) {
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
        RdmaCmId* found = find(h);
        if (!found) return;
        RdmaCmId& id = *found;
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

int64_t RdmaCm::set_ib_path(RdmaCmId& id, const CmSetIbPath& req) {
  if (id.state != State::AddrResolved || !id.hca) return -EINVAL;  // as rdma_set_ib_path: from ADDR_RESOLVED only
  id.path = mad::PathRecord::unpack(req.path_record);
  id.state = State::RouteResolved;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_ROUTE_RESOLVED;
  emit(id, ev);
  return 0;
}

void RdmaCm::query(const RdmaCmId& id, CmIdInfo& info) const {
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

std::optional<uint32_t> RdmaCm::qkey_of(const RdmaCmId& id) {
  if (id.ps != cm::kPsIpoib) return cm::kUdpQkey;
  if (!id.hca) return std::nullopt;
  const mad::McMemberRecord* b = port_stack(id).ipoib->broadcast();
  if (!b) return std::nullopt;
  return b->q_key;
}

int64_t RdmaCm::init_qp_attr(RdmaCmId& id, uint32_t state, CmIdInfo& info) {
  if (!id.hca) return -EINVAL;
  if (connected_type(id)) return init_connected_qp_attr(id, state, info);
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

}  // namespace ibfab::api
