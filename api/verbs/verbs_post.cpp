// Posting work: the hot path. UD: a send is gathered into the QP's send
// ring at post time (SGEs checked against the MRs; a bad one becomes an
// error completion, as on hardware); a receive is kept here and only
// counted in the ring. RC and UC: the WQE goes into the ring with its SGEs
// (or its inline bytes, copied now), and the engine's HCA model reads the
// memory when it builds the packets; receives go into the ring likewise.
// No system call unless the engine sleeps (then one doorbell per call, not
// per WR).
#include <cerrno>
#include <cstring>

#include "api/client/program_clock.h"
#include "api/verbs/verbs_internal.h"

namespace ibfab::verbs {
namespace {

// A WR's opcode as the int its C caller stored, which may be no
// ibv_wr_opcode at all: reading the enum field itself would load a value
// outside the enum's range.
int opcode_of(const ibv_send_wr& wr) {
  int op;
  static_assert(sizeof op == sizeof wr.opcode);
  std::memcpy(&op, &wr.opcode, sizeof op);
  return op;
}

using api::rings::ConnectedWqe;
using api::rings::RecvWqe;
using api::rings::RingSge;
using api::rings::SendWqe;

// Gathers `wr`'s data into `out`; returns the completion status.
ibv_wc_status gather(Context& c, const ibv_send_wr& wr, uint8_t* out, uint32_t room, uint32_t& length) {
  return gather_sges(c, wr.sg_list, static_cast<std::size_t>(wr.num_sge), (wr.send_flags & IBV_SEND_INLINE) != 0, out,
                     room, length);
}

// The error a WR is refused with at post time (0: it is accepted).
int refuse(const Qp& qp, const ibv_send_wr& wr) {
  if (opcode_of(wr) != IBV_WR_SEND && opcode_of(wr) != IBV_WR_SEND_WITH_IMM) return EINVAL;
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > qp.cap.max_send_sge || (wr.num_sge && !wr.sg_list))
    return EINVAL;
  if (!wr.wr.ud.ah) return EINVAL;
  if (wr.send_flags & IBV_SEND_INLINE) {
    uint64_t total = 0;
    for (int i = 0; i < wr.num_sge; ++i) total += wr.sg_list[i].length;
    if (total > qp.cap.max_inline_data) return EINVAL;
  }
  return 0;
}

// The error a receive WR is refused with at post time (0: it fits and the
// queue has room).
int refuse_recv(const Qp& qp, const ibv_recv_wr& wr) {
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > qp.cap.max_recv_sge || (wr.num_sge && !wr.sg_list))
    return EINVAL;
  if (qp.rq_posted - qp.rq_done.load(std::memory_order_acquire) >= qp.rq_depth) return ENOMEM;
  return 0;
}

// The error a BIND_MW is refused with at post time (0: accepted): a
// window to bind, a region when there is a range, a range mlx5's UMR can
// describe (2 GiB at most: EOPNOTSUPP).
int refuse_bind(const ibv_mw* mw, const ibv_mw_bind_info& info) {
  if (!mw || (!info.mr && (info.addr || info.length))) return EINVAL;
  if (info.length > (uint64_t{1} << 31)) return EOPNOTSUPP;
  return 0;
}

// The error an RC or UC WR is refused with at post time, as mlx5 refuses
// it (0: accepted).
int refuse_connected(const Qp& qp, const ibv_send_wr& wr) {
  const ibv_qp_type type = qp.qpx.qp_base.qp_type;
  if (type == IBV_QPT_XRC_RECV) return EINVAL;  // an XRC target has no send queue
  const bool rc = type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;
  switch (opcode_of(wr)) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      break;
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
    case IBV_WR_SEND_WITH_INV:
      if (!rc) return EINVAL;
      break;
    case IBV_WR_LOCAL_INV:
      return 0;  // no SGEs read
    case IBV_WR_BIND_MW:
      return refuse_bind(wr.bind_mw.mw, wr.bind_mw.bind_info);
    default:
      return EINVAL;
  }
  if (wr.num_sge < 0 || (wr.num_sge && !wr.sg_list)) return EINVAL;
  const bool atomic = opcode_of(wr) == IBV_WR_ATOMIC_CMP_AND_SWP || opcode_of(wr) == IBV_WR_ATOMIC_FETCH_AND_ADD;
  if (wr.send_flags & IBV_SEND_INLINE) {
    if (atomic || opcode_of(wr) == IBV_WR_RDMA_READ) return EINVAL;
    uint64_t total = 0;
    for (int i = 0; i < wr.num_sge; ++i) total += wr.sg_list[i].length;
    if (total > qp.cap.max_inline_data) return EINVAL;
  } else if (static_cast<uint32_t>(wr.num_sge) > qp.cap.max_send_sge) {
    return EINVAL;
  }
  if (atomic && wr.num_sge < 1) return EINVAL;
  return 0;
}

