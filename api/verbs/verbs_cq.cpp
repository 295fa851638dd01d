// Completion channels and CQs. The engine writes CQEs into the CQ's ring;
// polling reads them with no system call and, for receives, scatters the
// message from the QP's receive slot into the WR's SGEs (checking their
// lkeys as the HCA would).
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "api/client/verbs_protocol.h"
#include "api/verbs/export.h"
#include "api/verbs/verbs_internal.h"

using namespace ibfab;
using namespace ibfab::verbs;
using api::rings::Cqe;
using api::rings::CqRing;

namespace ibfab::verbs {
namespace {

// Moves a QP to the error state after a receive-side completion error.
void enter_error(Qp& qp) {
  api::ModifyQp m;
  m.qp_num = qp.qp()->qp_num;
  m.state = IBV_QPS_ERR;
  Context::from(qp.qp()->context)->link.request(api::MsgType::ModifyQp, &m, sizeof m);
  qp.attr.qp_state = IBV_QPS_ERR;
  qp.qp()->state = IBV_QPS_ERR;
}

// Scatters a received message (GRH slot and payload, `len` bytes in all)
// into `w`'s SGEs. The first 40 bytes are left untouched when no GRH came.
ibv_wc_status scatter(Context& c, const RecvWr& w, const uint8_t* slot, uint32_t len, bool grh) {
  uint64_t room = 0;
  for (uint32_t i = 0; i < w.num_sge; ++i) room += w.sge[i].length;
  if (room < len) return IBV_WC_LOC_LEN_ERR;
  for (uint32_t i = 0; i < w.num_sge; ++i)
    if (w.sge[i].length && !c.covers(w.sge[i].lkey, w.sge[i].addr, w.sge[i].length, IBV_ACCESS_LOCAL_WRITE))
      return IBV_WC_LOC_PROT_ERR;
  uint32_t done = 0;
  for (uint32_t i = 0; i < w.num_sge && done < len; ++i) {
    const uint32_t n = std::min(w.sge[i].length, len - done);
    auto* dst = reinterpret_cast<uint8_t*>(w.sge[i].addr);
    // Bytes [0, 40) are the GRH's: copied only when one came.
    const uint32_t skip = grh || done >= api::rings::kGrhBytes ? 0 : std::min(n, api::rings::kGrhBytes - done);
    std::memcpy(dst + skip, slot + done + skip, n - skip);
    done += n;
  }
  return IBV_WC_SUCCESS;
}

}  // namespace

void fill_wc(const Cqe& e, ibv_wc& wc) {
  std::memset(&wc, 0, sizeof wc);
  // An XRC SRQ's receive names the SRQ (its QP may be another process's).
  Srq* xrc_srq = (e.flags & Cqe::kXrcSrq) ? reinterpret_cast<Srq*>(e.qp_handle) : nullptr;
  Qp& qp = *reinterpret_cast<Qp*>(e.qp_handle);
  wc.qp_num = e.qp_num;
  wc.status = static_cast<ibv_wc_status>(e.status);
  if (e.flags & Cqe::kConnected) {  // an RC or UC QP's: the data is in place already
    wc.wr_id = e.wr_id;
    wc.opcode = static_cast<ibv_wc_opcode>(e.opcode);
    wc.byte_len = e.byte_len;
    wc.vendor_err = e.vendor_err;
    if (!(e.flags & Cqe::kReceive)) {
      qp.sq_done.store(e.wqe_index, std::memory_order_release);
      return;
    }
    wc.src_qp = e.src_qp;
    wc.slid = e.slid;
    wc.sl = e.sl;
    wc.dlid_path_bits = e.dlid_path_bits;
    wc.pkey_index = e.pkey_index;
    if (e.flags & Cqe::kGrh) wc.wc_flags |= IBV_WC_GRH;
    if (e.flags & Cqe::kImmediate) wc.wc_flags |= IBV_WC_WITH_IMM;
    if (e.flags & Cqe::kInvalidate) wc.wc_flags |= IBV_WC_WITH_INV;
    if (e.flags & (Cqe::kImmediate | Cqe::kInvalidate)) wc.imm_data = e.imm_data;
    (xrc_srq ? xrc_srq->done : qp.srq ? qp.srq->done : qp.rq_done).fetch_add(1, std::memory_order_release);
    return;
  }
  if (!(e.flags & Cqe::kReceive)) {
    wc.wr_id = e.wr_id;
    wc.opcode = IBV_WC_SEND;
    wc.byte_len = e.byte_len;
    return;
  }
  const uint32_t index = qp.rq_done.load(std::memory_order_relaxed);
  const RecvWr& w = qp.rwr[index & (qp.rq_depth - 1)];
  wc.wr_id = w.wr_id;
  wc.opcode = IBV_WC_RECV;
  if (wc.status == IBV_WC_SUCCESS) {
    const uint8_t* slot = qp.rings->recv_slot(index, qp.sq_depth, qp.sq_slot, qp.rq_depth, qp.rq_slot);
    wc.status = scatter(*Context::from(qp.qp()->context), w, slot, e.byte_len, (e.flags & Cqe::kGrh) != 0);
    if (wc.status == IBV_WC_SUCCESS) {
      wc.byte_len = e.byte_len;
      wc.src_qp = e.src_qp;
      wc.slid = e.slid;
      wc.sl = e.sl;
      wc.dlid_path_bits = e.dlid_path_bits;
      wc.pkey_index = e.pkey_index;
      if (e.flags & Cqe::kGrh) wc.wc_flags |= IBV_WC_GRH;
      if (e.flags & Cqe::kImmediate) {
        wc.wc_flags |= IBV_WC_WITH_IMM;
        wc.imm_data = e.imm_data;
      }
    }
  }
  qp.rq_done.store(index + 1, std::memory_order_release);
  if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR) enter_error(qp);
}

