#pragma once
// rdma_cm (drivers/infiniband/core/cma.c) for every host: the ids' state
// machine, on the rooms below it (HostStacks' ib_sa clients, multicast
// modules and ipoib; IbCm). Its one user is ucma, which makes and destroys
// ids on the clients' requests and hears their events.
//
// - Port spaces: a bound id holds (host, port space, port), the host null
//   for a wildcard address (every host local to the client). Port 0 takes
//   the next free ephemeral port, 32768..60999 (ip_local_port_range) in
//   turn; a port taken is EADDRINUSE.
// - Addresses come from the fabric's AddressPlan: binding needs an address
//   of a host local to the id's client (its own; every host in embedded
//   mode), and resolving one without a source goes by the host's routing
//   table. A unicast destination resolves when its port is Active in the
//   id's subnet (ARP), a multicast one at once; otherwise ADDR_ERROR
//   -ETIMEDOUT when the timeout runs out.
// - Routes: a PathRecord Get from the id's port (DGID, SGID, P_Key,
//   NumbPath 1, Reversible), rdma_resolve_route's timeout being the SA
//   query's total; or the client's own PathRecord (rdma_set_ib_path).
// - Joins go through the port's PortMulticast with the IPoIB broadcast
//   group's SL, flow label and traffic class (no broadcast group:
//   EADDRNOTAVAIL). MULTICAST_JOIN carries the group's address vector, QPN
//   0xFFFFFF and Q_Key; MULTICAST_ERROR the status (-EINVAL when the SA
//   refused, -ETIMEDOUT, -ENETRESET after a port event).
// - UD "connections" are SIDR through ib_cm: rdma_cm's 36-byte header in
//   front of the REQ's private data, the service ID ps << 16 | port. A REQ
//   nobody listens for is answered "service ID not supported", one the
//   user does not adopt (its listener's backlog is full) "rejected"; a REP
//   with a non-zero status becomes UNREACHABLE with that status, as the
//   kernel reports it. An id destroyed before answering its REQ rejects it.
// - RC and UC ids connect through ib_cm's connections (ib_cm_connection.h),
//   as cma.c's cma_connect_ib, cma_accept_ib and cma_ib_handler do: the
//   REQ carries the same header and service ID, the id's starting PSN
//   (seq_num), the QP number and the connection parameters, 15 retries of
//   CMA_CM_RESPONSE_TIMEOUT; the passive side's new id hears
//   CONNECT_REQUEST, answers with a REP (accept) or a REJ "consumer
//   reject"; the active side hears CONNECT_RESPONSE and sends the RTU when
//   its user accepts (librdmacm does, once the QP is RTS); the passive side
//   hears ESTABLISHED on the RTU (or on rdma_notify COMM_EST). REJ is
//   REJECTED with its reason as the status; a REQ or REP unanswered past
//   its retries UNREACHABLE -ETIMEDOUT; a DREQ received, a DREP, or a DREQ
//   unanswered (-ETIMEDOUT) DISCONNECTED; the end of TIMEWAIT after that
//   TIMEWAIT_EXIT. Destroying an id destroys its connection as
//   ib_destroy_cm_id does (a REJ, a DREQ or a DREP to the peer). The kernel
//   defers its MRAs until a REQ is repeated (IB_CM_MRA_FLAG_DELAY); these
//   ids send none. A REQ whose transport is not its listener's QP type's
//   is rejected "invalid service ID" (8), as one nobody listens for.
// - XRC ids (an XRC_SEND or XRC_RECV QP type, RDMA_PS_IB) connect as RC
//   ids do, an initiator (XRC_SEND) to a target (XRC_RECV) listener, whose
//   new id is a target too: the REQ's transport is XRC (cm.c's
//   cm_req_set_qp_type), without responder resources, retry counts or SRQ;
//   the REP names the target's QP as its LocalEECN, SRQ set (cm.c's
//   cm_format_rep). rdma_init_qp_attr gives each side what ib_cm gives its
//   QP type: INIT as RC's; RTR as RC's, but an initiator's without reads
//   or RNR timer; RTS an initiator's as RC's, a target's with only its
//   send PSN and ACK timeout.
// Events reach the user as they happen: within the request, or the
// simulator event (a MAD, a timer, an SA answer), that made them.
// rdma_cm.cpp holds the ids, addresses and routes; rdma_cm_join.cpp the
// joins; rdma_cm_connect.cpp listen and UD's SIDR; rdma_cm_connected.cpp
// the connections of RC, UC and XRC ids and their QP attributes.
#include <sys/socket.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "api/client/cm_protocol.h"
#include "api/server/kernel/host_stack.h"
#include "api/server/kernel/ib_cm.h"
#include "api/server/kernel/rdma_cm_addressing.h"
#include "api/server/kernel/rdma_cm_id.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/address_plan.h"

