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

// Writes message `seq` of step `step`, `size` bytes, at `p`: the header
// (as far as it fits), then the pattern.
void fill_message(uint8_t* p, uint32_t size, uint32_t seq, uint32_t step);
uint32_t get_be32(const uint8_t* p);

// A work completion's opcode as verbs names it ("IBV_WC_RDMA_READ").
const char* wc_opcode_name(ibv_wc_opcode op);

class RdmaHost {
 public:
  // Binds to `dp`'s address of `family`, makes the QP and posts
  // `recv_depth` receives of `max_size` bytes (plus the GRH). There are
  // `recv_sets` times as many receive buffers: a QP whose destroy was
  // refused keeps the buffers its receives hold, and the next QP takes
  // others. Throws SetupError.
  RdmaHost(std::string name, const DevicePort& dp, Family family, uint32_t recv_depth, uint32_t max_size,
           uint32_t recv_sets = 1);
  ~RdmaHost();
  RdmaHost(const RdmaHost&) = delete;
  RdmaHost& operator=(const RdmaHost&) = delete;

  const std::string& name() const { return name_; }
  rdma_cm_id* id() const { return id_; }
  ibv_pd* pd() const { return pd_; }
  ibv_qp* qp() const { return id_->qp; }
  // 0 when the host has no QP (a create-qp the device refused).
  uint32_t qp_num() const { return id_->qp ? id_->qp->qp_num : 0; }
  uint8_t port() const { return id_->port_num; }
  bool infiniband() const { return infiniband_; }

  // Lets go of the QP as rdma_destroy_qp does (the id has none after)
  // and returns ibv_destroy_qp's result: a QP still attached to a group is
  // refused (EBUSY, as uverbs refuses it) and lives on, receiving.
  int destroy_qp();
  // Makes a QP for the id on the same CQs with `create_flags`
  // (ibv_qp_init_attr_ex), its receives posted. Returns 0 or the errno.
  int make_qp(uint32_t create_flags);
  // ibv_modify_qp of the UD QP to `to`, with what the transition needs
  // (INIT: P_Key index, port and Q_Key as they are; RTR to RTS: an SQ
  // PSN). Returns 0 or the errno. RESET empties the receive queue; a QP
  // that leaves RESET gets its receives posted again.
  int modify_state(ibv_qp_state to);

  // What a unicast UD sender needs to reach this host: its port's LID (0
  // on RoCE), the GID of its address, its QP's number and Q_Key.
  struct Address {
    uint16_t lid;
    ibv_gid gid;
    uint32_t qpn, qkey;
  };
  Address address() const;
  // The index of this host's own GID in its port's table (an AH's
  // sgid_index), or -1.
  int sgid_index() const;

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

  std::vector<Received> received;       // in the order polled, flushed and failed ones too
  uint64_t delivered = 0;               // those of `received` with IBV_WC_SUCCESS
  struct Sent {
    ibv_wc_status status;
    ibv_wc_opcode opcode;  // valid only with IBV_WC_SUCCESS
  };
  std::vector<Sent> sent;               // send completions, in order
  std::deque<CmEvent> events;           // rdma_cm events not yet taken

 private:
  // Posts a receive into `slot` on the current QP unless a QP holds it;
  // false if there is no QP or ibv_post_recv failed.
  bool post_receive(uint32_t slot);
  // Posts a receive in every empty slot (stops at the first refusal).
  void post_receives();
  int create_ud_qp(uint32_t create_flags);
  void bind_to_port(const DevicePort& dp, Family family);

  std::string name_;
  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* comp_ = nullptr;
  ibv_cq* send_cq_ = nullptr;
  ibv_cq* recv_cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::vector<uint8_t> buffers_;  // recv_slots_ receive slots, then kSendSlots send slots
  uint32_t slot_size_ = 0, recv_depth_ = 0;
  uint32_t recv_slots_ = 0;       // receive buffers: recv_depth_ per set
  std::vector<uint32_t> slot_qp_;  // per receive buffer: the QP whose WQE holds it (0: free)
  uint32_t current_posted_ = 0;    // WQEs the current QP holds (at most recv_depth_)
  ibv_gid gid_{};             // this host's address as a GID
  bool infiniband_ = true;    // the port's link layer
};

}  // namespace ibfab::passthrough
