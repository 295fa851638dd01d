#pragma once
// Fork protection state of libibverbs.so.1 (ibv_fork_init and friends,
// verbs_fork.cpp).
//
// rdma-core calls ibv_fork_init() while it builds the device list when
// RDMAV_FORK_SAFE or IBV_FORK_SAFE is set. ibfab does the same once, at the
// first of: apply_fork_environment(), ibv_fork_init(),
// ibv_is_fork_initialized(), ibv_dontfork_range(), ibv_dofork_range().

namespace ibfab::verbs {

// Reads RDMAV_FORK_SAFE/IBV_FORK_SAFE if nothing has read them yet, and
// turns fork protection on when either is set (to anything). For the code
// that builds the device list, as rdma-core's library initialisation does.
// Thread-safe; later calls do nothing.
void apply_fork_environment() noexcept;

}  // namespace ibfab::verbs
