#include "api/server/verbs_context.h"

#include <array>
#include <cerrno>
#include <cstring>

#include "api/client/verbs_rings.h"
#include "fabric/model/fabric.h"

namespace ibfab::api {

using rings::CqRing;
using rings::QpRings;
using rings::RecvWqe;
using rings::RingSge;
using rings::SendWqe;
using rings::ConnectedWqe;

namespace {

ibv_event_type to_verbs(fabric::PortEvent e) {
  switch (e) {
    case fabric::PortEvent::Active: return IBV_EVENT_PORT_ACTIVE;
    case fabric::PortEvent::Error: return IBV_EVENT_PORT_ERR;
    case fabric::PortEvent::LidChange: return IBV_EVENT_LID_CHANGE;
    case fabric::PortEvent::PkeyChange: return IBV_EVENT_PKEY_CHANGE;
    case fabric::PortEvent::SmChange: return IBV_EVENT_SM_CHANGE;
    case fabric::PortEvent::ClientReregister: return IBV_EVENT_CLIENT_REREGISTER;
  }
  return IBV_EVENT_DEVICE_FATAL;
}

}  // namespace

void VerbsContext::on_port_event(fabric::Hca&, uint8_t port, fabric::PortEvent event) {
  AsyncEvent e;
  e.type = to_verbs(event);
  e.port = port;
  write_record(async_fd_, &e, sizeof e);
}

int64_t VerbsContext::handle(MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds) {
  switch (type) {
    case MsgType::CreateChannel:
      if (!body_as<CreateChannel>(msg, type)) break;
      return create_channel(fds);
    case MsgType::CreateCq:
      if (auto r = body_as<CreateCq>(msg, type)) return create_cq(*r, fds);
      break;
    case MsgType::ResizeCq:
      if (auto r = body_as<ResizeCq>(msg, type)) return resize_cq(*r, fds);
      break;
    case MsgType::CreateQp:
      if (auto r = body_as<CreateQp>(msg, type)) return create_qp(*r, fds);
      break;
    case MsgType::ModifyQp:
      if (auto r = body_as<ModifyQp>(msg, type)) return modify_qp(*r);
      break;
    case MsgType::DestroyChannel:
    case MsgType::DestroyCq:
    case MsgType::DestroyQp:
      if (auto r = body_as<DestroyObject>(msg, type)) return destroy(type, r->handle);
      break;
    case MsgType::AttachMcast:
    case MsgType::DetachMcast:
      if (auto r = body_as<McastRequest>(msg, type)) return mcast(type, *r);
      break;
    case MsgType::AllocPd:
      if (body_as<AllocPd>(msg, type)) return memory_.alloc_pd();
      break;
    case MsgType::DeallocPd:
      if (auto r = body_as<DestroyObject>(msg, type)) return memory_.dealloc_pd(r->handle);
      break;
    case MsgType::RegMr:
      if (auto r = body_as<RegMr>(msg, type)) return memory_.reg_mr(*r);
      break;
    case MsgType::ReregMr:
      if (auto r = body_as<ReregMr>(msg, type)) return memory_.rereg_mr(*r);
      break;
    case MsgType::DeregMr:
      if (auto r = body_as<DestroyObject>(msg, type)) return memory_.dereg_mr(r->handle);
      break;
    case MsgType::AllocMw:
      if (auto r = body_as<AllocMw>(msg, type)) return memory_.alloc_mw(*r);
      break;
    case MsgType::DeallocMw:
      if (auto r = body_as<DestroyObject>(msg, type)) return memory_.dealloc_mw(r->handle);
      break;
    case MsgType::CreateSrq:
      if (auto r = body_as<CreateSrq>(msg, type)) return create_srq(*r, fds);
      break;
    case MsgType::ModifySrq:
      if (auto r = body_as<ModifySrq>(msg, type)) return modify_srq(*r);
      break;
    case MsgType::DestroySrq:
      if (auto r = body_as<DestroyObject>(msg, type)) return destroy_srq(r->handle);
      break;
    case MsgType::OpenXrcd:
      if (auto r = body_as<OpenXrcd>(msg, type)) return open_xrcd(*r, fds);
      break;
    case MsgType::CloseXrcd:
      if (auto r = body_as<DestroyObject>(msg, type)) return close_xrcd(r->handle);
      break;
    default:
      break;
  }
  return -EINVAL;
}

int64_t VerbsContext::create_channel(ReceivedFds& fds) {
  if (fds.count != 1) return -EINVAL;
  auto ch = std::make_unique<Channel>();
  ch->fd = fds.take(0);
  const uint32_t h = next_handle_++;
  channels_.emplace(h, std::move(ch));
  return h;
}

int64_t VerbsContext::create_cq(const CreateCq& req, ReceivedFds& fds) {
  Channel* ch = nullptr;
  if (req.channel && !(ch = find(channels_, req.channel))) return -EINVAL;
  if (fds.count != 1 || req.depth == 0 || req.depth > rings::kMaxDepth || rings::ring_depth(req.depth) != req.depth)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), CqRing::bytes(req.depth))) return e;
  const uint32_t h = next_handle_++;
  cqs_.emplace(h, std::make_unique<VerbsService::Cq>(*this, std::move(mem), req.depth, ch, req.user_handle));
  return h;
}

