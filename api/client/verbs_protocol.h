#pragma once
// The verbs connection (protocol.h, ConnectionKind::Verbs): one per
// ibv_open_device, request/reply, one request at a time. Requests create
// and destroy the objects the engine must know (completion channels, CQs,
// QPs, PDs, memory regions and windows), move QPs between states and attach
// them to multicast groups; the rest of verbs (AHs, posting, polling) goes
// through the rings (verbs_rings.h) or stays in the client.
//
// Memory regions live in the engine's HCA (its MemoryTable), over the
// client's address space as the kernel reports the client's pid: RC and UC
// QPs read and write the application's registered memory there. The client
// keeps a copy of each MR (its keys and range) for the UD path, which
// gathers and scatters in the client.
//
// File descriptors travel as SCM_RIGHTS with the message that names them:
//   Hello          client -> engine: the engine's end of the async event
//                  socket (it writes AsyncEvent records there);
//   HelloReply     engine -> client: the doorbell eventfd, then the
//                  engine page memfd (EnginePage, verbs_rings.h);
//   CreateChannel  the engine's end of the channel's socket (it writes the
//                  8-byte CQ handle of each completion event there);
//   CreateCq       the CQ ring's memfd (CqRing);
//   ResizeCq       the new ring's memfd (CqRing);
//   CreateQp       the QP rings' memfd (QpRings);
//   CreateSrq      the SRQ's ring memfd (QpRings with its receive ring only);
//   OpenXrcd       the file that names the XRC domain, when there is one.
// Every reply is a VerbsReply: 0 or a value (a handle, a QP number, a
// key), or -errno. Bad sizes, unknown handles and fds that do not fit are
// refused with -EINVAL; the connection stays up.
#include <cstdint>

