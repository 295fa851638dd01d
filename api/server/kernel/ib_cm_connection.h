#pragma once
// ib_cm's connections (drivers/infiniband/core/cm.c; IBTA 1.3 vol 1, 12.9):
// the REQ/REP/RTU handshake, REJ, MRA and DREQ/DREP, one state machine per
// connection, for the users of IbCm (ib_cm.h routes every class 0x07 MAD
// other than SIDR's here).
//
// A connection is named on each host by its LocalCommunicationID (CmId),
// allocated per HCA as cm.c allocates them: a cyclic counter XORed with a
// random-looking operand (here a hash of the HCA's GUID, so runs repeat).
// Each connection has a user (CmConnectionUser, as cm.c's cm_handler) and a
// context the user chose; connections made from a REQ get their listener's
// user and context until set_context().
//
// States and what moves them, as cm.c does:
// - Active: connect() sends a REQ (REQ_SENT) and resends it every
//   cm_time(packet lifetime) * 2 + cm_time(RemoteCMResponseTimeout), up to
//   MaxCMRetries more times; then the user hears on_cm_timeout(kReq) and the
//   connection is IDLE. An MRA for the REQ (MRA_REQ_RCVD) makes each further
//   wait cm_time(ServiceTimeout) + cm_time(packet lifetime + 1). The REP
//   (REP_RCVD) goes to the user, who answers with send_rtu() (ESTABLISHED),
//   reject() or send_mra() (MRA_REP_SENT). A repeat of the REP is answered
//   with the RTU again once ESTABLISHED, with the MRA again in MRA_REP_SENT.
// - Passive: a REQ for a service nobody listens on is answered with REJ
//   kInvalidServiceId; a REQ whose (remote QPN, CA GUID) a live connection
//   already holds with REJ kStaleConnection, and that connection, if
//   ESTABLISHED, is disconnected (DREQ). A repeat of a REQ (same remote
//   CommID and CA GUID) is dropped, but in MRA_REQ_SENT it gets the MRA
//   again and in TIMEWAIT a REJ kStaleConnection. Otherwise a connection is
//   made (REQ_RCVD) and its user hears on_cm_req(); it answers with
//   accept() (REP_SENT; the REP is resent every cm_time(the REQ's
//   LocalCMResponseTimeout), MaxCMRetries times, then on_cm_timeout(kRep)
//   and IDLE), reject() or send_mra(). The RTU ends the REP's retries
//   (ESTABLISHED, on_cm_established()); so does establish() (a receive
//   completion seen before the RTU, ib_cm_notify's COMM_EST).
// - REJ received: before ESTABLISHED the connection goes IDLE (TIMEWAIT for
//   kStaleConnection, and from REP_RCVD/MRA_REP_SENT/DREQ_SENT); the user
//   hears on_cm_rej(). A REJ kTimeout (a requester that gave up, its CA
//   GUID in the ARI) finds the passive side's connection by the
//   requester's CommID and CA GUID.
// - Disconnect: disconnect() from ESTABLISHED sends a DREQ (DREQ_SENT),
//   resent as the side's response timeout and retries say; past them the
//   user hears on_cm_timeout(kDreq) and the connection enters TIMEWAIT. A
//   DREQ received in ESTABLISHED or DREQ_SENT (naming this side's QPN; any
//   other is dropped) goes to the user (DREQ_RCVD),
//   who answers with send_drep() (TIMEWAIT); a DREP in DREQ_SENT ends the
//   DREQ (on_cm_drep(), TIMEWAIT). In TIMEWAIT a repeated DREQ is answered
//   with the DREP again; a DREQ for no connection gets a DREP too.
//   TIMEWAIT lasts cm_time(the path's ACK timeout: the REQ's
//   LocalACKTimeout on the passive side, cm.c's cm_ack_timeout(the REP's
//   TargetACKDelay, packet lifetime) on the active side), then the user
//   hears on_cm_timewait_exit() and the connection is IDLE.
// - destroy() forgets a connection as ib_destroy_cm_id does: REJ kTimeout
//   while its REQ waits, REJ kConsumerReject before ESTABLISHED, a DREQ when
//   ESTABLISHED, a DREP in DREQ_RCVD; one still in (or entering) TIMEWAIT
//   stays there silently until its time is up.
// - XRC: a REQ whose transport is XRC (mad::CmReq::requests_xrc) makes an
//   XRC connection on both sides, whose REP names the target QP in its
//   LocalEECN rather than its LocalQPN (cm.c's cm_rep_get_qpn); the DREQ
//   names that QP as for any other.
// A call in a state where cm.c refuses it returns false and sends nothing.
// Messages for no connection, or in a state that does not take them, are
// dropped. LAP/APR are not sent (rdma_cm no longer uses them).
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <unordered_map>