int64_t VerbsContext::resize_cq(const ResizeCq& req, ReceivedFds& fds) {
  VerbsService::Cq* cq = find(cqs_, req.cq);
  if (!cq || fds.count != 1 || req.depth == 0 || req.depth > rings::kMaxDepth ||
      rings::ring_depth(req.depth) != req.depth)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), CqRing::bytes(req.depth))) return e;
  return -cq->resize(std::move(mem), req.depth);
}

int64_t VerbsContext::create_qp(const CreateQp& req, ReceivedFds& fds) {
  VerbsService::Cq* scq = find(cqs_, req.send_cq);
  VerbsService::Cq* rcq = find(cqs_, req.recv_cq);
  if (req.qp_type == IBV_QPT_RC || req.qp_type == IBV_QPT_UC || req.qp_type == IBV_QPT_XRC_SEND ||
      req.qp_type == IBV_QPT_XRC_RECV)
    return create_connected_qp(req, fds, scq, rcq);
  const auto good_depth = [](uint32_t d) { return d > 0 && d <= rings::kMaxDepth && rings::ring_depth(d) == d; };
  if (!scq || !rcq || fds.count != 1 || !good_depth(req.sq_depth) || !good_depth(req.rq_depth) ||
      req.sq_slot < sizeof(SendWqe) || req.sq_slot > sizeof(SendWqe) + rings::kMaxUdPayload ||
      req.rq_slot < rings::kGrhBytes || req.rq_slot > rings::kGrhBytes + rings::kMaxUdPayload)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), QpRings::bytes(req.sq_depth, req.sq_slot, req.rq_depth, req.rq_slot)))
    return e;
  const uint32_t qpn = hca_.create_ud_qp(1, 0, 0, nullptr, req.block_self_mcast_lb != 0);
  auto qp = std::make_unique<VerbsService::Qp>(*this, hca_.fabric().sim(), qpn, std::move(mem), req, scq, rcq);
  qp->set_stamped(ordered_by_caller_);
  if (req.qp_type == IBV_QPT_UD) hca_.set_endpoint(qpn, qp.get());
  scq->users++;
  rcq->users++;
  service_.qps_.add(qp.get());
  qps_.emplace(qpn, std::move(qp));
  return qpn;
}

