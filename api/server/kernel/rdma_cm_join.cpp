// rdma_cm's multicast joins (cma.c's cma_join_ib_multicast), through the
// port's multicast module.
#include "api/server/kernel/rdma_cm.h"

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "api/server/kernel/rdma_cm_addressing.h"

namespace ibfab::api {
namespace {

namespace mcm = mad::mcm_comp;
using State = RdmaCmState;

}  // namespace

int64_t RdmaCm::join(RdmaCmId& id, const CmJoin& req) {
  if (!id.hca || (id.state != State::AddrBound && id.state != State::AddrResolved)) return -EINVAL;
  if (id.qp_type != IBV_QPT_UD) return -EINVAL;
  uint8_t bit = 0;
  if (req.join_flags == RDMA_MC_JOIN_FLAG_FULLMEMBER) bit = mad::join_state::kFull;
  else if (req.join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) bit = mad::join_state::kSendOnlyFull;
  else return -EINVAL;
  if (cm::address_size(req.addr) == 0) return -EINVAL;
  PortStack& ps = port_stack(id);
  const mad::McMemberRecord* bcast = ps.ipoib->broadcast();
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
  RdmaCmJoin j;
  j.uid = uid;
  j.member = ps.mcast->join(rec, mask, [this, h, uid, port](int status, const mad::McMemberRecord& got) {
    RdmaCmId* found = find(h);
    if (!found) return;
    RdmaCmId& id = *found;
    if (std::none_of(id.joins.begin(), id.joins.end(), [&](const RdmaCmJoin& x) { return x.uid == uid; })) return;
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

std::optional<RdmaCmJoin> RdmaCm::leave(RdmaCmId& id, uint64_t uid) {
  auto jt = std::find_if(id.joins.begin(), id.joins.end(), [&](const RdmaCmJoin& x) { return x.uid == uid; });
  if (jt == id.joins.end()) return std::nullopt;
  port_stack(id).mcast->leave(jt->member);
  const RdmaCmJoin left = *jt;
  id.joins.erase(jt);
  return left;
}

void RdmaCm::forget_joins(const fabric::Hca& hca, uint8_t port) {
  for (auto& [h, id] : ids_)
    if (id->hca == &hca && id->port == port)
      for (RdmaCmJoin& j : id->joins) j.member = 0;
}

}  // namespace ibfab::api
