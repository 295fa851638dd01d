#pragma once
// ib_cm (drivers/infiniband/core/cm.c): the Communication Manager's MAD
// agent (class 0x07, method Send) on every HCA port, and the exchanges it
// runs for its one user, rdma_cm. Today that is SIDR (IBTA 1.3 vol 1,
// 12.11; fabric/mad/cm_sidr.h):
//
// - Active side: send_sidr_req() sends a SIDR REQ with a RequestID of its
//   own and resends it every 4,096 ms (rdma_cm's CMA_CM_RESPONSE_TIMEOUT
//   20), 15 times; the user hears the REP that answers it (matched by
//   RequestID) or, past the retries, that none came, once.
//   cancel_sidr_req() ends it with nothing heard.
// - Passive side: every SIDR REQ goes to the user, except a repeat of one
//   the user holds unanswered (same HCA, requester LID and RequestID),
//   which is dropped. The user answers each REQ it is given exactly once,
//   at once or later, with send_sidr_rep(); that ends the hold.
// Anything else on class 0x07 is ignored. ib_cm knows nothing of ids,
// addresses or port spaces: those are rdma_cm's.
#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>

#include "fabric/mad/cm_sidr.h"
#include "fabric/model/fabric.h"
#include "fabric/model/hca.h"
#include "fabric/model/mad_agent.h"
#include "sim/event_handle.h"

namespace ibfab::api {

// A SIDR REQ as it arrived: what its REP must carry and where it goes.
struct SidrRequester {
  fabric::Hca* hca = nullptr;  // where the REQ arrived
  uint8_t port = 0;
  fabric::MadAddress from;
  uint64_t tid = 0;  // the REQ's, which the REP carries
  uint32_t request_id = 0;
  uint64_t service_id = 0;
};

class IbCm {
 public:
  class User {
   public:
    virtual void on_sidr_req(const SidrRequester& from, const mad::SidrReq& req) = 0;
    // The REP answering the REQ sent for `owner`; null when every try went
    // unanswered.
    virtual void on_sidr_rep(uint32_t owner, const mad::SidrRep* rep) = 0;

   protected:
    ~User() = default;
  };

  IbCm(fabric::Fabric& fabric, User& user);
  ~IbCm();
  IbCm(const IbCm&) = delete;
  IbCm& operator=(const IbCm&) = delete;

  // Registers the CM agent of `hca`'s `port`.
  void attach(fabric::Hca& hca, uint8_t port);

  // Sends `req` (its RequestID is filled in) from `hca`'s `port` to `to`,
  // on behalf of `owner`. Returns the RequestID.
  uint32_t send_sidr_req(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& to, const mad::SidrReq& req,
                         uint32_t owner);
  void cancel_sidr_req(uint32_t request_id);
  // Answers `to` with `status` (QPN and Q_Key for status 0) and up to 136
  // bytes of private data.
  void send_sidr_rep(const SidrRequester& to, uint8_t status, uint32_t qpn, uint32_t qkey,
                     std::span<const uint8_t> private_data);

 private:
  class Agent;
  struct Outstanding {
    fabric::Hca* hca = nullptr;
    uint8_t port = 0;
    fabric::MadAddress to;
    mad::SidrReq req;
    uint32_t owner = 0;
    unsigned tries = 0;
    sim::EventHandle timer;
  };

  void on_mad(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad);
  void sidr_req(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad);
  void sidr_rep(std::span<const uint8_t> mad);
  void transmit(uint32_t request_id, Outstanding& o);
  uint32_t agent_id(const fabric::Hca& hca, uint8_t port) const;

  fabric::Fabric& fabric_;
  User& user_;
  std::unordered_map<uint32_t, std::unique_ptr<Agent>> agents_;  // by node index << 8 | port
  std::unordered_map<uint32_t, Outstanding> outstanding_;        // active side, by RequestID
  std::set<std::tuple<const fabric::Hca*, uint16_t, uint32_t>> held_;  // passive: (HCA, requester LID, RequestID)
  uint32_t next_request_ = 1;
};

}  // namespace ibfab::api
