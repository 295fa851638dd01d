// Protection domains and memory regions. Both live in the engine's HCA
// (verbs_protocol.h: AllocPd, RegMr, ...), whose RC and UC QPs read and
// write the registered memory; the keys are the HCA's. The library keeps a
// copy of each MR to check the SGEs of UD sends and receives, which it
// gathers and scatters itself.
#include <cerrno>
#include <cstring>

#include "api/client/verbs_protocol.h"
#include "api/verbs/export.h"
#include "api/verbs/verbs_internal.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

using namespace ibfab;
using namespace ibfab::verbs;

namespace {

constexpr int kKnownAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                             IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
                             IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | IBV_ACCESS_RELAXED_ORDERING |
                             IBV_ACCESS_OPTIONAL_RANGE;

// rdma-core's and the kernel's checks of access flags: EINVAL or 0.
int check_access(unsigned access) {
  if (access & ~static_cast<unsigned>(kKnownAccess)) return EINVAL;
  // Remote write or atomic access needs local write, as on hardware.
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))
    return EINVAL;
  return 0;
}

// Files `m` under its key's index.
void track(Context& c, Mr* m) {
  std::lock_guard lock(c.mr_mu);
  const uint32_t index = m->mr.lkey >> 8;
  if (index >= c.mrs.size()) c.mrs.resize(index + 1, nullptr);
  c.mrs[index] = m;
}

ibv_mr* register_mr(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access) {
  if (!pd) return fail_null<ibv_mr>(EINVAL);
  if (const int e = check_access(access)) return fail_null<ibv_mr>(e);
  if (!addr && length) return fail_null<ibv_mr>(EINVAL);
  Context& c = *Context::from(pd->context);
  api::RegMr req;
  req.addr = reinterpret_cast<uint64_t>(addr);
  req.length = length;
  req.iova = iova;
  req.pd = pd->handle;
  req.access = access;
  const int64_t key = c.link.request(api::MsgType::RegMr, &req, sizeof req);
  if (key < 0) return fail_null<ibv_mr>(static_cast<int>(-key));
  auto* m = new Mr;
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = static_cast<uint32_t>(key);
  m->mr.lkey = m->mr.rkey = static_cast<uint32_t>(key);
  m->access = static_cast<int>(access);
  m->iova = iova;
  track(c, m);
  return &m->mr;
}

}  // namespace

IBFAB_VERBS_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  if (!context) return fail_null<ibv_pd>(EINVAL);
  const api::AllocPd req;
  const int64_t h = Context::from(context)->link.request(api::MsgType::AllocPd, &req, sizeof req);
  if (h < 0) return fail_null<ibv_pd>(static_cast<int>(-h));
  auto* p = new Pd;
  p->pd.context = context;
  p->pd.handle = static_cast<uint32_t>(h);
  return &p->pd;
}

namespace ibfab::verbs {

// Thread domains do not exist here (ibv_alloc_td is EOPNOTSUPP), so a
// parent domain has none. Its allocators are accepted and not called: the
// queues of every QP, CQ and SRQ are memory the library shares with the
// engine, which no application allocator hands out (the man page lets a
// provider use its own memory).
ibv_pd* alloc_parent_domain_op(ibv_context* context, ibv_parent_domain_init_attr* attr) {
  constexpr uint32_t kKnown = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
  if (!context || !attr || !attr->pd || attr->pd->context != context || attr->td ||
      (attr->comp_mask & ~kKnown) || Pd::from(attr->pd)->protection)
    return fail_null<ibv_pd>(EINVAL);
  if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) && (!attr->alloc || !attr->free))
    return fail_null<ibv_pd>(EINVAL);
  auto* p = new Pd;
  p->protection = Pd::from(attr->pd);
  p->protection->parents.fetch_add(1);
  p->pd.context = context;
  p->pd.handle = attr->pd->handle;
  return &p->pd;
}

}  // namespace ibfab::verbs

