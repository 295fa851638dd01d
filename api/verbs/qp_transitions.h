#pragma once
// Which attribute masks each QP state transition requires and allows, per
// transport (IBTA 11.2.4.2 / the kernel's ib_modify_qp_is_ok table). A
// transition not in the table, a missing required attribute or an
// attribute it does not allow makes ibv_modify_qp fail with EINVAL, as on
// hardware.
#include <infiniband/verbs.h>

namespace ibfab::verbs {

// True if moving a `type` QP from `cur` to `next` with `mask` is allowed.
// `mask` includes IBV_QP_STATE when the state changes.
bool transition_ok(ibv_qp_type type, ibv_qp_state cur, ibv_qp_state next, int mask);

}  // namespace ibfab::verbs
