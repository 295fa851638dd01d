#pragma once
// An RC, UC or XRC (initiator or target) QP of a verbs connection.
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "api/client/shared_memory.h"
#include "api/client/verbs_protocol.h"
#include "api/client/verbs_rings.h"
#include "api/server/verbs_cq.h"
#include "api/server/verbs_service.h"
#include "fabric/model/hca.h"

namespace ibfab::api {

// An RC or UC QP: a connected QP of the HCA model. The engine moves the
// client's posted WQEs from the rings into the model's queues (SGEs and
// inline bytes are copied there; the data is read from the application's
// memory when the packets are built) and the model's completions into the
// CQ rings.
class VerbsService::ConnectedQp final : public fabric::QpEndpoint {
 public:
  // An XRC target (XRC_RECV) has no CQs: its receives complete on the XRC
  // SRQs' CQs. `model_xrcd` is its domain in the model.
  ConnectedQp(VerbsContext& ctx, SharedMemory mem, const CreateQp& req, Cq* scq, Cq* rcq, uint32_t model_xrcd = 0)
      : ctx_(ctx), mem_(std::move(mem)), rings_(mem_.as<rings::QpRings>()), req_(req), scq_(scq), rcq_(rcq),
        model_xrcd_(model_xrcd), wr_ids_(req.sq_depth), sges_(std::max(req.max_send_sge, req.max_recv_sge)) {
    rings_->state.value.store(IBV_QPS_RESET, std::memory_order_release);
  }
  // The model's QP; 0 if it refused (no such PD).
  uint32_t create();
  uint32_t qpn() const { return qpn_; }
  Cq* send_cq() const { return scq_; }
  Cq* recv_cq() const { return rcq_; }
  const CreateQp& request() const { return req_; }
  int modify(const ModifyQp& m);
  bool run(uint64_t limit = UINT64_MAX);
  bool posted() const { return rings_->sq_head.value.load(std::memory_order_acquire) != sq_tail_; }
  void set_stamped(bool on) { rings_->stamped.value.store(on ? 1 : 0, std::memory_order_release); }
  const VerbsContext& context() const { return ctx_; }

  void on_send_completion(const fabric::WorkCompletion& wc) override;
  void on_recv_completion(const fabric::WorkCompletion& wc) override;
  void on_qp_event(uint8_t event) override;
  void on_receive_wanted() override { take_receives(); }

 private:
  // The SGEs after a WQE header in `slot`, copied out (the client may
  // rewrite its shared memory at any time); false if they do not fit.
  bool copy_sges(const uint8_t* slot, std::size_t header, uint32_t n, uint32_t max, uint32_t slot_size);
  bool take_receives();
  bool take_sends(uint64_t limit);
  // A ring the client wrote what no library writes: the QP goes to error.
  void fatal();
  void sync_state();
  rings::Cqe completion(const fabric::WorkCompletion& wc) const;

  VerbsContext& ctx_;
  SharedMemory mem_;
  rings::QpRings* rings_;
  CreateQp req_;
  Cq* scq_;
  Cq* rcq_;
  uint32_t model_xrcd_;
  uint32_t qpn_ = 0;
  uint32_t sq_tail_ = 0;
  bool reset_ = true;  // the model's QP is in RESET (only a modify moves it there or away: sync_state)
  uint32_t rq_taken_ = 0;
  std::vector<uint64_t> wr_ids_;     // by send ring counter: the application's wr_id
  std::vector<fabric::Sge> sges_;    // one WQE's SGEs on their way to the model
  std::vector<uint8_t> inline_;      // one WQE's inline bytes on their way
};

}  // namespace ibfab::api
