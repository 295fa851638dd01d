// Multicast: joins (named to the engine by their uid, the address of the
// client's Join), what a MULTICAST_JOIN event does to the id's QP, and
// leaving, which waits until the join's handed-out events are acked.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "api/rdmacm/export.h"
#include "api/rdmacm/rdmacm_internal.h"

namespace ibfab::rdmacm {
namespace {

// The joins by uid: live ones, and left ones whose memory (their uid) stays
// until the events the engine gave them before the leave have been read and
// dropped. Lock order: this, then an Id's mu; never the other way round.
struct JoinRegistry {
  std::mutex mu;
  std::unordered_map<uint64_t, Join*> live;
  std::unordered_map<uint64_t, Join*> left;
};

JoinRegistry& registry() {
  static auto* r = new JoinRegistry;  // never destroyed
  return *r;
}

// Under registry().mu: forgets a left join once nothing more is owed.
void settle(Join* j) {
  if (j->owed < 0 || j->dropped < j->owed) return;
  registry().left.erase(j->uid());
  delete j;
}

// Moves a join from the live ones to the left ones: its events unread are
// dropped from now on.
void leave_registry(Join* j) {
  std::lock_guard lock(registry().mu);
  registry().live.erase(j->uid());
  registry().left[j->uid()] = j;
}

int join(Id& id, const sockaddr* addr, socklen_t len, uint16_t flags, void* context) {
  auto* j = new Join;
  j->owner = &id;
  j->context = context;
  j->join_flags = flags;
  std::memcpy(&j->addr, addr, len);
  {
    std::lock_guard lock(id.mu);
    id.joins.insert(id.joins.begin(), j);
  }
  {
    std::lock_guard lock(registry().mu);
    registry().live[j->uid()] = j;
  }
  api::CmJoin req;
  req.id = id.handle;
  req.join_flags = flags;
  req.uid = j->uid();
  std::memcpy(&req.addr, addr, len);
  const api::CmReply r = request(api::MsgType::CmJoin, &req, sizeof req);
  if (r.value < 0) {
    {
      std::lock_guard lock(registry().mu);
      registry().live.erase(j->uid());
    }
    {
      std::lock_guard lock(id.mu);
      std::erase(id.joins, j);
    }
    delete j;
    return fail(static_cast<int>(-r.value));
  }
  return complete(id);
}

}  // namespace

Join* claim_join(uint64_t uid) {
  std::lock_guard lock(registry().mu);
  if (const auto it = registry().live.find(uid); it != registry().live.end()) {
    Join* j = it->second;
    std::lock_guard id_lock(j->owner->mu);
    ++j->delivered;
    ++j->owner->delivered;
    return j;
  }
  if (const auto it = registry().left.find(uid); it != registry().left.end()) {
    ++it->second->dropped;
    settle(it->second);
  }
  return nullptr;
}

void retire_joins(Id& id) {
  std::vector<Join*> joins;
  {
    std::lock_guard lock(id.mu);
    joins.swap(id.joins);
  }
  // How many events each still has coming is not known (the engine counts
  // them for the id): their memory stays, as rdma-core's does.
  for (Join* j : joins) leave_registry(j);
}

int process_join(Join& j, rdma_cm_id& id, const api::CmEvent& e) {
  std::memcpy(j.mgid.raw, e.mgid, sizeof j.mgid.raw);
  j.mlid = e.mlid;
  if (!id.qp || j.join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) return 0;
  const int err = ibv_attach_mcast(id.qp, &j.mgid, j.mlid);
  return err ? fail(err) : 0;
}

}  // namespace ibfab::rdmacm

using namespace ibfab;
using namespace ibfab::rdmacm;

IBFAB_RDMACM_EXPORT int rdma_join_multicast(rdma_cm_id* id, sockaddr* addr, void* context) {
  if (init() != 0) return -1;
  const socklen_t len = addr_len(addr);
  if (!len || !id) return fail(EINVAL);
  return join(*Id::from(id), addr, len, RDMA_MC_JOIN_FLAG_FULLMEMBER, context);
}

IBFAB_RDMACM_EXPORT int rdma_join_multicast_ex(rdma_cm_id* id, rdma_cm_join_mc_attr_ex* mc_join_attr,
                                               void* context) {
  if (init() != 0) return -1;
  if (!mc_join_attr) return fail(EINVAL);
  if (mc_join_attr->comp_mask >= RDMA_CM_JOIN_MC_ATTR_RESERVED) return fail(ENOTSUP);
  if (!(mc_join_attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_ADDRESS)) return fail(EINVAL);
  if (!(mc_join_attr->comp_mask & RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS) ||
      mc_join_attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
    return fail(EINVAL);
  const socklen_t len = addr_len(mc_join_attr->addr);
  if (!len || !id) return fail(EINVAL);
  return join(*Id::from(id), mc_join_attr->addr, len, static_cast<uint16_t>(mc_join_attr->join_flags), context);
}

IBFAB_RDMACM_EXPORT int rdma_leave_multicast(rdma_cm_id* id, sockaddr* addr) {
  if (init() != 0) return -1;
  const socklen_t len = addr_len(addr);
  if (!len || !id) return fail(EINVAL);
  Id& i = *Id::from(id);
  Join* j = nullptr;
  {
    std::lock_guard lock(i.mu);
    const auto it =
        std::find_if(i.joins.begin(), i.joins.end(), [&](Join* x) { return std::memcmp(&x->addr, addr, len) == 0; });
    if (it != i.joins.end()) {
      j = *it;
      i.joins.erase(it);
    }
  }
  if (!j) return fail(EADDRNOTAVAIL);
  leave_registry(j);
  if (id->qp && j->join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) ibv_detach_mcast(id->qp, &j->mgid, j->mlid);
  const api::CmLeave req{i.handle, 0, j->uid()};
  const api::CmReply r = request(api::MsgType::CmLeave, &req, sizeof req);
  int64_t delivered = 0;
  {
    std::unique_lock lock(i.mu);
    i.acked_cv.wait(lock, [&] { return j->acked >= j->delivered; });
    delivered = j->delivered;
  }
  {
    // A failed leave: the engine has no such join, so nothing more comes.
    std::lock_guard lock(registry().mu);
    j->owed = r.value < 0 ? 0 : std::max<int64_t>(r.value - delivered, 0);
    settle(j);
  }
  return status_of(r.value);
}
