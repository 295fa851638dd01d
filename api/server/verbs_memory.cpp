#include "api/server/verbs_memory.h"

#include <infiniband/verbs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fabric/model/work_request.h"

namespace ibfab::api {
namespace {

namespace access = fabric::access;
static_assert(access::kLocalWrite == IBV_ACCESS_LOCAL_WRITE && access::kRemoteWrite == IBV_ACCESS_REMOTE_WRITE &&
              access::kRemoteRead == IBV_ACCESS_REMOTE_READ && access::kRemoteAtomic == IBV_ACCESS_REMOTE_ATOMIC &&
              access::kMwBind == IBV_ACCESS_MW_BIND && access::kZeroBased == IBV_ACCESS_ZERO_BASED);

// The bits the table checks; the others (on demand paging, relaxed
// ordering, ...) change nothing a simulated HCA does.
constexpr uint32_t kTableAccess =
    access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic | access::kMwBind;

}  // namespace

VerbsMemory::VerbsMemory(fabric::Hca& hca, pid_t pid, std::function<void(const std::string&)> refused)
    : hca_(hca), memory_(pid), refused_(std::move(refused)) {}

VerbsMemory::~VerbsMemory() {
  fabric::MemoryTable& table = hca_.memory();
  for (const auto& [handle, pd] : windows_) (void)release_window(handle, pd);
  for (const auto& [key, r] : regions_) (void)table.deregister(key);
  for (uint32_t pd : pds_) (void)hca_.dealloc_pd(pd);
}

bool VerbsMemory::has_pd(uint32_t pd) const { return std::find(pds_.begin(), pds_.end(), pd) != pds_.end(); }

int64_t VerbsMemory::alloc_pd() {
  const uint32_t pd = hca_.alloc_pd();
  if (pd == 0) return -ENOMEM;
  pds_.push_back(pd);
  return pd;
}

int64_t VerbsMemory::dealloc_pd(uint32_t pd) {
  if (!has_pd(pd)) return -EINVAL;
  for (const auto& [key, r] : regions_)
    if (r.pd == pd) return -EBUSY;
  for (const auto& [rkey, owner] : windows_)
    if (owner == pd) return -EBUSY;
  if (const int e = hca_.dealloc_pd(pd)) return -e;
  std::erase(pds_, pd);
  return 0;
}

int VerbsMemory::check(uint64_t addr, uint64_t length, uint64_t iova, uint32_t access) {
  // Remote write or atomic access needs local write (ib_check_mr_access).
  if ((access & (access::kRemoteWrite | access::kRemoteAtomic)) && !(access & access::kLocalWrite)) return EINVAL;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  // The IOVA keeps the address's offset in its page (ib_uverbs_reg_mr).
  if (((addr ^ iova) & (page - 1)) != 0 || addr + length < addr) return EINVAL;
  const int e = memory_.check_readable(addr, length);
  if (e != 0 && e != EFAULT && !told_ && refused_) {
    told_ = true;
    refused_(std::string("cannot reach the memory of pid ") + std::to_string(memory_.pid()) + " to register it: " +
             std::strerror(e) +
             (e == EPERM ? " (the engine may not ptrace it: another user, or Yama's ptrace_scope above 1)" : ""));
  }
  return e;
}

int64_t VerbsMemory::reg_mr(const RegMr& r) {
  if (!has_pd(r.pd)) return -EINVAL;
  if (const int e = check(r.addr, r.length, r.iova, r.access)) return -e;
  const uint32_t access = r.access & kTableAccess;
  const uint32_t key = hca_.memory().register_region(r.pd, memory_, r.addr, r.length, r.iova, access);
  if (key == 0) return -ENOMEM;
  regions_.emplace(key, Region{r.pd, r.addr, r.length, r.iova, access});
  return key;
}

int64_t VerbsMemory::rereg_mr(const ReregMr& r) {
  auto it = regions_.find(r.key);
  if (it == regions_.end()) return -EINVAL;
  Region next = it->second;
  if (r.flags & ~static_cast<uint32_t>(IBV_REREG_MR_FLAGS_SUPPORTED)) return -EINVAL;
  if (r.flags & IBV_REREG_MR_CHANGE_PD) {
    if (!has_pd(r.pd)) return -EINVAL;
    next.pd = r.pd;
  }
  if (r.flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
    next.addr = r.addr;
    next.length = r.length;
    next.iova = r.iova;
  }
  if (r.flags & IBV_REREG_MR_CHANGE_ACCESS) next.access = r.access & kTableAccess;
  if (r.flags & (IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS))
    if (const int e = check(next.addr, next.length, next.iova, next.access)) return -e;
  if (const int e = hca_.memory().reregister(r.key, next.pd, memory_, next.addr, next.length, next.iova, next.access))
    return -e;
  it->second = next;
  return r.key;
}

int64_t VerbsMemory::dereg_mr(uint32_t key) {
  auto it = regions_.find(key);
  if (it == regions_.end()) return -EINVAL;
  if (const int e = hca_.memory().deregister(key)) return -e;  // EBUSY: windows are bound to it
  regions_.erase(it);
  return 0;
}

int64_t VerbsMemory::alloc_mw(const AllocMw& r) {
  if (!has_pd(r.pd) || (r.type != IBV_MW_TYPE_1 && r.type != IBV_MW_TYPE_2)) return -EINVAL;
  const uint32_t rkey = hca_.memory().allocate_window(r.pd, static_cast<uint8_t>(r.type));
  if (rkey == 0) return -ENOMEM;
  windows_.emplace(rkey, r.pd);
  return rkey;
}

int VerbsMemory::release_window(uint32_t handle, uint32_t pd) {
  fabric::MemoryTable& table = hca_.memory();
  const uint32_t rkey = table.window_key(handle);
  if (rkey == 0) return EINVAL;
  (void)table.invalidate(rkey, pd);  // a bound type 2 window; nothing for the others
  return table.deallocate_window(rkey);
}

int64_t VerbsMemory::dealloc_mw(uint32_t handle) {
  auto it = windows_.find(handle);
  if (it == windows_.end()) return -EINVAL;
  if (const int e = release_window(handle, it->second)) return -e;
  windows_.erase(it);
  return 0;
}

}  // namespace ibfab::api
