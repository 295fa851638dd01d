#pragma once
// libibverbs' objects as ibfab holds them. Each embeds the public struct
// the application sees as its first member, and is recovered from it by a
// cast (the way rdma-core's providers do). A Context is one verbs
// connection to the engine (api/client/verbs_link.h); CQs and QPs map the
// rings of verbs_rings.h, shared with the engine.
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/client/protocol.h"
#include "api/client/shared_memory.h"
#include "api/client/verbs_link.h"
#include "api/client/verbs_rings.h"

namespace ibfab::verbs {

// Device limits reported by ibv_query_device: a ConnectX-class HCA.
inline constexpr uint32_t kMaxQpWr = api::rings::kMaxDepth;
inline constexpr uint32_t kMaxCqe = api::rings::kMaxDepth;
inline constexpr uint32_t kMaxSge = 32;
inline constexpr uint32_t kMaxInline = 512;
inline constexpr uint32_t kMaxRdAtomic = 16;  // max_qp_rd_atom, max_qp_init_rd_atom
inline constexpr uint32_t kMaxMcastGroups = 2048;       // fabric::Hca::kMaxMcastGroups
inline constexpr uint32_t kMaxQpsPerMcastGroup = 240;   // fabric::Hca::kMaxQpsPerMcastGroup
inline constexpr uint32_t kVendorId = 0x02C9;           // the OUI of the node GUIDs (NodeInfo.VendorID)
inline constexpr uint32_t kVendorPartId = 0x1BFA;       // not a ConnectX id: perftest stays on ibv_post_send
inline constexpr uint32_t kHwVer = 0;  // as umad_get_ca reports it
inline constexpr const char* kFwVer = "1.0.0";
inline constexpr const char* kBoardId = "IBFAB_0001";

struct Device {
  ibv_device dev{};  // first
  std::string node;  // the host whose HCA this is
  uint64_t guid = 0; // node GUID, host order
  int index = 0;
};

struct Context;

struct Pd {
  ibv_pd pd{};  // pd.handle: the engine's PD
  // A parent domain (ibv_alloc_parent_domain) is a PD of its own to the
  // application and its protection domain's to the engine: `protection`
  // (whose handle it carries) is that PD, which is busy while `parents`.
  Pd* protection = nullptr;
  std::atomic<uint32_t> parents{0};
  static Pd* from(ibv_pd* p) { return reinterpret_cast<Pd*>(p); }
};

// An MR as the engine registered it (its keys are the HCA's); the client
// keeps this copy to check the SGEs of UD sends and receives.
struct Mr {
  ibv_mr mr{};
  int access = 0;
  uint64_t iova = 0;
};

struct Ah {
  ibv_ah ah{};
  ibv_ah_attr attr{};
};

struct Channel {
  ibv_comp_channel ch{};  // ch.fd: the client end of a socket the engine writes CQ handles to
  uint32_t handle = 0;
};

struct Cq {
  ibv_cq_ex cqx{};  // first: as ibv_cq, the common prefix
  uint32_t handle = 0;
  api::SharedMemory mem;
  api::rings::CqRing* ring = nullptr;
  uint32_t depth = 0;
  uint32_t tail = 0;  // CQEs consumed
  // Rings given up by ibv_resize_cq, kept mapped until the CQ goes: a
  // poll's lock-free look at an empty ring may still read one.
  std::vector<api::SharedMemory> retired;
  std::mutex mu;
  ibv_wc current{};   // the extended poll's current completion (ibv_start_poll .. ibv_end_poll)
  ibv_cq* cq() { return reinterpret_cast<ibv_cq*>(&cqx); }
  static Cq* from(ibv_cq* c) { return reinterpret_cast<Cq*>(c); }
};

struct RecvWr {
  uint64_t wr_id = 0;
  uint32_t num_sge = 0;
  ibv_sge sge[kMaxSge];
};

// An XRC domain (ibv_open_xrcd): the engine's handle of the host's domain.
struct Xrcd {
  ibv_xrcd xrcd{};  // first
  uint32_t handle = 0;  // the engine's
  static Xrcd* from(ibv_xrcd* x) { return reinterpret_cast<Xrcd*>(x); }
};

// A shared receive queue (RC and UC QPs, or XRC targets for an XRC SRQ):
// its WQEs go through a ring to the engine's SRQ as a QP's receives do.
struct Srq {
  ibv_srq srq{};  // first; srq.handle: the engine's
  ibv_srq_type type = IBV_SRQT_BASIC;
  uint32_t srq_num = 0;  // the engine's SRQ number (ibv_get_srq_num); XRC initiators name it
  Xrcd* xrcd = nullptr;  // XRC: its domain
  api::SharedMemory mem;
  api::rings::QpRings* rings = nullptr;  // the receive ring only
  uint32_t depth = 0, slot = 0, max_sge = 0;
  std::mutex mu;
  uint32_t posted = 0;
  std::atomic<uint32_t> done{0};  // WQEs completed, as polled
  uint32_t limit = 0;             // as last armed
  static Srq* from(ibv_srq* s) { return reinterpret_cast<Srq*>(s); }
};

// One ibv_wr_start .. ibv_wr_complete / ibv_wr_abort sequence of an
// extended QP (verbs_qp_ex.cpp). The WQEs are written into the send ring
// past the posted head and published together by wr_complete; the one
// being built keeps its header here until the next builder or the end.
struct WrBatch {
  uint32_t count = 0;        // WQEs begun since wr_start
  int error = 0;             // the first error, returned by wr_complete (nothing is posted)
  uint8_t* slot = nullptr;   // the WQE being built; null before the first builder or after an error
  bool connected = false;    // `header` is a ConnectedWqe, else a SendWqe
  uint8_t opcode = 0;        // its ibv_wr_opcode
  bool has_data = false;     // a data setter was called for it
  bool has_addr = false;     // UD: wr_set_ud_addr was called for it
  alignas(8) uint8_t header[64] = {};
};

struct Qp {
  ibv_qp_ex qpx{};  // first; qpx.qp_base is the ibv_qp
  api::SharedMemory mem;
  api::rings::QpRings* rings = nullptr;
  uint32_t sq_depth = 0, sq_slot = 0, rq_depth = 0, rq_slot = 0;
  ibv_qp_cap cap{};
  bool sq_sig_all = false;
  Srq* srq = nullptr;  // its receives come from this SRQ
  Cq* scq = nullptr;
  Cq* rcq = nullptr;
  // The attributes query_qp reports, as last set.
  ibv_qp_attr attr{};
  // Send side, under sq_mu.
  std::mutex sq_mu;
  uint32_t sq_head = 0;
  // RC and UC: send WQEs retired, as the polled completions say (a
  // completion retires its WQE and the unsignaled ones before it).
  std::atomic<uint32_t> sq_done{0};
  // Receive side: posted WRs (under rq_mu), completed ones (by the CQ poller).
  std::mutex rq_mu;
  uint32_t rq_posted = 0;
  std::atomic<uint32_t> rq_done{0};
  std::vector<RecvWr> rwr;
  // Created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS: ibv_qp_to_qp_ex gives qpx.
  bool extended = false;
  WrBatch batch;  // under sq_mu, held from wr_start to wr_complete / wr_abort
  ibv_qp* qp() { return &qpx.qp_base; }
  static Qp* from(ibv_qp* q) { return reinterpret_cast<Qp*>(q); }
  bool connected() const { return qpx.qp_base.qp_type != IBV_QPT_UD; }
  Xrcd* xrcd = nullptr;  // XRC_RECV: its domain
  // The state as the engine last set it (ERR after a completion error).
  ibv_qp_state state() const { return static_cast<ibv_qp_state>(rings->state.value.load(std::memory_order_acquire)); }
};

struct Context {
  verbs_context vctx{};  // first; the application sees &vctx.context
  Device* device = nullptr;
  client::VerbsLink link;
  // MRs by the index in their key (lkey >> 8, the engine's table slot);
  // the low byte is a tag, so a stale key does not match a reused slot.
  std::mutex mr_mu;
  std::vector<Mr*> mrs;