namespace ibfab::api {

class RdmaCm final : public IbCm::User, private CmConnectionUser {
 public:
  class User {
   public:
    // An incoming SIDR REQ or REQ for `listener` makes `id`: fill in ucma's
    // fields (its handle first), or return false, leaving `id` as it is,
    // to have the request rejected.
    virtual bool adopt(RdmaCmId& id, RdmaCmId& listener) = 0;
    // One event of `id` (ev.id is the user's to fill in).
    virtual void deliver(RdmaCmId& id, CmEvent& ev) = 0;

   protected:
    ~User() = default;
  };

  // `every_host_local`: any host's address may be bound by any client (the
  // embedded transport, one process).
  RdmaCm(fabric::Fabric& fabric, const topo::AddressPlan& plan, HostStacks& stacks, IbCm& ib_cm, User& user,
         bool every_host_local);
  RdmaCm(const RdmaCm&) = delete;
  RdmaCm& operator=(const RdmaCm&) = delete;

  static bool known_port_space(uint16_t ps);
  // A new id of the process on `home` (null: none named), by the handle
  // ucma chose (unused so far).
  RdmaCmId& create(uint32_t handle, uint16_t ps, uint8_t qp_type, fabric::Hca* home);
  // rdma_destroy_id: timers and SA queries end, joins are left, the port
  // is released, a SIDR REQ out is given up and one unanswered rejected.
  void destroy(RdmaCmId& id);
  RdmaCmId* find(uint32_t handle);
  // Whether an id listens on `port` of `hca`, in any port space. O(log ids).
  bool listening(const fabric::Hca& hca, uint16_t port) const;
  const std::unordered_map<uint32_t, std::unique_ptr<RdmaCmId>>& ids() const { return ids_; }

  // The requests; each returns 0 or -errno as rdma_ucm would.
  int64_t bind(RdmaCmId& id, const sockaddr_storage& addr);
  int64_t resolve_addr(RdmaCmId& id, const CmAddrRequest& req);
  int64_t resolve_route(RdmaCmId& id, uint32_t timeout_ms);
  int64_t set_ib_path(RdmaCmId& id, const CmSetIbPath& req);
  int64_t listen(RdmaCmId& id);
  int64_t connect(RdmaCmId& id, const CmConnect& req);
  int64_t answer(RdmaCmId& id, const CmConnect& req, bool accept);
  int64_t disconnect(RdmaCmId& id);
  int64_t notify(RdmaCmId& id, uint32_t event);
  int64_t join(RdmaCmId& id, const CmJoin& req);
  // The join left, or nullopt if the id has none by that uid.
  std::optional<RdmaCmJoin> leave(RdmaCmId& id, uint64_t uid);
  void query(const RdmaCmId& id, CmIdInfo& info) const;
  int64_t init_qp_attr(RdmaCmId& id, uint32_t state, CmIdInfo& info);

  // A port event reset `hca`'s `port`'s multicast module: the ids' joins
  // there are gone (their members were told -ENETRESET).
  void forget_joins(const fabric::Hca& hca, uint8_t port);

