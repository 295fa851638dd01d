#pragma once
// A shared receive queue of a verbs connection.
#include <cstdint>
#include <vector>

#include "api/client/shared_memory.h"
#include "api/client/verbs_protocol.h"
#include "api/client/verbs_rings.h"
#include "api/server/verbs_service.h"
#include "fabric/model/hca.h"

namespace ibfab::api {

// A shared receive queue: the model's SRQ, fed from the client's ring. An
// XRC SRQ (`cq` given, in the model's domain `model_xrcd`) also takes the
// receive completions of the messages it took, whichever target QP they
// came through, onto its CQ.
class VerbsService::SharedRq final : public fabric::QpEndpoint {
 public:
  SharedRq(VerbsContext& ctx, SharedMemory mem, const CreateSrq& req, Cq* cq = nullptr, uint32_t model_xrcd = 0)
      : ctx_(ctx), mem_(std::move(mem)), rings_(mem_.as<rings::QpRings>()), req_(req), cq_(cq),
        model_xrcd_(model_xrcd), sges_(req.max_sge) {}
  uint32_t create();
  uint32_t srqn() const { return srqn_; }
  const CreateSrq& request() const { return req_; }
  Cq* cq() const { return cq_; }
  bool run();
  const VerbsContext& context() const { return ctx_; }
  void on_send_completion(const fabric::WorkCompletion&) override {}
  void on_recv_completion(const fabric::WorkCompletion& wc) override;
  void on_qp_event(uint8_t event) override;
  void on_receive_wanted() override { run(); }

 private:
  VerbsContext& ctx_;
  SharedMemory mem_;
  rings::QpRings* rings_;
  CreateSrq req_;
  Cq* cq_;
  uint32_t model_xrcd_;
  uint32_t srqn_ = 0;
  uint32_t taken_ = 0;
  bool broken_ = false;  // its ring held what no library writes: it takes no more
  std::vector<fabric::Sge> sges_;
};

}  // namespace ibfab::api