namespace ibfab::api {

struct VerbsReply {
  int64_t value = 0;
};

struct CreateChannel {
  uint32_t reserved = 0;
};

struct CreateCq {
  uint32_t depth = 0;       // CQEs the ring holds (CqRing::depth)
  uint32_t channel = 0;     // a CreateChannel handle, or 0
  uint64_t user_handle = 0; // echoed in completion events
};

// ResizeCq: CQ `cq` moves to a new ring of `depth` CQEs (a power of two),
// whose memfd comes with it: the engine copies the CQEs the client has not
// consumed (its tail in the old ring) to the front of the new one, with
// the arming, and writes there from then on. -EINVAL when more CQEs wait
// than `depth` holds; the old ring is left as it was.
struct ResizeCq {
  uint32_t cq = 0;
  uint32_t depth = 0;
};

struct CreateQp {
  uint32_t send_cq = 0;  // CreateCq handles
  uint32_t recv_cq = 0;
  uint32_t sq_depth = 0;
  uint32_t rq_depth = 0;
  uint32_t sq_slot = 0;  // bytes per send slot (SendWqe and payload)
  uint32_t rq_slot = 0;  // bytes per receive slot (GRH and payload)
  uint8_t sq_sig_all = 0;
  uint8_t block_self_mcast_lb = 0;
  uint8_t qp_type = 0;  // enum ibv_qp_type: UD, RC or UC
  uint8_t reserved[5] = {};
  uint64_t user_handle = 0;  // echoed in CQEs (Cqe::qp_handle) and async events
  // RC and UC: the PD (AllocPd) and the send queue's limits (the model's
  // QpCaps; sq_depth and rq_depth are its WQE counts).
  uint32_t pd = 0;
  uint32_t max_send_sge = 0;
  uint32_t max_recv_sge = 0;
  uint32_t max_inline_data = 0;
  uint32_t srq = 0;  // RC and UC: a CreateSrq handle whose WQEs the QP takes, or 0 (its own queue)
  uint32_t xrcd = 0; // XRC_RECV: the OpenXrcd handle of its domain (it has no PD, CQs or queues of use)
};

// CreateSrq: a shared receive queue of `depth` WQEs of up to `max_sge`
// SGEs in PD `pd`; its ring's receive slots are `slot` bytes. Replies with
// its handle. ModifySrq arms its limit (ibv_modify_srq IBV_SRQ_LIMIT);
// DestroySrq (a DestroyObject) is -EBUSY while QPs use it.
struct CreateSrq {
  uint32_t pd = 0;
  uint32_t depth = 0;
  uint32_t max_sge = 0;
  uint32_t slot = 0;
  uint64_t user_handle = 0;  // echoed in its async events (and an XRC SRQ's CQEs)
  // An XRC SRQ (IBV_SRQT_XRC): its domain (an OpenXrcd handle) and the CQ
  // (a CreateCq handle) its receive completions go to; 0 for an ordinary
  // SRQ. The reply then holds its handle in bits 31:0 and its SRQ number
  // (what initiators put in XRCETH) in bits 55:32.
  uint32_t xrcd = 0;
  uint32_t cq = 0;
};

// OpenXrcd (ibv_open_xrcd): with a file (the fd travels with the request),
// the host's XRC domain of that file's inode on this HCA, shared by every
// process that opens it, created when `oflags` has O_CREAT (EINVAL
// without, if none exists; EINVAL with O_EXCL if one does); with none
// (has_file 0), a domain of this context's own. Replies with the handle.
// CloseXrcd (a DestroyObject): EBUSY while an SRQ or QP this context made
// in it remains; the domain goes when the last context has closed it.
struct OpenXrcd {
  uint32_t oflags = 0;
  uint32_t has_file = 0;
};

struct ModifySrq {
  uint32_t srq = 0;
  uint32_t limit = 0;
};

// Handle-only requests: DestroyChannel, DestroyCq, DestroyQp (a QP number),
// DeallocPd (a PD), DeregMr (an MR's key), DeallocMw (the rkey AllocMw replied),
// DestroySrq.
struct DestroyObject {
  uint32_t handle = 0;
};

// ModifyQp: the state to enter and the attributes that change with it (the
// client has checked the mask against the transition table). UD uses the
// set_* flags; RC and UC QPs take `mask` (IBV_QP_* bits) with the values
// below it.
struct ModifyQp {
  uint32_t qp_num = 0;
  uint32_t qkey = 0;
  uint16_t pkey_index = 0;
  uint8_t state = 0;      // enum ibv_qp_state
  uint8_t port = 0;
  uint8_t set_qkey = 0;   // the attributes below are given
  uint8_t set_pkey_index = 0;
  uint8_t set_port = 0;
  uint8_t reserved = 0;
  uint32_t mask = 0;
  uint32_t access = 0;  // qp_access_flags
  uint32_t rq_psn = 0;
  uint32_t sq_psn = 0;
  uint32_t dest_qp_num = 0;
  uint8_t path_mtu = 0;
  uint8_t timeout = 0;
  uint8_t retry_cnt = 0;
  uint8_t rnr_retry = 0;
  uint8_t max_rd_atomic = 0;
  uint8_t max_dest_rd_atomic = 0;
  uint8_t min_rnr_timer = 0;
  uint8_t is_global = 0;  // the address vector (IBV_QP_AV): ibv_ah_attr
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
  uint8_t reserved2 = 0;
  uint32_t flow_label = 0;
  uint8_t dgid[16] = {};
};

struct AllocPd {
  uint32_t reserved = 0;
};

// RegMr: `length` bytes at `addr` of the client's memory, addressed from
// `iova`, for PD `pd` with `access` (ibv_access_flags). Replies with the key
// (lkey == rkey), -EFAULT when a page of the range is not mapped, -EPERM
// when the engine may not reach the process's memory.
struct RegMr {
  uint64_t addr = 0;
  uint64_t length = 0;
  uint64_t iova = 0;
  uint32_t pd = 0;
  uint32_t access = 0;
};

// ReregMr (ibv_rereg_mr): the MR `key` with what `flags`
// (IBV_REREG_MR_CHANGE_*) names changed. Replies with the key.
struct ReregMr {
  uint64_t addr = 0;
  uint64_t length = 0;
  uint64_t iova = 0;
  uint32_t key = 0;
  uint32_t flags = 0;
  uint32_t pd = 0;
  uint32_t access = 0;
};

// AllocMw: a window of `type` (1 or 2) in `pd`; replies with its rkey.
struct AllocMw {
  uint32_t pd = 0;
  uint32_t type = 0;
};

// AttachMcast / DetachMcast.
struct McastRequest {
  uint32_t qp_num = 0;
  uint16_t lid = 0;
  uint8_t reserved[2] = {};
  uint8_t gid[16] = {};
};

// What the engine writes on a context's async event socket.
struct AsyncEvent {
  uint32_t type = 0;         // enum ibv_event_type
  uint32_t port = 0;         // port events
  uint64_t user_handle = 0;  // CQ and QP events: the object's user handle
};

}  // namespace ibfab::api
