// rdma_cm's listen, and the requests every kind of id shares (connect,
// accept, reject, the new id of a request). UD ids connect by SIDR through
// ib_cm (cma.c's cma_resolve_ib_udp, cma_sidr_rep_handler); RC and UC ids'
// connections are rdma_cm_connected.cpp's.
#include "api/server/kernel/rdma_cm.h"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/server/kernel/rdma_cm_addressing.h"

namespace ibfab::api {
namespace {

using State = RdmaCmState;

uint16_t ps_of_service(uint64_t sid) { return static_cast<uint16_t>(sid >> 16); }

}  // namespace

int64_t RdmaCm::listen(RdmaCmId& id) {
  if (id.state == State::Listen) return 0;
  if (id.state == State::Idle) {
    sockaddr_storage any{};
    any.ss_family = AF_INET;
    if (const int64_t e = bind(id, any)) return e;
  }
  if (id.state != State::AddrBound) return -EINVAL;
  id.state = State::Listen;
  if (connected_type(id)) listen_connected(id, true);
  return 0;
}

int64_t RdmaCm::connect(RdmaCmId& id, const CmConnect& req) {
  if (connected_type(id)) return connect_connected(id, req);
  if (id.qp_type != IBV_QPT_UD) return -EOPNOTSUPP;
  if (id.state != State::RouteResolved || !id.path) return -EINVAL;
  if (req.private_data_len > kCmUdPrivateData) return -EINVAL;
  if (id.src.ss_family == cm::kAfIb) return -EOPNOTSUPP;
  mad::SidrReq sidr;
  sidr.p_key = id.pkey;
  sidr.service_id = cm::service_id(id.ps, cm::port_of(id.dst));
  cm::pack_header(std::span<uint8_t, cm::kHeaderSize>(sidr.private_data.data(), cm::kHeaderSize), id.src, id.dst);
  std::copy_n(req.private_data, req.private_data_len, sidr.private_data.begin() + cm::kHeaderSize);
  fabric::MadAddress to;
  to.lid = id.path->dlid;
  to.sl = id.path->sl;
  to.qpn = 1;
  to.pkey_index = id.pkey_index;
  id.state = State::Connect;
  id.request_id = ib_cm_.send_sidr_req(*id.hca, id.port, to, sidr, id.handle);
  return 0;
}

RdmaCmId* RdmaCm::listener_of(const fabric::Hca& hca, uint64_t service_id) {
  const uint16_t ps = ps_of_service(service_id);
  const auto number = static_cast<uint16_t>(service_id);
  for (const fabric::Hca* key : {&hca, static_cast<const fabric::Hca*>(nullptr)}) {
    auto it = ports_.find({key, ps, number});
    if (it == ports_.end()) continue;
    RdmaCmId& cand = *ids_.at(it->second);
    if (cand.state == State::Listen && (key || every_host_local_) && (!cand.hca || cand.hca == &hca)) return &cand;
  }
  return nullptr;
}

RdmaCmId* RdmaCm::make_request_id(RdmaCmId& listener, fabric::Hca& hca, uint8_t port, uint16_t pkey,
                                   uint64_t service_id, const cm::HeaderAddresses& header) {
  auto made = std::make_unique<RdmaCmId>();
  RdmaCmId& id = *made;
  if (!user_.adopt(id, listener)) return nullptr;
  id.home = listener.home;
  id.ps = listener.ps;
  id.qp_type = listener.qp_type;
  id.seq_num = first_psn(id.handle);
  id.state = State::ConnectRequest;
  attach_device(id, hca, port);
  const fabric::Port& p = hca.port(port);
  for (std::size_t i = 0; i < p.pkeys.size(); ++i)
    if ((p.pkeys[i] & 0x7FFF) == (pkey & 0x7FFF)) {
      id.pkey_index = static_cast<uint16_t>(i);
      id.pkey = p.pkeys[i];
      break;
    }
  id.src = header.dst;
  cm::set_port(id.src, static_cast<uint16_t>(service_id));
  id.dst = header.src;
  const topo::PortAddress* peer = plan_.find(reinterpret_cast<const sockaddr*>(&id.dst));
  if (peer) id.dgid = port_gid(static_cast<const fabric::Hca&>(fabric_.node(peer->node)).port(peer->port));
  const uint32_t h = id.handle;
  return ids_.emplace(h, std::move(made)).first->second.get();
}

void RdmaCm::on_sidr_req(const SidrRequester& from, const mad::SidrReq& req) {
  RdmaCmId* listener = listener_of(*from.hca, req.service_id);
  const auto header = cm::unpack_header(std::span<const uint8_t, cm::kHeaderSize>(req.private_data.data(), cm::kHeaderSize));
  if (!listener || listener->qp_type != IBV_QPT_UD || (req.service_id >> 32) != 0 || !header) {
    ib_cm_.send_sidr_rep(from, mad::sidr_status::kSidNotSupported, 0, 0, {});
    return;
  }
  RdmaCmId* id = make_request_id(*listener, *from.hca, from.port, req.p_key, req.service_id, *header);
  if (!id) {
    ib_cm_.send_sidr_rep(from, mad::sidr_status::kRejected, 0, 0, {});
    return;
  }
  id->requester = from;
  CmEvent ev;
  ev.event = RDMA_CM_EVENT_CONNECT_REQUEST;
  ev.listen_id = listener->handle;
  ev.private_data_len = static_cast<uint32_t>(req.private_data.size() - cm::kHeaderSize);
  std::copy(req.private_data.begin() + cm::kHeaderSize, req.private_data.end(), ev.private_data);
  emit(*id, ev);
}

int64_t RdmaCm::answer(RdmaCmId& id, const CmConnect& req, bool accept) {
  if (connected_type(id)) return answer_connected(id, req, accept);
  if (id.state != State::ConnectRequest) return -EINVAL;
  if (req.private_data_len > mad::SidrRep::kPrivateDataSize) return -EINVAL;
  uint32_t qkey = req.qkey;
  if (accept && qkey == 0) {
    const std::optional<uint32_t> own = qkey_of(id);
    if (!own) return -EADDRNOTAVAIL;
    qkey = *own;
  }
  ib_cm_.send_sidr_rep(id.requester, accept ? mad::sidr_status::kValid : mad::sidr_status::kRejected,
                       accept ? req.qp_num : 0, accept ? qkey : 0,
                       std::span<const uint8_t>(req.private_data, req.private_data_len));
  id.state = State::Connected;
  return 0;
}

void RdmaCm::on_sidr_rep(uint32_t owner, const mad::SidrRep* rep) {
  RdmaCmId* found = find(owner);
  if (!found || found->state != State::Connect) return;
  RdmaCmId& id = *found;
  CmEvent ev;
  if (!rep) {  // every try went unanswered
    id.state = State::RouteResolved;
    ev.event = RDMA_CM_EVENT_UNREACHABLE;
    ev.status = -ETIMEDOUT;
    emit(id, ev);
    return;
  }
  if (rep->status != mad::sidr_status::kValid) {
    id.state = State::RouteResolved;
    ev.event = RDMA_CM_EVENT_UNREACHABLE;
    ev.status = rep->status;
  } else {
    id.state = State::Connected;
    ev.event = RDMA_CM_EVENT_ESTABLISHED;
    ev.qp_num = rep->qpn;
    ev.qkey = rep->q_key;
    ah_of(id, ev.ah);
  }
  ev.private_data_len = static_cast<uint32_t>(rep->private_data.size());
  std::copy(rep->private_data.begin(), rep->private_data.end(), ev.private_data);
  emit(id, ev);
}

void RdmaCm::ah_of(const RdmaCmId& id, CmAhAttr& ah) {
  const mad::PathRecord& p = *id.path;
  ah.dlid = p.dlid;
  ah.sl = p.sl;
  ah.static_rate = p.rate;
  ah.port_num = id.port;
  ah.src_path_bits = static_cast<uint8_t>(p.slid & ((1u << id.hca->port(id.port).lmc) - 1));
  if (p.hop_limit > 1) {
    ah.is_global = 1;
    std::memcpy(ah.dgid, p.dgid.raw.data(), 16);
    ah.flow_label = p.flow_label;
    ah.hop_limit = p.hop_limit;
    ah.traffic_class = p.tclass;
  }
}

}  // namespace ibfab::api