int64_t VerbsContext::create_connected_qp(const CreateQp& req, ReceivedFds& fds, VerbsService::Cq* scq,
                                          VerbsService::Cq* rcq) {
  const auto good_depth = [](uint32_t d) { return d > 0 && d <= rings::kMaxDepth && rings::ring_depth(d) == d; };
  // The slots hold a WQE and what the QP's limits let follow it.
  const uint64_t sq_need = sizeof(ConnectedWqe) + std::max<uint64_t>(uint64_t{req.max_send_sge} * sizeof(RingSge),
                                                                      req.max_inline_data);
  const uint64_t rq_need = sizeof(RecvWqe) + uint64_t{req.max_recv_sge} * sizeof(RingSge);
  constexpr uint32_t kMaxSlot = sizeof(SendWqe) + rings::kMaxUdPayload;
  // An XRC target has its domain and nothing else: no PD, CQs or SRQ.
  const bool target = req.qp_type == IBV_QPT_XRC_RECV;
  XrcdHandle* domain = target ? xrcd(req.xrcd) : nullptr;
  const VerbsService::SharedRq* srq = req.srq != 0 ? find(srqs_, req.srq) : nullptr;
  if ((target ? !domain : !scq || !rcq || !memory_.has_pd(req.pd)) || fds.count != 1 ||
      !good_depth(req.sq_depth) || !good_depth(req.rq_depth) || req.max_send_sge > 64 || req.max_recv_sge > 64 ||
      req.max_inline_data > 2048 || (req.srq != 0 && (!srq || srq->cq() || target)) ||
      req.sq_slot < sq_need || req.sq_slot > kMaxSlot || req.rq_slot < rq_need || req.rq_slot > kMaxSlot)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), QpRings::bytes(req.sq_depth, req.sq_slot, req.rq_depth, req.rq_slot)))
    return e;
  CreateQp model = req;
  if (srq) model.srq = srq->srqn();
  auto qp = std::make_unique<VerbsService::ConnectedQp>(*this, std::move(mem), model, target ? nullptr : scq,
                                                        target ? nullptr : rcq, domain ? domain->model : 0);
  const uint32_t qpn = qp->create();
  if (qpn == 0) return -EINVAL;
  qp->set_stamped(ordered_by_caller_);
  if (target) {
    domain->users++;
  } else {
    scq->users++;
    rcq->users++;
  }
  service_.connected_.add(qp.get());
  connected_.emplace(qpn, std::move(qp));
  return qpn;
}

int64_t VerbsContext::create_srq(const CreateSrq& req, ReceivedFds& fds) {
  const bool good_depth = req.depth > 0 && req.depth <= rings::kMaxDepth && rings::ring_depth(req.depth) == req.depth;
  // An XRC SRQ: its domain and its CQ, both given or neither.
  XrcdHandle* domain = req.xrcd ? xrcd(req.xrcd) : nullptr;
  VerbsService::Cq* cq = req.cq ? find(cqs_, req.cq) : nullptr;
  if ((req.xrcd || req.cq) && (!domain || !cq)) return -EINVAL;
  if (fds.count != 1 || !good_depth || !memory_.has_pd(req.pd) || req.max_sge > 64 ||
      req.slot < sizeof(RecvWqe) + std::size_t{req.max_sge} * sizeof(RingSge) ||
      req.slot > sizeof(SendWqe) + rings::kMaxUdPayload)
    return -EINVAL;
  SharedMemory mem;
  if (const int e = mem.map(fds.take(0), QpRings::bytes(0, 0, req.depth, req.slot))) return e;
  auto srq = std::make_unique<VerbsService::SharedRq>(*this, std::move(mem), req, cq, domain ? domain->model : 0);
  if (srq->create() == 0) return -EINVAL;
  const uint32_t h = next_handle_++;
  const uint32_t srqn = srq->srqn();
  service_.srqs_.add(srq.get());
  srqs_.emplace(h, std::move(srq));
  if (domain) {
    domain->users++;
    cq->users++;
  }
  return int64_t{srqn} << 32 | h;
}

int64_t VerbsContext::modify_srq(const ModifySrq& req) {
  VerbsService::SharedRq* srq = find(srqs_, req.srq);
  return srq ? -hca_.arm_srq_limit(srq->srqn(), req.limit) : -EINVAL;
}