IBFAB_VERBS_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  if (!pd) return fail(EINVAL);
  Pd& p = *Pd::from(pd);
  if (p.protection) {  // a parent domain: the engine never knew it
    p.protection->parents.fetch_sub(1);
    delete &p;
    return 0;
  }
  if (p.parents.load() != 0) return fail(EBUSY);
  const api::DestroyObject req{pd->handle};
  if (const int64_t e = Context::from(pd->context)->link.request(api::MsgType::DeallocPd, &req, sizeof req))
    return fail(static_cast<int>(-e));
  delete &p;
  return 0;
}

IBFAB_VERBS_EXPORT ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return register_mr(pd, addr, length, reinterpret_cast<uint64_t>(addr), static_cast<unsigned>(access));
}

IBFAB_VERBS_EXPORT ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return register_mr(pd, addr, length, iova, static_cast<unsigned>(access));
}

IBFAB_VERBS_EXPORT ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova,
                                            unsigned int access) {
  return register_mr(pd, addr, length, iova, access);
}

IBFAB_VERBS_EXPORT int ibv_dereg_mr(ibv_mr* mr) {
  if (!mr) return fail(EINVAL);
  Context& c = *Context::from(mr->context);
  const uint32_t index = mr->lkey >> 8;
  {
    std::lock_guard lock(c.mr_mu);
    if (index >= c.mrs.size() || c.mrs[index] != reinterpret_cast<Mr*>(mr)) return fail(EINVAL);
  }
  const api::DestroyObject req{mr->lkey};
  if (const int64_t e = c.link.request(api::MsgType::DeregMr, &req, sizeof req)) return fail(static_cast<int>(-e));
  {
    std::lock_guard lock(c.mr_mu);
    c.mrs[index] = nullptr;
  }
  delete reinterpret_cast<Mr*>(mr);
  return 0;
}

// rdma-core's argument checks, each IBV_REREG_MR_ERR_INPUT with errno
// EINVAL: unknown flags; IBV_REREG_MR_CHANGE_TRANSLATION without addr or
// length; access given without IBV_REREG_MR_CHANGE_ACCESS. The engine's
// refusal is IBV_REREG_MR_ERR_CMD with its errno, and the MR stays as it
// was. The keys do not change.
IBFAB_VERBS_EXPORT int ibv_rereg_mr(ibv_mr* mr, int flags, ibv_pd* pd, void* addr, std::size_t length, int access) {
  const bool bad_flags = (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) != 0;
  const bool bad_translation = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) != 0 && (addr == nullptr || length == 0);
  const bool stray_access = access != 0 && (flags & IBV_REREG_MR_CHANGE_ACCESS) == 0;
  if (!mr || bad_flags || bad_translation || stray_access) {
    errno = EINVAL;
    return IBV_REREG_MR_ERR_INPUT;
  }
  if (((flags & IBV_REREG_MR_CHANGE_PD) && (!pd || pd->context != mr->context)) ||
      ((flags & IBV_REREG_MR_CHANGE_ACCESS) && check_access(static_cast<unsigned>(access)))) {
    errno = EINVAL;
    return IBV_REREG_MR_ERR_CMD;
  }
  Mr& m = *reinterpret_cast<Mr*>(mr);
  api::ReregMr req;
  req.key = mr->lkey;
  req.flags = static_cast<uint32_t>(flags);
  req.pd = (flags & IBV_REREG_MR_CHANGE_PD) ? pd->handle : mr->pd->handle;
  req.access = static_cast<uint32_t>(access);
  req.addr = reinterpret_cast<uint64_t>(addr);
  req.length = length;
  req.iova = req.addr;
  Context& c = *Context::from(mr->context);
  if (const int64_t e = c.link.request(api::MsgType::ReregMr, &req, sizeof req); e < 0) {
    errno = static_cast<int>(-e);
    return IBV_REREG_MR_ERR_CMD;
  }
  std::lock_guard lock(c.mr_mu);
  if (flags & IBV_REREG_MR_CHANGE_PD) mr->pd = pd;
  if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
    mr->addr = addr;
    mr->length = length;
    m.iova = req.iova;
  }
  if (flags & IBV_REREG_MR_CHANGE_ACCESS) m.access = access;
  return 0;
}
