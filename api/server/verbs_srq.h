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

// A shared receive queue: the model's SRQ, fed from the client's ring.
class VerbsService::SharedRq final : public fabric::QpEndpoint {
 public:
  SharedRq(VerbsContext& ctx, SharedMemory mem, const CreateSrq& req)
      : ctx_(ctx), mem_(std::move(mem)), rings_(mem_.as<rings::QpRings>()), req_(req), sges_(req.max_sge) {}
  uint32_t create();
  uint32_t srqn() const { return srqn_; }
  bool run();
  const VerbsContext& context() const { return ctx_; }
  void on_send_completion(const fabric::WorkCompletion&) override {}
  void on_recv_completion(const fabric::WorkCompletion&) override {}
  void on_qp_event(uint8_t event) override;

 private:
  VerbsContext& ctx_;
  SharedMemory mem_;
  rings::QpRings* rings_;
  CreateSrq req_;
  uint32_t srqn_ = 0;
  uint32_t taken_ = 0;
  bool broken_ = false;  // its ring held what no library writes: it takes no more
  std::vector<fabric::Sge> sges_;
};

}  // namespace ibfab::api
