#pragma once
// A host's part in a scenario, as an application on it would act: an SA
// client on QP1 (fabric::SaClient: MCMemberRecord Set to join, Delete to
// leave, sent to the port's MasterSMLID, 3000 ms spent as the kernel's
// ib_sa spends it: fabric::SaRetry::kernel), and one UD QP, as an rdma_cm
// id holds one: attached to every group joined as a receiving member (Full
// or NonMember: send-only members are not attached, as librdmacm does),
// sending UD multicast with a GRH and unicast UD to another host's QP. The
// QP takes the P_Key index (the entry of the group's partition in the
// port's table) of the group it last joined, and the Q_Key of the group
// it was last attached to by a join (0 before any). The scenario also
// drives it as a verbs user would: ibv_attach_mcast / ibv_detach_mcast,
// ibv_modify_qp between the UD states (as api/server/verbs_ud_qp.cpp, the
// served libibverbs' UD QP, gates them: only RTS sends, only RTR and RTS
// receive), and the QP destroyed and made again. Everything the host
// observes (each SA answer with its outcome and records, each Report, each
// message received with its payload, each verbs call's result) is folded
// into the simulator's run digest.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "fabric/model/hca.h"
#include "fabric/model/sa_client.h"
#include "fabric/wire/gid.h"
#include "sim/time.h"
#include "tools/scenario/scenario.h"

namespace ibfab::scenario {

struct JoinResult {
  uint16_t status = 0;  // SA status; kTimedOut when no answer came, kNoSm when the port knows no SM
  uint16_t mlid = 0;
  wire::Gid mgid{};
  uint8_t join_state = 0;  // as the SA returned it
  uint16_t p_key = 0;      // the group's, as the SA returned it
  sim::Time sent, answered;
  static constexpr uint16_t kTimedOut = 0xFFFF;
  static constexpr uint16_t kNoSm = 0xFFFE;
  bool answered_by_sa() const { return status != kTimedOut && status != kNoSm; }
};

// Folds what an application on `hca`'s host saw into the run's digest (the
// fingerprint), if one is attached: a kind, three fields, and the bytes it
// received.
void observe_host(const fabric::Hca& hca, uint32_t kind, uint64_t a, uint64_t b, uint64_t c,
                  std::span<const uint8_t> bytes = {});

class ScenarioHost : public fabric::MadAgent, public fabric::UdEndpoint {
 public:
  explicit ScenarioHost(fabric::Hca& hca, uint8_t port = 1);
  ~ScenarioHost() override;
  ScenarioHost(const ScenarioHost&) = delete;
  ScenarioHost& operator=(const ScenarioHost&) = delete;

  using Done = std::function<void(const JoinResult&)>;
  void join(const McastSpec& spec, Done done);
  void leave(const McastSpec& spec, Done done);
  // What came of posting a send (ibv_post_send, and for a QP in ERR the
  // completions): posted, its messages leaving 1 us apart; posted and all
  // flushed (the QP is in ERR: nothing leaves); refused with EINVAL (the QP
  // is in RESET, INIT or RTR); or not posted, the host having no group to
  // send to.
  enum class Posted { Sent, Flushed, NotReady, NotJoined };
  // Sends spec.count packets of spec.size bytes to a group this host has
  // joined (any JoinState): DLID the group's MLID, a GRH with its MGID,
  // the group's Q_Key.
  Posted send(const McastSpec& spec);
  // Sends spec.count packets of spec.size bytes by unicast UD to `peer`'s
  // QP, with the Q_Key that QP has now; DLID the peer port's LID, and a GRH
  // (DGID the peer port's GID) when spec.grh.
  Posted send_to(const ScenarioHost& peer, const McastSpec& spec);