#include "fabric/mad/cm_dreq.h"
#include "fabric/mad/cm_mad.h"
#include "fabric/mad/cm_mra.h"
#include "fabric/mad/cm_rej.h"
#include "fabric/mad/cm_rep.h"
#include "fabric/mad/cm_req.h"
#include "fabric/mad/cm_rtu.h"
#include "fabric/model/hca.h"
#include "fabric/model/mad_agent.h"
#include "sim/event_handle.h"
#include "sim/simulator.h"

namespace ibfab::api {

using CmId = uint32_t;  // a connection's LocalCommunicationID on its HCA

enum class CmState : uint8_t {
  kIdle,
  kReqSent,
  kReqRcvd,
  kMraReqSent,
  kMraReqRcvd,
  kRepSent,
  kRepRcvd,
  kMraRepSent,
  kMraRepRcvd,
  kEstablished,
  kDreqSent,
  kDreqRcvd,
  kTimewait,
};

// Which message went unanswered past its retries (cm.c's REQ_ERROR,
// REP_ERROR, DREQ_ERROR).
enum class CmTimedOut : uint8_t { kReq, kRep, kDreq };

// cm.c's conversion of an IBA time exponent (4.096 us * 2^t) to
// milliseconds: 2^max(t - 8, 0) ms.
sim::Time cm_time(uint8_t iba_time);
// cm.c's cm_ack_timeout: the QP's ACK timeout exponent from the peer CA's
// ACK delay and the path's packet lifetime.
uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t packet_life_time);

// A connection as the user sees it in on_cm_req(): where it is and who asks.
struct CmPeer {
  fabric::Hca* hca = nullptr;  // where the REQ arrived
  uint8_t port = 0;
  fabric::MadAddress from;  // the requester's CM agent
};

// What a connection tells its user (cm.c's ib_cm_event types). Each call
// may call back into CmConnections, destroy() included.
class CmConnectionUser {
 public:
  // A new connection `id` (REQ_RCVD) for the listener whose context is
  // `listen_context`; answer with accept(), reject() or send_mra().
  virtual void on_cm_req(CmId id, uint64_t listen_context, const CmPeer& peer, const mad::CmReq& req) = 0;
  virtual void on_cm_rep(CmId id, uint64_t context, const mad::CmRep& rep) = 0;
  // The RTU arrived (passive side): ESTABLISHED.
  virtual void on_cm_established(CmId id, uint64_t context, const mad::CmRtu& rtu) = 0;
  virtual void on_cm_rej(CmId id, uint64_t context, const mad::CmRej& rej) = 0;
  virtual void on_cm_mra(CmId id, uint64_t context, const mad::CmMra& mra) = 0;
  virtual void on_cm_dreq(CmId id, uint64_t context, const mad::CmDreq& dreq) = 0;
  virtual void on_cm_drep(CmId id, uint64_t context, const mad::CmDrep& drep) = 0;
  virtual void on_cm_timewait_exit(CmId id, uint64_t context) = 0;
  virtual void on_cm_timeout(CmId id, uint64_t context, CmTimedOut what) = 0;

 protected:
  ~CmConnectionUser() = default;
};

// How connections reach the wire: the CM agent of (hca, port) sends `mad`
// to `to` with its TID as is, and makes TIDs for new transactions (REQ,
// DREQ) as the HCA's MAD layer does (the agent's number in the high half).
class CmSender {
 public:
  virtual void send_cm(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& to, const mad::CmMad& mad) = 0;
  virtual uint64_t new_tid(fabric::Hca& hca, uint8_t port) = 0;

 protected:
  ~CmSender() = default;
};

// What connect() needs beyond the REQ itself.
struct CmConnectParams {
  fabric::MadAddress to;         // the passive side's CM agent (LID, SL, P_Key index, GRH)
  uint8_t packet_life_time = 0;  // the path's, an IBA time exponent
  // The REQ as sent, but for LocalCommunicationID and LocalCAGUID, which
  // ib_cm fills in. Its ServiceID names the listener; MaxCMRetries and
  // RemoteCMResponseTimeout set the REQ's retries.
  mad::CmReq req;
};

class CmConnections {
 public:
  CmConnections(sim::Simulator& sim, CmSender& sender);
  ~CmConnections();
  CmConnections(const CmConnections&) = delete;
  CmConnections& operator=(const CmConnections&) = delete;

  // REQs for `service_id` arriving at any HCA make connections for `user`
  // with `context`. False when the service ID is taken.
  bool listen(uint64_t service_id, CmConnectionUser& user, uint64_t context);
  void unlisten(uint64_t service_id);