int64_t VerbsContext::destroy_srq(uint32_t handle) {
  auto it = srqs_.find(handle);
  if (it == srqs_.end()) return -EINVAL;
  if (const int e = hca_.destroy_srq(it->second->srqn())) return -e;
  if (VerbsService::Cq* cq = it->second->cq()) {
    cq->users--;
    xrcd(it->second->request().xrcd)->users--;
  }
  service_.srqs_.remove(it->second.get());
  srqs_.erase(it);
  return 0;
}

int64_t VerbsContext::modify_qp(const ModifyQp& req) {
  if (VerbsService::ConnectedQp* cqp = find(connected_, req.qp_num)) {
    if (req.set_pkey_index || (req.mask & IBV_QP_PKEY_INDEX)) {
      const uint8_t port = (req.mask & IBV_QP_PORT) ? req.port : hca_.qp_port(cqp->qpn());
      if (port >= 1 && port <= hca_.num_ports() && req.pkey_index >= hca_.port(port).pkeys.size()) return -EINVAL;
    }
    return -cqp->modify(req);
  }
  VerbsService::Qp* qp = find(qps_, req.qp_num);
  if (!qp || req.state > IBV_QPS_ERR) return -EINVAL;
  if (req.set_port && (req.port < 1 || req.port > hca_.num_ports())) return -EINVAL;
  if (req.set_port || req.set_pkey_index) {
    const uint8_t port = req.set_port ? req.port : hca_.qp_port(qp->qpn());
    if (req.set_pkey_index && req.pkey_index >= hca_.port(port).pkeys.size()) return -EINVAL;
    hca_.set_qp_port(qp->qpn(), port, req.set_pkey_index ? req.pkey_index : hca_.qp_pkey_index(qp->qpn()));
  }
  if (req.set_qkey) hca_.set_qkey(qp->qpn(), req.qkey);
  qp->set_state(req.state);
  return 0;
}

int64_t VerbsContext::destroy(MsgType type, uint32_t handle) {
  if (type == MsgType::DestroyQp) {
    if (auto c = connected_.find(handle); c != connected_.end()) {
      hca_.destroy_qp(handle);
      memory_.flush_posted();
      if (c->second->send_cq()) {
        c->second->send_cq()->users--;
        c->second->recv_cq()->users--;
      } else {  // an XRC target
        xrcd(c->second->request().xrcd)->users--;
      }
      service_.connected_.remove(c->second.get());
      connected_.erase(c);
      return 0;
    }
    auto it = qps_.find(handle);
    if (it == qps_.end()) return -EINVAL;
    if (it->second->attached()) return -EBUSY;  // as uverbs: detach first (the context's close detaches all)
    hca_.destroy_qp(handle);
    it->second->send_cq()->users--;
    it->second->recv_cq()->users--;
    service_.qps_.remove(it->second.get());
    qps_.erase(it);
    return 0;
  }
  if (type == MsgType::DestroyCq) {
    auto it = cqs_.find(handle);
    if (it == cqs_.end()) return -EINVAL;
    if (it->second->users) return -EBUSY;
    cqs_.erase(it);
    return 0;
  }
  auto it = channels_.find(handle);
  if (it == channels_.end()) return -EINVAL;
  for (const auto& [h, cq] : cqs_)
    if (cq->channel() == it->second.get()) return -EBUSY;
  channels_.erase(it);
  return 0;
}

int64_t VerbsContext::mcast(MsgType type, const McastRequest& req) {
  VerbsService::Qp* qp = find(qps_, req.qp_num);
  if (!qp) return -EINVAL;
  std::array<uint8_t, 16> gid;
  std::memcpy(gid.data(), req.gid, 16);
  return -(type == MsgType::AttachMcast ? qp->attach(hca_, gid, req.lid) : qp->detach(hca_, gid, req.lid));
}

}  // namespace ibfab::api