// Writes `wr` into send slot `slot` of an RC, UC or XRC_SEND QP.
void put_connected(const Qp& qp, const ibv_send_wr& wr, uint64_t stamp, uint8_t* slot) {
  ConnectedWqe w;
  w.wr_id = wr.wr_id;
  if (qp.qpx.qp_base.qp_type == IBV_QPT_XRC_SEND) w.remote_srqn = wr.qp_type.xrc.remote_srqn & 0xFFFFFF;
  w.opcode = static_cast<uint8_t>(opcode_of(wr));
  w.send_flags = wr.send_flags;
  w.stamp = stamp;
  if (opcode_of(wr) == IBV_WR_SEND_WITH_INV || opcode_of(wr) == IBV_WR_LOCAL_INV)
    w.imm_data = htobe32(wr.invalidate_rkey);
  else w.imm_data = wr.imm_data;
  if (opcode_of(wr) == IBV_WR_BIND_MW || opcode_of(wr) == IBV_WR_LOCAL_INV) {  // no data
    if (opcode_of(wr) == IBV_WR_BIND_MW) put_bind(wr.bind_mw.mw, wr.bind_mw.rkey, wr.bind_mw.bind_info, w);
    std::memcpy(slot, &w, sizeof w);
    return;
  }
  if (opcode_of(wr) == IBV_WR_ATOMIC_CMP_AND_SWP || opcode_of(wr) == IBV_WR_ATOMIC_FETCH_AND_ADD) {
    w.remote_addr = wr.wr.atomic.remote_addr;
    w.rkey = wr.wr.atomic.rkey;
    w.compare_add = wr.wr.atomic.compare_add;
    w.swap = wr.wr.atomic.swap;
  } else {
    w.remote_addr = wr.wr.rdma.remote_addr;
    w.rkey = wr.wr.rdma.rkey;
  }
  uint8_t* after = slot + sizeof w;
  if (wr.send_flags & IBV_SEND_INLINE) {  // the bytes now: the buffer is the application's again at return
    for (int i = 0; i < wr.num_sge; ++i) {
      const ibv_sge& s = wr.sg_list[i];
      std::memcpy(after + w.inline_length, reinterpret_cast<const void*>(s.addr), s.length);
      w.inline_length += s.length;
    }
  } else {
    w.num_sge = static_cast<uint16_t>(wr.num_sge);
    for (int i = 0; i < wr.num_sge; ++i) {
      const RingSge r{wr.sg_list[i].addr, wr.sg_list[i].length, wr.sg_list[i].lkey};
      std::memcpy(after + i * sizeof r, &r, sizeof r);
    }
  }
  std::memcpy(slot, &w, sizeof w);
}

int post_send_connected(Qp& qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  const ibv_qp_state state = qp.state();
  if (state == IBV_QPS_RESET || state == IBV_QPS_INIT || state == IBV_QPS_RTR) return *bad_wr = wr, EINVAL;
  int error = 0;
  {
    std::lock_guard lock(qp.sq_mu);
    const uint64_t stamp = post_stamp(qp);
    for (; wr; wr = wr->next) {
      if ((error = refuse_connected(qp, *wr)) != 0) break;
      if (qp.sq_head - qp.sq_done.load(std::memory_order_acquire) >= qp.sq_depth) {
        error = ENOMEM;
        break;
      }
      put_connected(qp, *wr, stamp, qp.rings->send_slot(qp.sq_head, qp.sq_depth, qp.sq_slot));
      ++qp.sq_head;
    }
    qp.rings->sq_head.value.store(qp.sq_head, std::memory_order_release);
  }
  Context::from(qp.qp()->context)->link.doorbell();
  if (error) *bad_wr = wr;
  return error;
}

