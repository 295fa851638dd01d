#pragma once
// One scenario host on a real device port, through rdma-core's public API
// only: an rdma_cm id on the UD port space bound to the port's address,
// its UD QP, the receives it keeps posted, and what arrives (receive
// completions in order, send completions, rdma_cm events).
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/passthrough/group_address.h"
#include "tools/passthrough/host_map.h"

namespace ibfab::passthrough {

// A device port that cannot be used: one line (the caller adds the host).
class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws SetupError unless `dp` names a device ibv_get_device_list lists,
// with that port, and the port ACTIVE.
void check_device_port(const DevicePort& dp);

// The first bytes of every message sent: the sequence number within its
// send, then the send's step index (both big-endian), then a pattern.
inline constexpr uint32_t kGrhBytes = 40;

struct Received {
  ibv_wc_status status;
  ibv_wc_opcode opcode;
  uint32_t byte_len;
  bool grh;
  std::optional<uint32_t> imm;
  uint32_t src_qp;
  std::optional<uint32_t> seq, step;  // from the payload, when it was long enough
  bool intact;                        // the pattern after them is the sender's
};

struct CmEvent {
  rdma_cm_event_type type;
  int status;
  const void* context;  // a join's: param.ud.private_data
  ibv_ah_attr ah;
  uint32_t qp_num, qkey;
};

// The payload byte i (past the header) of message `seq`.
inline uint8_t pattern_byte(uint32_t seq, uint32_t i) { return static_cast<uint8_t>(seq * 7 + i); }

class RdmaHost {
 public:
  // Binds to `dp`'s address of `family`, makes the QP and posts
  // `recv_depth` receives of `max_size` bytes (plus the GRH). Throws
  // SetupError.
  RdmaHost(std::string name, const DevicePort& dp, Family family, uint32_t recv_depth, uint32_t max_size);
  ~RdmaHost();
  RdmaHost(const RdmaHost&) = delete;
  RdmaHost& operator=(const RdmaHost&) = delete;

  const std::string& name() const { return name_; }
  rdma_cm_id* id() const { return id_; }
  ibv_pd* pd() const { return pd_; }
  uint32_t qp_num() const { return id_->qp->qp_num; }

  // Takes every completion waiting (reposting receives) and every rdma_cm
  // event (acked at once: its fields are copied).
  void drain();
  // Asks for a completion event on both CQs (then drain again before waiting).
  void arm();
  int completion_fd() const { return comp_->fd; }
  int event_fd() const { return channel_->fd; }
  // After poll() said completion_fd() is readable.
  void take_completion_events();

  // Posts one UD send of `size` bytes, message `seq` of step `step`, from
  // send slot seq % kSendSlots. Returns ibv_post_send's result.
  int post_send(ibv_ah* ah, uint32_t qpn, uint32_t qkey, uint32_t seq, uint32_t step, uint32_t size);
  static constexpr uint32_t kSendSlots = 64;

  std::vector<Received> received;       // in the order polled
  struct Sent {
    ibv_wc_status status;
    ibv_wc_opcode opcode;  // valid only with IBV_WC_SUCCESS
  };
  std::vector<Sent> sent;               // send completions, in order
  std::deque<CmEvent> events;           // rdma_cm events not yet taken

 private:
  void post_receive(uint32_t slot);
  void bind_to_port(const DevicePort& dp, Family family);

  std::string name_;
  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* comp_ = nullptr;
  ibv_cq* send_cq_ = nullptr;
  ibv_cq* recv_cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::vector<uint8_t> buffers_;  // recv_depth receive slots, then kSendSlots send slots
  uint32_t slot_size_ = 0, recv_depth_ = 0;
};

}  // namespace ibfab::passthrough
