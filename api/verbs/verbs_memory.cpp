// Protection domains and memory regions. MRs live in the client only: the
// library gathers and scatters message data itself, checking every SGE's
// lkey against them, so the engine never reads the application's memory.
#include <cerrno>

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

ibv_mr* register_mr(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access) {
  if (!pd || (access & ~static_cast<unsigned>(kKnownAccess))) return fail_null<ibv_mr>(EINVAL);
  // Remote write or atomic access needs local write, as on hardware.
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))
    return fail_null<ibv_mr>(EINVAL);
  if (!addr && length) return fail_null<ibv_mr>(EINVAL);
  Context& c = *Context::from(pd->context);
  auto* m = new Mr;
  std::lock_guard lock(c.mr_mu);
  uint32_t index;
  if (!c.free_mrs.empty()) {
    index = c.free_mrs.back();
    c.free_mrs.pop_back();
  } else {
    index = static_cast<uint32_t>(c.mrs.size());
    c.mrs.push_back(nullptr);
  }
  if (++c.key_generation == 0) c.key_generation = 1;
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = index;
  m->mr.lkey = m->mr.rkey = (index << 8) | c.key_generation;
  m->access = static_cast<int>(access);
  (void)iova;  // the address SGEs name is the virtual address (UD has no remote access)
  c.mrs[index] = m;
  return &m->mr;
}

}  // namespace

IBFAB_VERBS_EXPORT ibv_pd* ibv_alloc_pd(ibv_context* context) {
  if (!context) return fail_null<ibv_pd>(EINVAL);
  auto* p = new Pd;
  p->pd.context = context;
  return &p->pd;
}

IBFAB_VERBS_EXPORT int ibv_dealloc_pd(ibv_pd* pd) {
  if (!pd) return fail(EINVAL);
  delete reinterpret_cast<Pd*>(pd);
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
  std::lock_guard lock(c.mr_mu);
  const uint32_t index = mr->lkey >> 8;
  if (index >= c.mrs.size() || c.mrs[index] != reinterpret_cast<Mr*>(mr)) return fail(EINVAL);
  c.mrs[index] = nullptr;
  c.free_mrs.push_back(index);
  delete reinterpret_cast<Mr*>(mr);
  return 0;
}