void clean_cq(Cq& cq, uint32_t qp_num, Srq* srq) {
  std::lock_guard lock(cq.mu);
  // The engine writes only past `head` (it keeps out of [tail, head) until
  // tail moves): the kept CQEs move towards head, over the taken ones, and
  // tail moves past the gap they leave.
  const uint32_t head = cq.ring->head.value.load(std::memory_order_acquire);
  Cqe* entries = cq.ring->entries();
  const uint32_t mask = cq.depth - 1;
  uint32_t to = head;
  for (uint32_t from = head; from != cq.tail;) {
    --from;
    const Cqe& e = entries[from & mask];
    if (e.qp_num == qp_num) {
      if (srq && (e.flags & Cqe::kReceive)) srq->done.fetch_add(1, std::memory_order_release);
      continue;
    }
    if (--to != from) entries[to & mask] = e;
  }
  cq.tail = to;
  cq.ring->tail.value.store(cq.tail, std::memory_order_release);
}

int poll_cq(ibv_cq* cq_, int num_entries, ibv_wc* wc) {
  if (!cq_ || num_entries < 0 || (num_entries && !wc)) return -EINVAL;
  Cq& cq = *Cq::from(cq_);
  // An empty CQ costs no lock: the common case of a busy-polling program,
  // which moves the engine's work on itself while the engine sleeps.
  if (cq.ring->head.value.load(std::memory_order_acquire) == cq.ring->tail.value.load(std::memory_order_relaxed)) {
    Context::from(cq_->context)->link.progress();
    if (cq.ring->head.value.load(std::memory_order_acquire) == cq.ring->tail.value.load(std::memory_order_relaxed))
      return 0;
  }
  std::lock_guard lock(cq.mu);
  const uint32_t head = cq.ring->head.value.load(std::memory_order_acquire);
  int n = 0;
  for (; n < num_entries && cq.tail != head; ++n, ++cq.tail)
    fill_wc(cq.ring->entries()[cq.tail & (cq.depth - 1)], wc[n]);
  if (n) cq.ring->tail.value.store(cq.tail, std::memory_order_release);
  return n;
}

int req_notify_cq(ibv_cq* cq_, int solicited_only) {
  if (!cq_) return EINVAL;
  Cq& cq = *Cq::from(cq_);
  if (!cq.cq()->channel) return EINVAL;
  cq.ring->armed.value.store(solicited_only ? CqRing::kArmSolicited : CqRing::kArmNext, std::memory_order_seq_cst);
  // Pairs with the engine's fence after it writes a CQE (see Cq::push).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return 0;
}

}  // namespace ibfab::verbs

IBFAB_VERBS_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  if (!context) return fail_null<ibv_comp_channel>(EINVAL);
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) return nullptr;
  const api::CreateChannel req;
  const int give[] = {pair[1]};
  const int64_t h = Context::from(context)->link.request(api::MsgType::CreateChannel, &req, sizeof req, give);
  ::close(pair[1]);
  if (h < 0) {
    ::close(pair[0]);
    return fail_null<ibv_comp_channel>(static_cast<int>(-h));
  }
  auto* ch = new Channel;
  ch->ch.context = context;
  ch->ch.fd = pair[0];
  ch->handle = static_cast<uint32_t>(h);
  return &ch->ch;
}

IBFAB_VERBS_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  if (!channel) return fail(EINVAL);
  auto* ch = reinterpret_cast<Channel*>(channel);
  const api::DestroyObject req{ch->handle};
  if (const int64_t e = Context::from(channel->context)->link.request(api::MsgType::DestroyChannel, &req, sizeof req))
    return fail(static_cast<int>(-e));  // EBUSY: a CQ still uses it
  ::close(channel->fd);
  delete ch;
  return 0;
}