  // Sends the REQ from `hca`'s `port`; the new connection's id.
  CmId connect(fabric::Hca& hca, uint8_t port, const CmConnectParams& params, CmConnectionUser& user,
               uint64_t context);
  // The REP, from REQ_RCVD or MRA_REQ_SENT: `rep` as sent but for the
  // communication IDs and LocalCAGUID.
  bool accept(fabric::Hca& hca, CmId id, const mad::CmRep& rep);
  // The RTU, from REP_RCVD or MRA_REP_SENT.
  bool send_rtu(fabric::Hca& hca, CmId id, std::span<const uint8_t> private_data);
  // The REJ, from REQ_SENT, MRA_REQ_RCVD, REQ_RCVD, MRA_REQ_SENT, REP_SENT,
  // MRA_REP_RCVD, REP_RCVD or MRA_REP_SENT.
  bool reject(fabric::Hca& hca, CmId id, mad::CmRejReason reason, std::span<const uint8_t> ari,
              std::span<const uint8_t> private_data);
  // The MRA for the REQ (REQ_RCVD) or the REP (REP_RCVD): the answer will
  // take up to 4.096 us * 2^service_timeout.
  bool send_mra(fabric::Hca& hca, CmId id, uint8_t service_timeout, std::span<const uint8_t> private_data);
  // ESTABLISHED from REP_SENT or MRA_REP_RCVD without the RTU.
  bool establish(fabric::Hca& hca, CmId id);
  // The DREQ, from ESTABLISHED.
  bool disconnect(fabric::Hca& hca, CmId id, std::span<const uint8_t> private_data);
  // The DREP, from DREQ_RCVD.
  bool send_drep(fabric::Hca& hca, CmId id, std::span<const uint8_t> private_data);
  void set_context(fabric::Hca& hca, CmId id, uint64_t context);
  void destroy(fabric::Hca& hca, CmId id);

  // CmState::kIdle for a connection that does not exist.
  CmState state(const fabric::Hca& hca, CmId id) const;
  // How many connections exist (TIMEWAIT ones that were destroyed included).
  std::size_t size() const { return conns_.size(); }

  // A CM MAD (not SIDR) that arrived at `hca`'s `port` from `from`.
  void on_mad(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad);

 private:
  struct Conn;
  struct Listener {
    CmConnectionUser* user;
    uint64_t context;
  };
  using Key = std::pair<uint32_t, CmId>;                     // (HCA index, local id)
  using RemoteKey = std::tuple<uint32_t, uint32_t, uint64_t>;  // (HCA index, remote id or QPN, CA GUID)

  Conn* find(const fabric::Hca& hca, CmId id) const;
  // The connection a message names by our id (and, unless 0, theirs).
  Conn* find(const fabric::Hca& hca, CmId local, CmId remote) const;
  Conn* rejected(const fabric::Hca& hca, const mad::CmRej& rej) const;
  CmId allocate_id(const fabric::Hca& hca);

  void recv_req(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, uint64_t tid, const mad::CmReq& req);
  void recv_rep(fabric::Hca& hca, const mad::CmRep& rep);
  void recv_rtu(fabric::Hca& hca, const mad::CmRtu& rtu);
  void recv_rej(fabric::Hca& hca, const mad::CmRej& rej);
  void recv_mra(fabric::Hca& hca, const mad::CmMra& mra);
  void recv_dreq(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, uint64_t tid,
                 const mad::CmDreq& dreq);
  void recv_drep(fabric::Hca& hca, const mad::CmDrep& drep);

  // Sends c's request (REQ, REP or DREQ) and waits for its answer,
  // resending it as its retries allow.
  void send_request(Conn& c, const mad::CmMad& mad, CmTimedOut kind);
  void arm(Conn& c);
  void on_request_timeout(Conn& c);
  void stop_request(Conn& c);
  // Sends a response (RTU, REJ, MRA, DREP) and keeps it for repeats.
  void send_response(Conn& c, const mad::CmMad& mad);
  void send_rej(Conn& c, mad::CmRejReason reason, std::span<const uint8_t> ari,
                std::span<const uint8_t> private_data);
  void send_dreq(Conn& c, std::span<const uint8_t> private_data);
  void send_drep(Conn& c, std::span<const uint8_t> private_data);
  void to_idle(Conn& c);
  void to_timewait(Conn& c);
  void forget_remote(Conn& c);
  void erase(Conn& c);

  sim::Simulator& sim_;
  CmSender& sender_;
  std::unordered_map<uint64_t, Listener> listeners_;  // by service ID
  std::map<Key, std::unique_ptr<Conn>> conns_;
  std::map<RemoteKey, Conn*> by_remote_id_;   // passive REQs seen: (HCA, remote id, remote CA GUID)
  std::map<RemoteKey, Conn*> by_remote_qpn_;  // (HCA, remote QPN, remote CA GUID)
  std::unordered_map<uint32_t, uint32_t> next_id_;  // per HCA index
};

}  // namespace ibfab::api
