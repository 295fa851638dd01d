#pragma once
// The verbs connection (protocol.h, ConnectionKind::Verbs): one per
// ibv_open_device, request/reply, one request at a time. Requests create
// and destroy the objects the engine must know (completion channels, CQs,
// QPs), move QPs between states and attach them to multicast groups; the
// rest of verbs (PDs, MRs, AHs, posting, polling) stays in the client.
//
// File descriptors travel as SCM_RIGHTS with the message that names them:
//   Hello          client -> engine: the engine's end of the async event
//                  socket (it writes AsyncEvent records there);
//   HelloReply     engine -> client: the doorbell eventfd, then the
//                  engine page memfd (EnginePage, verbs_rings.h);
//   CreateChannel  the engine's end of the channel's socket (it writes the
//                  8-byte CQ handle of each completion event there);
//   CreateCq       the CQ ring's memfd (CqRing);
//   CreateQp       the QP rings' memfd (QpRings).
// Every reply is a VerbsReply: 0 or a value (a handle, a QP number), or
// -errno. Bad sizes, unknown handles and fds that do not fit are refused
// with -EINVAL; the connection stays up.
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

struct CreateQp {
  uint32_t send_cq = 0;  // CreateCq handles
  uint32_t recv_cq = 0;
  uint32_t sq_depth = 0;
  uint32_t rq_depth = 0;
  uint32_t sq_slot = 0;  // bytes per send slot (SendWqe and payload)
  uint32_t rq_slot = 0;  // bytes per receive slot (GRH and payload)
  uint8_t sq_sig_all = 0;
  uint8_t block_self_mcast_lb = 0;
  uint8_t qp_type = 0;  // enum ibv_qp_type: only UD QPs take traffic from the fabric
  uint8_t reserved[5] = {};
  uint64_t user_handle = 0;  // echoed in CQEs (Cqe::qp_handle) and async events
};

// Handle-only requests: DestroyChannel, DestroyCq, DestroyQp (a QP number).
struct DestroyObject {
  uint32_t handle = 0;
};

// ModifyQp: the state to enter and the attributes that change with it (the
// client has checked the mask against the transition table).
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
