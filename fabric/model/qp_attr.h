#pragma once
// A connected QP as its owner (the api layer, a test, a scenario host) sees
// it on the HCA model: its state, the attributes a modify sets (the subset
// of ibv_qp_attr the transport uses, with rdma-core's IBV_QP_* mask bits),
// its sizes, and what it reports back. The values are rdma-core's; the api
// layer checks the masks against the state table before the model sees them.
#include <array>
#include <cstdint>

#include "fabric/model/work_request.h"

namespace ibfab::fabric {

enum class QpState : uint8_t { kReset = 0, kInit, kRtr, kRts, kSqd, kSqe, kError };  // enum ibv_qp_state

enum class Transport : uint8_t { kRc, kUc, kXrcSend, kXrcRecv };

namespace qp_mask {  // enum ibv_qp_attr_mask
inline constexpr uint32_t kState = 1u << 0;
inline constexpr uint32_t kAccessFlags = 1u << 3;
inline constexpr uint32_t kPkeyIndex = 1u << 4;
inline constexpr uint32_t kPort = 1u << 5;
inline constexpr uint32_t kAv = 1u << 7;
inline constexpr uint32_t kPathMtu = 1u << 8;
inline constexpr uint32_t kTimeout = 1u << 9;
inline constexpr uint32_t kRetryCnt = 1u << 10;
inline constexpr uint32_t kRnrRetry = 1u << 11;
inline constexpr uint32_t kRqPsn = 1u << 12;
inline constexpr uint32_t kMaxQpRdAtomic = 1u << 13;
inline constexpr uint32_t kMinRnrTimer = 1u << 15;
inline constexpr uint32_t kSqPsn = 1u << 16;
inline constexpr uint32_t kMaxDestRdAtomic = 1u << 17;
inline constexpr uint32_t kDestQpn = 1u << 20;
}  // namespace qp_mask

namespace qp_event {  // enum ibv_event_type, the QP and SRQ events
inline constexpr uint8_t kCommEst = 3;
inline constexpr uint8_t kSqDrained = 4;
inline constexpr uint8_t kQpFatal = 1;
inline constexpr uint8_t kQpReqErr = 2;
inline constexpr uint8_t kQpAccessErr = 5;  // IBV_EVENT_QP_ACCESS_ERR
inline constexpr uint8_t kQpLastWqeReached = 16;
inline constexpr uint8_t kSrqLimitReached = 15;
}  // namespace qp_event

// An address vector (ibv_ah_attr) as a connected QP's path holds it.
struct PathAttr {
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  bool global = false;
  std::array<uint8_t, 16> dgid{};
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
  uint32_t flow_label = 0;
};

struct QpAttr {
  QpState state = QpState::kReset;
  uint32_t access = 0;          // qp_access_flags: access:: remote bits the responder allows
  uint16_t pkey_index = 0;
  uint8_t port = 0;
  PathAttr path;
  uint8_t path_mtu = 0;         // enum ibv_mtu: 1 = 256 ... 5 = 4096
  uint8_t timeout = 0;          // local ACK timeout 4.096 us * 2^timeout; 0: infinite
  uint8_t retry_cnt = 0;        // 0..7
  uint8_t rnr_retry = 0;        // 0..7; 7: infinite
  uint32_t rq_psn = 0;          // 24 bits
  uint8_t max_rd_atomic = 0;    // READs and atomics outstanding as requester
  uint8_t min_rnr_timer = 0;    // the RNR NAK's timer code
  uint32_t sq_psn = 0;          // 24 bits
  uint8_t max_dest_rd_atomic = 0;  // as responder
  uint32_t dest_qp_num = 0;     // 24 bits
};

// Sizes fixed at creation (ibv_qp_init_attr.cap).
struct QpCaps {
  uint32_t max_send_wr = 1;
  uint32_t max_recv_wr = 1;
  uint32_t max_send_sge = 1;
  uint32_t max_recv_sge = 1;
  uint32_t max_inline_data = 0;
};

// What a connected QP reports to its owner, in simulated time.
class QpEndpoint {
 public:
  virtual ~QpEndpoint() = default;
  // A send queue WQE's completion (signalled ones, and every error).
  virtual void on_send_completion(const WorkCompletion& wc) = 0;
  // A receive WQE's completion (the QP's own queue or its SRQ).
  virtual void on_recv_completion(const WorkCompletion& wc) = 0;
  // An affiliated asynchronous event (qp_event::).
  virtual void on_qp_event(uint8_t event) { (void)event; }
  // A message arrived and found the receive queue this endpoint feeds (the
  // QP's own, or the SRQ's) empty: an endpoint that holds receives the
  // model has not been given yet (a client's ring the engine has not looked
  // at this round) posts them now, before the responder answers with an
  // RNR NAK. On hardware a posted receive is seen at once.
  virtual void on_receive_wanted() {}
};

}  // namespace ibfab::fabric
