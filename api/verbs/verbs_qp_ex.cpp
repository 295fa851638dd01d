// The extended send API (struct ibv_qp_ex, verbs.h's ibv_wr_*) of QPs
// created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, as mlx5 gives it:
//   - creation refuses, with EOPNOTSUPP, an operation the QP's type has not
//     (UD: SEND and SEND_WITH_IMM; UC: those, SEND_WITH_INV, RDMA WRITE with
//     and without immediate, LOCAL_INV and BIND_MW; RC: all of these, RDMA
//     READ and both atomics); every builder and setter of the type is
//     filled whatever the flags asked, and the others record EOPNOTSUPP;
//   - wr_start takes the send queue's lock until wr_complete or wr_abort;
//     each builder begins a WQE with qpx.wr_id and qpx.wr_flags as they are
//     then; the WQEs go into the send ring past its posted head and
//     wr_complete publishes them all, or none: an error in the sequence
//     (the queue full, more SGEs than max_send_sge or more inline bytes than
//     max_inline_data: ENOMEM; a bind past 2 GiB: EOPNOTSUPP; an operation
//     the type has not, a WQE without its data or address: EINVAL) is
//     returned by wr_complete, as is EINVAL for a QP in RESET, INIT or RTR;
//   - the data is what ibv_post_send makes of it: RC and UC WQEs carry
//     their SGEs (or inline bytes, copied at the call) for the engine's
//     model to read; UD payloads are gathered at the setter.
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>

#include "api/verbs/verbs_internal.h"

