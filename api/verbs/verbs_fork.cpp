// ibv_fork_init(3), ibv_is_fork_initialized(3), and the range calls
// ibv_dontfork_range/ibv_dofork_range (IBVERBS_1.1; declared only in
// rdma-core's driver.h, which providers such as libmlx5 use).
//
// What rdma-core protects against: after fork() the parent's registered pages
// are copy-on-write, and the first write gives the parent a new page while
// the HCA still writes the old one. So it marks registered ranges
// MADV_DONTFORK. ibfab's simulated HCA reaches registered memory through the
// process's own virtual addresses, never physical pages, so there is nothing
// to protect: the calls keep rdma-core's state and results, and do no
// madvise.
//
// Contract (rdma-core 44's results):
// - ibv_fork_init() returns 0 and turns protection on (0 again when already
//   on); EINVAL when a range call came first while protection was off
//   (rdma-core's "too late": ranges registered before were not protected).
// - ibv_is_fork_initialized() is IBV_FORK_ENABLED once protection is on,
//   else IBV_FORK_DISABLED. (rdma-core says IBV_FORK_UNNEEDED when the
//   kernel copies pinned pages on fork; ibfab does not ask the kernel.)
// - ibv_dontfork_range/ibv_dofork_range return 0.
// - RDMAV_FORK_SAFE or IBV_FORK_SAFE in the environment turns protection on,
//   read once (verbs_fork.h).
#include "api/verbs/verbs_fork.h"

#include <infiniband/verbs.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <mutex>

#include "api/verbs/export.h"

namespace ibfab::verbs {
namespace {

std::once_flag environment_read;
std::atomic<bool> protection_on{false};
// A range call came while protection was off: ibv_fork_init is too late.
std::atomic<bool> range_seen_unprotected{false};

// The range calls' shared bookkeeping.
int note_range() noexcept {
  apply_fork_environment();
  if (!protection_on.load()) range_seen_unprotected.store(true);
  return 0;
}

}  // namespace

void apply_fork_environment() noexcept {
  std::call_once(environment_read, [] {
    if (std::getenv("RDMAV_FORK_SAFE") != nullptr || std::getenv("IBV_FORK_SAFE") != nullptr)
      protection_on.store(true);
  });
}

}  // namespace ibfab::verbs

IBFAB_VERBS_EXPORT int ibv_fork_init(void) {
  using namespace ibfab::verbs;
  apply_fork_environment();
  if (protection_on.load()) return 0;
  if (range_seen_unprotected.load()) return EINVAL;
  protection_on.store(true);
  return 0;
}

IBFAB_VERBS_EXPORT ibv_fork_status ibv_is_fork_initialized(void) {
  using namespace ibfab::verbs;
  apply_fork_environment();
  return protection_on.load() ? IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

IBFAB_VERBS_EXPORT int ibv_dontfork_range(void* /*base*/, std::size_t /*size*/) {
  return ibfab::verbs::note_range();
}

IBFAB_VERBS_EXPORT int ibv_dofork_range(void* /*base*/, std::size_t /*size*/) {
  return ibfab::verbs::note_range();
}