// Writes receive `wr` into slot `slot` of a receive ring.
void put_recv(const ibv_recv_wr& wr, uint8_t* slot) {
  RecvWqe w;
  w.wr_id = wr.wr_id;
  w.num_sge = static_cast<uint32_t>(wr.num_sge);
  for (int i = 0; i < wr.num_sge; ++i) {
    const RingSge r{wr.sg_list[i].addr, wr.sg_list[i].length, wr.sg_list[i].lkey};
    std::memcpy(slot + sizeof w + i * sizeof r, &r, sizeof r);
  }
  std::memcpy(slot, &w, sizeof w);
}

// A receive wakes no sleeping engine (no system call), unless the QP is in
// error and the receive is to be flushed: the engine takes a QP's receives
// at the start of every round, before it moves any packet, so a receive
// posted before the peer's SEND (which wakes the engine) is in the model's
// queue when that SEND arrives; one posted later is a race the responder
// answers with an RNR NAK, as hardware does.
int post_recv_connected(Qp& qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  const ibv_qp_state state = qp.state();
  const bool xrc = qp.qp()->qp_type == IBV_QPT_XRC_SEND || qp.qp()->qp_type == IBV_QPT_XRC_RECV;  // no RQ
  if (state == IBV_QPS_RESET || qp.srq || xrc) return *bad_wr = wr, EINVAL;
  int error = 0;
  {
    std::lock_guard lock(qp.rq_mu);
    for (; wr; wr = wr->next) {
      if ((error = refuse_recv(qp, *wr)) != 0) break;
      put_recv(*wr, qp.rings->recv_slot(qp.rq_posted, qp.sq_depth, qp.sq_slot, qp.rq_depth, qp.rq_slot));
      ++qp.rq_posted;
    }
    qp.rings->rq_posted.value.store(qp.rq_posted, std::memory_order_release);
  }
  if (state == IBV_QPS_ERR) Context::from(qp.qp()->context)->link.doorbell();
  if (error) *bad_wr = wr;
  return error;
}

}  // namespace

ibv_wc_status gather_sges(Context& c, const ibv_sge* sges, std::size_t n, bool inline_data, uint8_t* out,
                          uint32_t room, uint32_t& length) {
  uint64_t total = 0;
  for (std::size_t i = 0; i < n; ++i) total += sges[i].length;
  length = 0;
  if (total > room) return IBV_WC_LOC_LEN_ERR;
  for (std::size_t i = 0; i < n; ++i) {
    const ibv_sge& s = sges[i];
    if (!s.length) continue;
    if (!inline_data && !c.covers(s.lkey, s.addr, s.length, 0)) return IBV_WC_LOC_PROT_ERR;
    std::memcpy(out + length, reinterpret_cast<const void*>(s.addr), s.length);
    length += s.length;
  }
  return IBV_WC_SUCCESS;
}

void ud_address(const Qp& qp, const ibv_ah* ah_, uint32_t remote_qpn, uint32_t remote_qkey, SendWqe& w) {
  const ibv_ah_attr& a = reinterpret_cast<const Ah*>(ah_)->attr;
  w.dlid = a.dlid;
  w.sl = a.sl;
  w.src_path_bits = a.src_path_bits;
  if (a.is_global) {
    w.flags |= SendWqe::kGlobal;
    std::memcpy(w.dgid, a.grh.dgid.raw, 16);
    w.flow_label = a.grh.flow_label;
    w.hop_limit = a.grh.hop_limit;
    w.traffic_class = a.grh.traffic_class;
    w.sgid_index = a.grh.sgid_index;
  }
  w.remote_qpn = remote_qpn;
  // A Q_Key with the high bit set means "the QP's own" (IBTA 10.2.5).
  w.remote_qkey = (remote_qkey & 0x80000000u) ? qp.attr.qkey : remote_qkey;
}

void put_bind(const ibv_mw* mw, uint32_t new_rkey, const ibv_mw_bind_info& info, ConnectedWqe& w) {
  w.rkey = mw->rkey;
  w.imm_data = htobe32(new_rkey);
  w.remote_addr = info.addr;
  w.compare_add = info.length;
  w.swap = uint64_t{static_cast<uint32_t>(info.mw_access_flags)} << 32 | (info.mr ? info.mr->lkey : 0);
}

uint64_t post_stamp(const Qp& qp) {
  // Only while the engine orders this process's posts with its MADs (it
  // has a umad port open): a post made before that needs none, being
  // older than any MAD.
  return qp.rings->stamped.value.load(std::memory_order_acquire) ? api::program_clock_ns() : 0;
}