namespace ibfab::verbs {
namespace {

using api::rings::ConnectedWqe;
using api::rings::RingSge;
using api::rings::SendWqe;

constexpr uint64_t kUdOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
constexpr uint64_t kUcOps = kUdOps | IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |
                            IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;
constexpr uint64_t kRcOps =
    kUcOps | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

Qp& of(ibv_qp_ex* q) { return *reinterpret_cast<Qp*>(q); }

// Records the sequence's first error; nothing more is built.
void fail_batch(WrBatch& b, int e) {
  if (!b.error) b.error = e;
  b.slot = nullptr;
}

ConnectedWqe& connected_header(WrBatch& b) { return *std::launder(reinterpret_cast<ConnectedWqe*>(b.header)); }
SendWqe& ud_header(WrBatch& b) { return *std::launder(reinterpret_cast<SendWqe*>(b.header)); }

bool is_atomic(uint8_t op) { return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD; }

// Writes the WQE being built into its slot, or records why it cannot go.
void finish(WrBatch& b) {
  if (!b.slot) return;
  if (b.connected) {
    ConnectedWqe& w = connected_header(b);
    const bool needs_data = b.opcode != IBV_WR_BIND_MW && b.opcode != IBV_WR_LOCAL_INV;
    const bool inline_data = (w.send_flags & IBV_SEND_INLINE) != 0;
    if ((needs_data && !b.has_data) || (is_atomic(b.opcode) && (inline_data || w.num_sge < 1)) ||
        (b.opcode == IBV_WR_RDMA_READ && inline_data))
      return fail_batch(b, EINVAL);
    std::memcpy(b.slot, &w, sizeof w);
  } else {
    if (!b.has_data || !b.has_addr) return fail_batch(b, EINVAL);
    std::memcpy(b.slot, &ud_header(b), sizeof(SendWqe));
  }
  b.slot = nullptr;
}

// The next slot of the batch for a WQE of `opcode`, its header begun; null
// (the error recorded) when the queue is full or the batch has failed.
uint8_t* begin(Qp& qp, uint8_t opcode) {
  WrBatch& b = qp.batch;
  finish(b);
  if (b.error) return nullptr;
  const uint32_t index = qp.sq_head + b.count;
  const uint32_t retired = qp.connected() ? qp.sq_done.load(std::memory_order_acquire)
                                          : qp.rings->sq_tail.value.load(std::memory_order_acquire);
  if (index - retired >= qp.sq_depth) {
    fail_batch(b, ENOMEM);
    return nullptr;
  }
  b.slot = qp.rings->send_slot(index, qp.sq_depth, qp.sq_slot);
  ++b.count;
  b.opcode = opcode;
  b.has_data = b.has_addr = false;
  b.connected = qp.connected();
  const unsigned flags = qp.qpx.wr_flags;
  if (b.connected) {
    auto* w = new (b.header) ConnectedWqe;
    w->wr_id = qp.qpx.wr_id;
    w->opcode = opcode;
    w->send_flags = flags & ~static_cast<unsigned>(IBV_SEND_INLINE);  // inline is the setter's to say
  } else {
    auto* w = new (b.header) SendWqe;
    w->wr_id = qp.qpx.wr_id;
    if (flags & IBV_SEND_SIGNALED) w->flags |= SendWqe::kSignaled;
    if (flags & IBV_SEND_SOLICITED) w->flags |= SendWqe::kSolicited;
    if (opcode == IBV_WR_SEND_WITH_IMM) w->flags |= SendWqe::kImmediate;
  }
  return b.slot;
}

ConnectedWqe* begin_connected(ibv_qp_ex* q, uint8_t opcode) {
  Qp& qp = of(q);
  return begin(qp, opcode) ? &connected_header(qp.batch) : nullptr;
}

// --- builders ---

void wr_send(ibv_qp_ex* q) { begin(of(q), IBV_WR_SEND); }

void wr_send_imm(ibv_qp_ex* q, __be32 imm) {
  Qp& qp = of(q);
  if (!begin(qp, IBV_WR_SEND_WITH_IMM)) return;
  if (qp.batch.connected) connected_header(qp.batch).imm_data = imm;
  else ud_header(qp.batch).imm_data = imm;
}

void wr_send_inv(ibv_qp_ex* q, uint32_t rkey) {
  if (q->qp_base.qp_type != IBV_QPT_RC) return fail_batch(of(q).batch, EINVAL);  // ibv_post_send refuses it on UC
  if (ConnectedWqe* w = begin_connected(q, IBV_WR_SEND_WITH_INV)) w->imm_data = htobe32(rkey);
}

void rdma(ibv_qp_ex* q, uint8_t opcode, uint32_t rkey, uint64_t remote_addr, __be32 imm) {
  if (ConnectedWqe* w = begin_connected(q, opcode)) {
    w->rkey = rkey;
    w->remote_addr = remote_addr;
    w->imm_data = imm;
  }
}

void wr_rdma_write(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) { rdma(q, IBV_WR_RDMA_WRITE, rkey, addr, 0); }
void wr_rdma_write_imm(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, __be32 imm) {
  rdma(q, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}
void wr_rdma_read(ibv_qp_ex* q, uint32_t rkey, uint64_t addr) { rdma(q, IBV_WR_RDMA_READ, rkey, addr, 0); }

void atomic(ibv_qp_ex* q, uint8_t opcode, uint32_t rkey, uint64_t remote_addr, uint64_t compare_add, uint64_t swap) {
  if (ConnectedWqe* w = begin_connected(q, opcode)) {
    w->rkey = rkey;
    w->remote_addr = remote_addr;
    w->compare_add = compare_add;
    w->swap = swap;
  }
}

void wr_atomic_cmp_swp(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
  atomic(q, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}
void wr_atomic_fetch_add(ibv_qp_ex* q, uint32_t rkey, uint64_t addr, uint64_t add) {
  atomic(q, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

void wr_bind_mw(ibv_qp_ex* q, ibv_mw* mw, uint32_t rkey, const ibv_mw_bind_info* info) {
  if (!mw || !info || (!info->mr && (info->addr || info->length))) return fail_batch(of(q).batch, EINVAL);
  if (info->length > (uint64_t{1} << 31)) return fail_batch(of(q).batch, EOPNOTSUPP);
  if (ConnectedWqe* w = begin_connected(q, IBV_WR_BIND_MW)) put_bind(mw, rkey, *info, *w);
}

void wr_local_inv(ibv_qp_ex* q, uint32_t rkey) {
  if (ConnectedWqe* w = begin_connected(q, IBV_WR_LOCAL_INV)) w->imm_data = htobe32(rkey);
}

// --- setters ---

// The WQE a setter completes, or null when there is none (no builder yet,
// or the batch failed).
WrBatch* current(ibv_qp_ex* q) {
  WrBatch& b = of(q).batch;
  if (!b.slot) {
    if (!b.error && !b.count) b.error = EINVAL;  // a setter before any builder
    return nullptr;
  }
  return &b;
}

void set_sge_list(ibv_qp_ex* q, std::size_t n, const ibv_sge* list) {
  WrBatch* b = current(q);
  if (!b) return;
  Qp& qp = of(q);
  if (n > qp.cap.max_send_sge || (n && !list)) return fail_batch(*b, ENOMEM);
  b->has_data = true;
  if (b->connected) {
    ConnectedWqe& w = connected_header(*b);
    w.num_sge = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!list[i].length) continue;  // as mlx5 skips them
      const RingSge r{list[i].addr, list[i].length, list[i].lkey};
      std::memcpy(b->slot + sizeof w + w.num_sge * sizeof r, &r, sizeof r);
      ++w.num_sge;
    }
    return;
  }
  SendWqe& w = ud_header(*b);
  w.status = static_cast<uint8_t>(gather_sges(*Context::from(q->qp_base.context), list, n, false,
                                              b->slot + sizeof w, qp.sq_slot - sizeof w, w.length));
}

void wr_set_sge(ibv_qp_ex* q, uint32_t lkey, uint64_t addr, uint32_t length) {
  const ibv_sge s{addr, length, lkey};
  set_sge_list(q, 1, &s);
}

void wr_set_sge_list(ibv_qp_ex* q, std::size_t n, const ibv_sge* list) { set_sge_list(q, n, list); }

void set_inline_list(ibv_qp_ex* q, std::size_t n, const ibv_data_buf* list) {
  WrBatch* b = current(q);
  if (!b) return;
  Qp& qp = of(q);
  uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += list[i].length;
  if (total > qp.cap.max_inline_data || (n && !list)) return fail_batch(*b, ENOMEM);
  b->has_data = true;
  uint8_t* out = b->slot + (b->connected ? sizeof(ConnectedWqe) : sizeof(SendWqe));
  uint32_t length = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (list[i].length) std::memcpy(out + length, list[i].addr, list[i].length);
    length += static_cast<uint32_t>(list[i].length);
  }
  if (b->connected) {
    ConnectedWqe& w = connected_header(*b);
    w.send_flags |= IBV_SEND_INLINE;
    w.inline_length = length;
    w.num_sge = 0;
  } else {
    ud_header(*b).length = length;
  }
}

void wr_set_inline_data(ibv_qp_ex* q, void* addr, std::size_t length) {
  const ibv_data_buf d{addr, length};
  set_inline_list(q, 1, &d);
}

void wr_set_inline_data_list(ibv_qp_ex* q, std::size_t n, const ibv_data_buf* list) { set_inline_list(q, n, list); }

void wr_set_ud_addr(ibv_qp_ex* q, ibv_ah* ah, uint32_t remote_qpn, uint32_t remote_qkey) {
  WrBatch* b = current(q);
  if (!b) return;
  if (!ah) return fail_batch(*b, EINVAL);
  ud_address(of(q), ah, remote_qpn, remote_qkey, ud_header(*b));
  b->has_addr = true;
}

// An XRC initiator's WQE: the SRQ (of the target's domain) its message goes to.
void wr_set_xrc_srqn(ibv_qp_ex* q, uint32_t remote_srqn) {
  WrBatch* b = current(q);
  if (!b) return;
  connected_header(*b).remote_srqn = remote_srqn & 0xFFFFFF;
}

// --- the sequence ---

void wr_start(ibv_qp_ex* q) {
  Qp& qp = of(q);
  qp.sq_mu.lock();
  qp.batch.count = 0;
  qp.batch.error = 0;
  qp.batch.slot = nullptr;
}

// Whether the QP's state lets work be posted (ibv_post_send's rule).
bool may_post(Qp& qp) {
  const ibv_qp_state s = qp.state();
  if (qp.connected()) return s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_RTR;
  return s == IBV_QPS_RTS || s == IBV_QPS_ERR;
}

int wr_complete(ibv_qp_ex* q) {
  Qp& qp = of(q);
  WrBatch& b = qp.batch;
  finish(b);
  int error = b.error;
  if (!may_post(qp)) error = EINVAL;
  const uint32_t count = error ? 0 : b.count;
  if (count) {
    const uint64_t stamp = post_stamp(qp);
    const std::size_t at = qp.connected() ? offsetof(ConnectedWqe, stamp) : offsetof(SendWqe, stamp);
    for (uint32_t i = 0; i < count; ++i)
      std::memcpy(qp.rings->send_slot(qp.sq_head + i, qp.sq_depth, qp.sq_slot) + at, &stamp, sizeof stamp);
    qp.sq_head += count;
    qp.rings->sq_head.value.store(qp.sq_head, std::memory_order_release);
  }
  b.count = 0;
  b.slot = nullptr;
  qp.sq_mu.unlock();
  if (count) Context::from(q->qp_base.context)->link.doorbell();
  return error;
}

void wr_abort(ibv_qp_ex* q) {
  Qp& qp = of(q);
  qp.batch.count = 0;
  qp.batch.slot = nullptr;
  qp.sq_mu.unlock();
}

// What a QP's type has not: the call is recorded as EOPNOTSUPP.
template <class... A>
void refused(ibv_qp_ex* q, A...) {
  fail_batch(of(q).batch, EOPNOTSUPP);
}

template <class... A>
void offer(void (*&slot)(ibv_qp_ex*, A...), void (*fn)(ibv_qp_ex*, A...), bool available) {
  slot = available ? fn : &refused<A...>;
}

}  // namespace

int enable_wr_api(Qp& qp, ibv_qp_type type, uint64_t flags) {
  const bool xrc = type == IBV_QPT_XRC_SEND;  // an XRC initiator sends as RC does
  const uint64_t ops = type == IBV_QPT_RC || xrc ? kRcOps
                       : type == IBV_QPT_UC      ? kUcOps
                       : type == IBV_QPT_UD      ? kUdOps
                                                 : 0;
  if (!ops || (flags & ~ops)) return EOPNOTSUPP;
  ibv_qp_ex& x = qp.qpx;
  const bool rc = type == IBV_QPT_RC || xrc, ud = type == IBV_QPT_UD;
  x.wr_start = wr_start;
  x.wr_complete = wr_complete;
  x.wr_abort = wr_abort;
  offer(x.wr_send, &wr_send, true);
  offer(x.wr_send_imm, &wr_send_imm, true);
  offer(x.wr_send_inv, &wr_send_inv, !ud);
  offer(x.wr_rdma_write, &wr_rdma_write, !ud);
  offer(x.wr_rdma_write_imm, &wr_rdma_write_imm, !ud);
  offer(x.wr_rdma_read, &wr_rdma_read, rc);
  offer(x.wr_atomic_cmp_swp, &wr_atomic_cmp_swp, rc);
  offer(x.wr_atomic_fetch_add, &wr_atomic_fetch_add, rc);
  offer(x.wr_bind_mw, &wr_bind_mw, !ud);
  offer(x.wr_local_inv, &wr_local_inv, !ud);
  offer(x.wr_set_ud_addr, &wr_set_ud_addr, ud);
  offer(x.wr_set_sge, &wr_set_sge, true);
  offer(x.wr_set_sge_list, &wr_set_sge_list, true);
  offer(x.wr_set_inline_data, &wr_set_inline_data, true);
  offer(x.wr_set_inline_data_list, &wr_set_inline_data_list, true);
  x.wr_send_tso = &refused<void*, uint16_t, uint16_t>;
  offer(x.wr_set_xrc_srqn, &wr_set_xrc_srqn, xrc);
  x.wr_atomic_write = &refused<uint32_t, uint64_t, const void*>;
  qp.extended = true;
  return 0;
}

}  // namespace ibfab::verbs