  // ibv_attach_mcast / ibv_detach_mcast of the host's QP with `mgid` and
  // mlid_of(mgid): 0, or the errno (fabric::Hca: attaching twice is no
  // error and adds no second copy; detaching what is not attached, EINVAL).
  int attach(const wire::Gid& mgid);
  int detach(const wire::Gid& mgid);
  // The MLID this host's last successful join of `mgid` returned; 0 if it
  // never joined it.
  uint16_t mlid_of(const wire::Gid& mgid) const;
  // ibv_modify_qp of the UD QP to `next`: 0, or EINVAL for a transition
  // the verbs do not allow (allowed: RESET->INIT, INIT->INIT|RTR, RTR->RTS,
  // RTS->RTS, any->RESET|ERR). The Q_Key and P_Key index stay. Moving to
  // RESET or ERR flushes the sends not yet gone.
  int set_qp_state(QpStateName next);
  QpStateName qp_state() const { return state_; }
  // The QP destroyed (its sends flushed) and made again in RTS, as
  // rdma_create_qp leaves a UD QP, with the host's current Q_Key and P_Key
  // index, attached to nothing; block_self_mcast_lb:
  // IBV_QP_CREATE_BLOCK_SELF_MCAST_LB (its own multicast is not looped
  // back to it). The old QP, if still attached to a group, is not
  // destroyed (EBUSY in uverbs, ignored by rdma_destroy_qp): it stays in
  // RTS, attached, and what it receives counts as the host's.
  void recreate_qp(bool block_self_mcast_lb);
  uint32_t qpn() const { return qpn_; }

  // Subscribes (InformInfo Set) to generic traps `trap` from any producer;
  // Reports that arrive (at this host's own agent, which takes the SA's
  // Reports) are answered (ReportResp) and counted.
  void subscribe(uint16_t trap, Done done);
  uint64_t reports(uint16_t trap) const {
    auto it = reports_.find(trap);
    return it == reports_.end() ? 0 : it->second;
  }

  // Messages the QP accepted (multicast and unicast).
  uint64_t received() const { return received_; }
  uint64_t sent() const { return sent_; }
  const std::string& name() const { return hca_.name(); }

  void on_mad(fabric::Port& port, const fabric::MadAddress& from, std::span<const uint8_t> mad) override;
  bool on_receive(const fabric::UdMessage& msg) override;

 private:
  struct Group {
    uint16_t mlid = 0;
    uint32_t qkey = 0;
    uint8_t state = 0;  // accumulated JoinState this host holds
    bool attached = false;
  };
  void request(uint8_t method, const McastSpec& spec, uint64_t mask, Done done);
  // observe_host on this host.
  void observe(uint32_t kind, uint64_t a, uint64_t b, uint64_t c, std::span<const uint8_t> bytes) const;
  void answered(uint8_t method, const JoinResult& r, uint8_t join_state, uint32_t qkey);
  // A send posted: its messages (wr, with a payload of `size` bytes) leave
  // 1 us apart while the QP stays in RTS.
  struct Post {
    fabric::UdSend wr;  // the payload is set as each message leaves
    uint32_t size = 0;
    uint32_t left = 0;   // messages not yet gone
    uint64_t epoch = 0;  // the QP's epoch when posted
  };
  Posted post(const fabric::UdSend& wr, const McastSpec& spec);
  int attachment(const wire::Gid& mgid, bool attach);  // attach() or detach()
  void send_one(uint32_t slot);

  fabric::Hca& hca_;
  uint8_t port_;
  fabric::SaClient sa_;
  uint32_t agent_ = 0;  // takes the SA's Reports
  uint32_t qpn_ = 0;
  uint32_t qkey_ = 0;  // the QP's Q_Key
  QpStateName state_ = QpStateName::Rts;
  // Bumped whenever the QP leaves RTS for RESET or ERR, or is made again:
  // a post of an earlier epoch is flushed.
  uint64_t epoch_ = 0;
  std::vector<uint32_t> lingering_;  // QPs a recreate could not destroy (still attached)
  std::map<wire::Gid, Group> groups_;
  std::map<wire::Gid, uint16_t> joined_mlid_;  // by MGID: what the last successful join returned
  std::map<uint16_t, uint64_t> reports_;  // by trap number
  uint64_t received_ = 0, sent_ = 0;
  std::vector<Post> posts_;           // slots, reused once their messages are gone
  std::vector<uint32_t> free_posts_;  // free slots of posts_
  std::vector<uint8_t> payload_;      // what a send puts in every packet
};

}  // namespace ibfab::scenario
