#pragma once
// A reliable connection between two scenario hosts through rdma-core's
// public API, made in one process as two applications make one: the
// passive host listens on its address (RDMA_PS_TCP, an ephemeral port),
// the active host resolves that address and a route and connects, the
// passive host accepts the request its listener heard. Each end has an RC
// QP (rdma_create_qp) on a CQ of its own and one memory region (local
// write, remote write, remote read) of `size`-byte slots in three areas:
// receive buffers, kept posted; sources of its sends and writes (where its
// reads land too); targets its peer writes into and reads from.
//
// Each step writes its API-visible outcome as one JSON object: the calls'
// results, the rdma_cm events each end heard (TIMEWAIT_EXIT, whose time
// is the CM's packet lifetime, is left out), the work completions by
// status and opcode, and whether the data arrived whole and in order.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "tools/passthrough/json_line.h"
#include "tools/passthrough/rdma_host.h"
#include "tools/scenario/scenario.h"

namespace ibfab::passthrough {

class RcConnection {
 public:
  // Work requests one post keeps outstanding at once; the target slots.
  static constexpr uint32_t kWindow = 16;
  // Receives each end keeps posted: more than a window, so no send meets
  // a receive queue that is empty (no RNR NAK to time).
  static constexpr uint32_t kRecvDepth = 32;

  // Nothing is made until connect(); `size` bytes per slot (a post's
  // largest message), `timeout` per wait.
  RcConnection(const RdmaHost& active, const RdmaHost& passive, uint32_t size, std::chrono::milliseconds timeout);
  ~RcConnection();
  RcConnection(const RcConnection&) = delete;
  RcConnection& operator=(const RcConnection&) = delete;

  // Listen, resolve the address and the route, make the QPs, connect and
  // accept: ok when both ends heard ESTABLISHED. Without `listen` the
  // listener's port is let go before the connect: ok when the active end
  // hears REJECTED.
  JsonObject connect(bool& ok, bool listen = true);
  // `spec.count` work requests of `spec.op` from the end of host `from`,
  // each signaled, at most kWindow outstanding. ok when every one
  // completed, successfully while connected and flushed after the
  // disconnect, and every receive the peer needed came.
  JsonObject post(const std::string& from, const scenario::ConnSpec& spec, uint32_t step, bool& ok);
  // rdma_disconnect by the end of host `from`; the peer, hearing
  // DISCONNECTED, disconnects too, as an application does. ok when both
  // ends heard DISCONNECTED.
  JsonObject disconnect(const std::string& from, bool& ok);

 private:
  struct Completion {
    ibv_wc_status status;
    ibv_wc_opcode opcode;
    uint32_t byte_len;
    bool with_imm;
    uint32_t imm;
    uint64_t wr_id;
    // A receive of a send: the message's header, and whether the pattern after it is whole.
    std::optional<uint32_t> seq = {}, step = {};
    bool intact = true;
  };
  struct End {
    const RdmaHost* host = nullptr;
    rdma_cm_id* id = nullptr;
    ibv_pd* pd = nullptr;
    ibv_comp_channel* comp = nullptr;
    ibv_cq* cq = nullptr;
    ibv_mr* mr = nullptr;
    std::vector<uint8_t> memory;
    std::vector<Completion> sends, recvs;  // in the order polled
    std::vector<std::pair<rdma_cm_event_type, int>> events;  // rdma_cm events heard, with their status
    uint32_t receives_posted = 0;          // receive WQEs the QP holds
    bool disconnected = false;             // heard DISCONNECTED
  };
  enum Area : uint32_t { kRecvArea = 0, kSourceArea = kRecvDepth, kTargetArea = kRecvDepth + kWindow };

  uint8_t* slot(End& e, uint32_t index) { return e.memory.data() + std::size_t{index} * slot_size_; }
  End& end_of(const std::string& host) { return ends_[0].host->name() == host ? ends_[0] : ends_[1]; }
  End& peer_of(const End& e) { return &e == &ends_[0] ? ends_[1] : ends_[0]; }
  // The QP, CQ and memory of an end whose id is bound to a device; receives
  // posted. 0 or the errno of the call that failed, named in `failed`.
  int make_end(End& e, std::string& failed);
  bool post_receive(End& e, uint32_t index);
  // Takes every completion and rdma_cm event waiting.
  void drain();
  // Drains until done() or `limit` (the timeout when zero) has passed;
  // false at the limit.
  template <class Done>
  bool wait_until(Done done, std::chrono::milliseconds limit = {});
  // The events each end heard from the given indices on: {"active": [...], "passive": [...]}.
  JsonObject events_heard(std::size_t from_active, std::size_t from_passive) const;
  // The end's QP state (ibv_query_qp) as verbs names it; and, once
  // `connected`, the attributes rdma_cm gave it on the way to RTS.
  static const char* qp_state_name(ibv_qp_state s);
  static std::string qp_state(const End& e);
  static JsonObject qp_attributes(const End& e, bool connected);

  std::array<End, 2> ends_;  // the active end, the passive end
  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* listener_ = nullptr;
  uint32_t slot_size_;
  std::chrono::milliseconds timeout_;
  bool connected_ = false;  // established, and not yet disconnected
  rdma_conn_param request_{};  // the connection request's parameters, as the passive end heard them
  int disconnecting_ = 0;      // the end that called rdma_disconnect
  std::optional<int> peer_disconnect_;  // the other end's rdma_disconnect: 0 or the errno
  // How long a step keeps listening for late events once it has what it waited for.
  static constexpr std::chrono::milliseconds kQuiet{50};
};

}  // namespace ibfab::passthrough