  ibv_context* ctx() { return &vctx.context; }
  static Context* from(ibv_context* c) {
    return reinterpret_cast<Context*>(reinterpret_cast<char*>(c) - offsetof(verbs_context, context));
  }
  // The MR `lkey` names if it covers [addr, addr + length) with `access`.
  bool covers(uint32_t lkey, uint64_t addr, uint64_t length, int access);
};

// The device of a context, and the node record the engine has for it now.
std::optional<api::NodeReply> query_node(Context& c);
// The port record of `port` (1-based) in `n`, or null.
const api::PortRecord* port_of(const api::NodeReply& n, uint8_t port);

// Sets errno and returns it: for calls that return an errno value.
inline int fail(int e) {
  errno = e;
  return e;
}
// Sets errno and returns null: for calls that return a pointer.
template <class T = void>
T* fail_null(int e) {
  errno = e;
  return nullptr;
}

// A CQ and its ring, registered with the engine (verbs_cq.cpp); null with
// errno set on failure.
Cq* make_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel, int comp_vector);
// The work completion for one CQE; a receive is scattered into its WR's
// SGEs (and moves the QP to error on a local error).
void fill_wc(const api::rings::Cqe& e, ibv_wc& wc);
// Takes the completions of QP `qp_num` that were not polled off `cq`, as a
// QP's move to RESET does on mlx5; the others keep their order. A receive
// taken from `srq` gives its WQE back to the SRQ.
void clean_cq(Cq& cq, uint32_t qp_num, Srq* srq);