int post_send(ibv_qp* q, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  if (!q || !bad_wr) return EINVAL;
  Qp& qp = *Qp::from(q);
  if (qp.connected()) return post_send_connected(qp, wr, bad_wr);
  if (q->qp_type != IBV_QPT_UD) return *bad_wr = wr, EOPNOTSUPP;
  const ibv_qp_state state = qp.state();
  if (state != IBV_QPS_RTS && state != IBV_QPS_ERR) return *bad_wr = wr, EINVAL;
  Context& c = *Context::from(q->context);
  int error = 0;
  {
    std::lock_guard lock(qp.sq_mu);
    // Under the lock: one QP's stamps never go back.
    const uint64_t stamp = post_stamp(qp);
    const uint32_t room = qp.sq_slot - static_cast<uint32_t>(sizeof(SendWqe));
    for (; wr; wr = wr->next) {
      if ((error = refuse(qp, *wr)) != 0) break;
      if (qp.sq_head - qp.rings->sq_tail.value.load(std::memory_order_acquire) >= qp.sq_depth) {
        error = ENOMEM;
        break;
      }
      uint8_t* slot = qp.rings->send_slot(qp.sq_head, qp.sq_depth, qp.sq_slot);
      SendWqe w;
      w.wr_id = wr->wr_id;
      w.stamp = stamp;
      w.status = static_cast<uint8_t>(gather(c, *wr, slot + sizeof w, room, w.length));
      if (wr->send_flags & IBV_SEND_SIGNALED) w.flags |= SendWqe::kSignaled;
      if (wr->send_flags & IBV_SEND_SOLICITED) w.flags |= SendWqe::kSolicited;
      if (opcode_of(*wr) == IBV_WR_SEND_WITH_IMM) {
        w.flags |= SendWqe::kImmediate;
        w.imm_data = wr->imm_data;
      }
      ud_address(qp, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey, w);
      std::memcpy(slot, &w, sizeof w);
      ++qp.sq_head;
    }
    qp.rings->sq_head.value.store(qp.sq_head, std::memory_order_release);
  }
  c.link.doorbell();
  if (error) *bad_wr = wr;
  return error;
}

int post_recv(ibv_qp* q, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  if (!q || !bad_wr) return EINVAL;
  Qp& qp = *Qp::from(q);
  if (qp.connected()) return post_recv_connected(qp, wr, bad_wr);
  if (q->qp_type != IBV_QPT_UD) return *bad_wr = wr, EOPNOTSUPP;
  const ibv_qp_state state = qp.state();
  if (state == IBV_QPS_RESET) return *bad_wr = wr, EINVAL;
  int error = 0;
  {
    std::lock_guard lock(qp.rq_mu);
    for (; wr; wr = wr->next) {
      if ((error = refuse_recv(qp, *wr)) != 0) break;
      RecvWr& r = qp.rwr[qp.rq_posted & (qp.rq_depth - 1)];
      r.wr_id = wr->wr_id;
      r.num_sge = static_cast<uint32_t>(wr->num_sge);
      std::memcpy(r.sge, wr->sg_list, sizeof(ibv_sge) * r.num_sge);
      ++qp.rq_posted;
    }
    qp.rings->rq_posted.value.store(qp.rq_posted, std::memory_order_release);
  }
  if (state == IBV_QPS_ERR) Context::from(q->context)->link.doorbell();  // to be flushed
  if (error) *bad_wr = wr;
  return error;
}

int post_srq_recv(ibv_srq* s, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  if (!s || !bad_wr) return EINVAL;
  Srq& srq = *Srq::from(s);
  int error = 0;
  {
    std::lock_guard lock(srq.mu);
    for (; wr; wr = wr->next) {
      if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > srq.max_sge || (wr->num_sge && !wr->sg_list)) {
        error = EINVAL;
        break;
      }
      if (srq.posted - srq.done.load(std::memory_order_acquire) >= srq.depth) {
        error = ENOMEM;
        break;
      }
      put_recv(*wr, srq.rings->recv_slot(srq.posted, 0, 0, srq.depth, srq.slot));
      ++srq.posted;
    }
    srq.rings->rq_posted.value.store(srq.posted, std::memory_order_release);
  }
  Context::from(s->context)->link.doorbell();
  if (error) *bad_wr = wr;
  return error;
}

}  // namespace ibfab::verbs
