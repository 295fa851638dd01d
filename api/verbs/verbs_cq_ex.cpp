// The extended CQ (ibv_create_cq_ex): the same ring, read one completion
// at a time through ibv_start_poll / ibv_next_poll / ibv_end_poll and the
// ibv_wc_read_* accessors. The CQ's lock is held from start to end, as
// providers do. Completion timestamps, VLANs, flow tags and tag matching
// are not offered (EOPNOTSUPP at creation).
#include <cerrno>

#include "api/verbs/verbs_internal.h"

namespace ibfab::verbs {
namespace {

Cq& of(ibv_cq_ex* c) { return *reinterpret_cast<Cq*>(c); }

// Takes the next CQE into `current`; ENOENT when the ring is empty.
int take(Cq& cq) {
  if (cq.ring->head.value.load(std::memory_order_acquire) == cq.tail) return ENOENT;
  fill_wc(cq.ring->entries()[cq.tail & (cq.depth - 1)], cq.current);
  ++cq.tail;
  cq.cqx.wr_id = cq.current.wr_id;
  cq.cqx.status = cq.current.status;
  return 0;
}

int start_poll(ibv_cq_ex* c, ibv_poll_cq_attr* attr) {
  if (attr && attr->comp_mask) return EINVAL;
  Cq& cq = of(c);
  cq.mu.lock();
  const int e = take(cq);
  if (e) {  // nothing to read: no ibv_end_poll follows
    cq.mu.unlock();
    Context::from(c->context)->link.progress();  // as poll_cq does: the next start_poll may find some
  }
  return e;
}

int next_poll(ibv_cq_ex* c) { return take(of(c)); }

void end_poll(ibv_cq_ex* c) {
  Cq& cq = of(c);
  cq.ring->tail.value.store(cq.tail, std::memory_order_release);
  cq.mu.unlock();
}

const ibv_wc& cur(ibv_cq_ex* c) { return of(c).current; }
ibv_wc_opcode read_opcode(ibv_cq_ex* c) { return cur(c).opcode; }
uint32_t read_vendor_err(ibv_cq_ex* c) { return cur(c).vendor_err; }
uint32_t read_byte_len(ibv_cq_ex* c) { return cur(c).byte_len; }
__be32 read_imm_data(ibv_cq_ex* c) { return cur(c).imm_data; }
uint32_t read_qp_num(ibv_cq_ex* c) { return cur(c).qp_num; }
uint32_t read_src_qp(ibv_cq_ex* c) { return cur(c).src_qp; }
unsigned int read_wc_flags(ibv_cq_ex* c) { return cur(c).wc_flags; }
uint32_t read_slid(ibv_cq_ex* c) { return cur(c).slid; }
uint8_t read_sl(ibv_cq_ex* c) { return cur(c).sl; }
uint8_t read_dlid_path_bits(ibv_cq_ex* c) { return cur(c).dlid_path_bits; }

}  // namespace

ibv_cq_ex* create_cq_ex_op(ibv_context* context, ibv_cq_init_attr_ex* attr) {
  if (!attr) return fail_null<ibv_cq_ex>(EINVAL);
  if ((attr->wc_flags & ~static_cast<uint64_t>(IBV_WC_STANDARD_FLAGS)) ||
      (attr->comp_mask & ~static_cast<uint32_t>(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) ||
      ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags))
    return fail_null<ibv_cq_ex>(EOPNOTSUPP);
  // A CQ's parent domain, as on mlx5, must be one (its allocators are not
  // called: see alloc_parent_domain_op).
  if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
      (!attr->parent_domain || attr->parent_domain->context != context || !Pd::from(attr->parent_domain)->protection))
    return fail_null<ibv_cq_ex>(EINVAL);
  if (attr->cqe > kMaxCqe) return fail_null<ibv_cq_ex>(EINVAL);
  Cq* cq = make_cq(context, static_cast<int>(attr->cqe), attr->cq_context, attr->channel,
                   static_cast<int>(attr->comp_vector));
  if (!cq) return nullptr;
  ibv_cq_ex& x = cq->cqx;
  x.start_poll = start_poll;
  x.next_poll = next_poll;
  x.end_poll = end_poll;
  x.read_opcode = read_opcode;
  x.read_vendor_err = read_vendor_err;
  x.read_byte_len = read_byte_len;
  x.read_imm_data = read_imm_data;
  x.read_qp_num = read_qp_num;
  x.read_src_qp = read_src_qp;
  x.read_wc_flags = read_wc_flags;
  x.read_slid = read_slid;
  x.read_sl = read_sl;
  x.read_dlid_path_bits = read_dlid_path_bits;
  return &x;
}

}  // namespace ibfab::verbs