  void on_sidr_req(const SidrRequester& from, const mad::SidrReq& req) override;
  void on_sidr_rep(uint32_t owner, const mad::SidrRep* rep) override;

 private:
  // ib_cm's connection events (rdma_cm_connected.cpp); the context is the
  // id's handle.
  void on_cm_req(CmId cm, uint64_t listen_context, const CmPeer& peer, const mad::CmReq& req) override;
  void on_cm_rep(CmId cm, uint64_t context, const mad::CmRep& rep) override;
  void on_cm_established(CmId cm, uint64_t context, const mad::CmRtu& rtu) override;
  void on_cm_rej(CmId cm, uint64_t context, const mad::CmRej& rej) override;
  void on_cm_mra(CmId cm, uint64_t context, const mad::CmMra& mra) override;
  void on_cm_dreq(CmId cm, uint64_t context, const mad::CmDreq& dreq) override;
  void on_cm_drep(CmId cm, uint64_t context, const mad::CmDrep& drep) override;
  void on_cm_timewait_exit(CmId cm, uint64_t context) override;
  void on_cm_timeout(CmId cm, uint64_t context, CmTimedOut what) override;

  void disconnected(CmId cm, uint64_t context);
  static bool connected_type(const RdmaCmId& id);
  int64_t connect_connected(RdmaCmId& id, const CmConnect& req);
  int64_t answer_connected(RdmaCmId& id, const CmConnect& req, bool accept);
  int64_t init_connected_qp_attr(RdmaCmId& id, uint32_t state, CmIdInfo& info);
  // Starts or stops ib_cm listening on the service ID of a connected
  // listener (counted: several hosts may listen on one port).
  void listen_connected(const RdmaCmId& id, bool on);
  // The id a connection event names, if it still has that connection.
  RdmaCmId* connection_owner(uint64_t context, CmId cm);
  // Makes the id of an incoming request for `listener` (SIDR or REQ) at
  // `hca`'s `port`, adopted by the user; null when the user refuses it.
  RdmaCmId* make_request_id(RdmaCmId& listener, fabric::Hca& hca, uint8_t port, uint16_t pkey,
                            uint64_t service_id, const cm::HeaderAddresses& header);
  // The id's route as an address vector (the path's DLID, SL, rate, GRH).
  static void ah_of(const RdmaCmId& id, CmAhAttr& ah);
  // Ends the id's connection, if any, as ib_destroy_cm_id does.
  void drop_connection(RdmaCmId& id);

  static wire::Gid port_gid(const fabric::Port& p);
  bool local(const RdmaCmId& id, const fabric::Hca& hca) const { return every_host_local_ || id.home == &hca; }
  fabric::Hca& routing_host(const RdmaCmId& id) const { return id.home ? *id.home : stacks_.first_host(); }
  PortStack& port_stack(const RdmaCmId& id) { return stacks_.port(*id.hca, id.port); }
  void attach_device(RdmaCmId& id, fabric::Hca& hca, uint8_t port);
  std::optional<uint32_t> qkey_of(const RdmaCmId& id);
  RdmaCmId* listener_of(const fabric::Hca& hca, uint64_t service_id);
  void emit(RdmaCmId& id, CmEvent& ev) { user_.deliver(id, ev); }

  fabric::Fabric& fabric_;
  const topo::AddressPlan& plan_;
  HostStacks& stacks_;
  IbCm& ib_cm_;
  User& user_;
  bool every_host_local_;
  std::unordered_map<uint32_t, std::unique_ptr<RdmaCmId>> ids_;
  std::map<RdmaCmPort, uint32_t> ports_;  // bound ports -> id
  std::map<uint64_t, uint32_t> connected_listens_;  // service ID -> connected listeners on it
  uint16_t next_ephemeral_ = 32768;
};

}  // namespace ibfab::api