// Posting's pieces, shared by ibv_post_send and the ibv_wr_* API
// (verbs_post.cpp). gather_sges copies `n` SGEs' bytes (their lkeys checked
// unless `inline_data`) to `out`, at most `room`; returns the completion
// status. ud_address fills a UD WQE's address from `ah`.
ibv_wc_status gather_sges(Context& c, const ibv_sge* sges, std::size_t n, bool inline_data, uint8_t* out,
                          uint32_t room, uint32_t& length);
void ud_address(const Qp& qp, const ibv_ah* ah, uint32_t remote_qpn, uint32_t remote_qkey,
                api::rings::SendWqe& w);
// The BIND_MW fields of an RC or UC WQE, as verbs_rings.h lays them out.
void put_bind(const ibv_mw* mw, uint32_t new_rkey, const ibv_mw_bind_info& info, api::rings::ConnectedWqe& w);
// The stamp a post carries (SendWqe::stamp); call under sq_mu.
uint64_t post_stamp(const Qp& qp);

// The extended QP API (verbs_qp_ex.cpp): 0, or EOPNOTSUPP when `flags`
// (IBV_QP_EX_WITH_*) ask for an operation a QP of `type` has not; on 0 the
// QP's ibv_wr_* function pointers are filled.
int enable_wr_api(Qp& qp, ibv_qp_type type, uint64_t flags);

// ibv_bind_mw (verbs_mw.cpp), through the context's ops.
int bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* mw_bind);
ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type);
int dealloc_mw(ibv_mw* mw);

// The ops every context gets (verbs_ops.cpp).
void install_ops(verbs_context& vctx);
int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc);
int req_notify_cq(ibv_cq* cq, int solicited_only);
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
int query_port_op(ibv_context* context, uint8_t port_num, ibv_port_attr* attr, size_t attr_len);
int query_device_ex_op(ibv_context* context, const ibv_query_device_ex_input* input, ibv_device_attr_ex* attr,
                       size_t attr_size);
ibv_qp* create_qp_ex_op(ibv_context* context, ibv_qp_init_attr_ex* attr);
ibv_cq_ex* create_cq_ex_op(ibv_context* context, ibv_cq_init_attr_ex* attr);
// An SRQ registered with the engine (verbs_srq.cpp): an XRC SRQ when
// `xrcd` is given, its receive completions then on `cq`. `a` is updated
// to the sizes given. Null with errno set on failure.
ibv_srq* make_srq(ibv_pd* pd, ibv_srq_attr& a, void* srq_context, Xrcd* xrcd, ibv_cq* cq);
// XRC (verbs_xrc.cpp). xrc_qp_attr checks an XRC QP's creation attributes
// and completes them for create_qp (0 or an errno value).
int xrc_qp_attr(ibv_context* context, ibv_qp_init_attr_ex& a);
ibv_xrcd* open_xrcd_op(ibv_context* context, ibv_xrcd_init_attr* attr);
int close_xrcd_op(ibv_xrcd* xrcd);
ibv_srq* create_srq_ex_op(ibv_context* context, ibv_srq_init_attr_ex* attr);
int get_srq_num_op(ibv_srq* srq, uint32_t* srq_num);
ibv_pd* alloc_parent_domain_op(ibv_context* context, ibv_parent_domain_init_attr* attr);

}  // namespace ibfab::verbs