namespace ibfab::verbs {

Cq* make_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel, int comp_vector) {
  if (!context || cqe < 1 || static_cast<uint32_t>(cqe) > kMaxCqe || comp_vector < 0 ||
      comp_vector >= context->num_comp_vectors)
    return fail_null<Cq>(EINVAL);
  auto cq = std::make_unique<Cq>();
  cq->depth = api::rings::ring_depth(static_cast<uint32_t>(cqe));
  if (const int e = cq->mem.create(CqRing::bytes(cq->depth), "ibfab-cq")) return fail_null<Cq>(-e);
  cq->ring = new (cq->mem.data()) CqRing;
  api::CreateCq req;
  req.depth = cq->depth;
  req.channel = channel ? reinterpret_cast<Channel*>(channel)->handle : 0;
  req.user_handle = reinterpret_cast<uint64_t>(cq.get());
  const int give[] = {cq->mem.fd()};
  const int64_t h = Context::from(context)->link.request(api::MsgType::CreateCq, &req, sizeof req, give);
  if (h < 0) return fail_null<Cq>(static_cast<int>(-h));
  cq->handle = static_cast<uint32_t>(h);
  ibv_cq& c = *cq->cq();
  c.context = context;
  c.channel = channel;
  c.cq_context = cq_context;
  c.cqe = static_cast<int>(cq->depth);
  c.handle = cq->handle;
  pthread_mutex_init(&c.mutex, nullptr);
  pthread_cond_init(&c.cond, nullptr);
  return cq.release();
}

}  // namespace ibfab::verbs

IBFAB_VERBS_EXPORT ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                                         int comp_vector) {
  Cq* cq = make_cq(context, cqe, cq_context, channel, comp_vector);
  return cq ? cq->cq() : nullptr;
}

// As mlx5 resizes: to the power of two that holds `cqe` (reported in
// cq->cqe), keeping the completions not yet polled; the same size is a
// no-op. EINVAL for a size out of range or smaller than the completions
// waiting (the engine checks again, as later ones may have come).
IBFAB_VERBS_EXPORT int ibv_resize_cq(ibv_cq* cq_, int cqe) {
  if (!cq_ || cqe < 1 || static_cast<uint32_t>(cqe) > kMaxCqe) return fail(EINVAL);
  Cq& cq = *Cq::from(cq_);
  const uint32_t depth = api::rings::ring_depth(static_cast<uint32_t>(cqe));
  std::lock_guard lock(cq.mu);
  if (cq.ring->head.value.load(std::memory_order_acquire) - cq.tail > depth) return fail(EINVAL);
  if (depth == cq.depth) return 0;
  api::SharedMemory mem;
  if (const int e = mem.create(CqRing::bytes(depth), "ibfab-cq")) return fail(-e);
  auto* ring = new (mem.data()) CqRing;
  const api::ResizeCq req{cq.handle, depth};
  const int give[] = {mem.fd()};
  if (const int64_t e = Context::from(cq_->context)->link.request(api::MsgType::ResizeCq, &req, sizeof req, give))
    return fail(static_cast<int>(-e));
  cq.retired.push_back(std::move(cq.mem));
  cq.mem = std::move(mem);
  cq.ring = ring;
  cq.depth = depth;
  cq.tail = 0;
  cq_->cqe = static_cast<int>(depth);
  return 0;
}

IBFAB_VERBS_EXPORT int ibv_destroy_cq(ibv_cq* cq_) {
  if (!cq_) return fail(EINVAL);
  Cq* cq = Cq::from(cq_);
  const api::DestroyObject req{cq->handle};
  if (const int64_t e = Context::from(cq_->context)->link.request(api::MsgType::DestroyCq, &req, sizeof req))
    return fail(static_cast<int>(-e));  // EBUSY: a QP still completes here
  pthread_mutex_destroy(&cq_->mutex);
  pthread_cond_destroy(&cq_->cond);
  delete cq;
  return 0;
}

// Reads the next completion event: the 8-byte handle of the CQ the engine
// wrote when a completion reached an armed CQ.
IBFAB_VERBS_EXPORT int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  if (!channel || !cq || !cq_context) return errno = EINVAL, -1;
  uint64_t handle = 0;
  const ssize_t n = ::recv(channel->fd, &handle, sizeof handle, 0);
  if (n != static_cast<ssize_t>(sizeof handle)) {
    if (n >= 0) errno = EIO;
    return -1;
  }
  *cq = reinterpret_cast<Cq*>(handle)->cq();
  *cq_context = (*cq)->cq_context;
  return 0;
}

IBFAB_VERBS_EXPORT void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  if (!cq) return;
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}
