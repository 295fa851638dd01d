#pragma once
// The engine's side of librdmacm (cm_protocol.h): what the kernel's rdma_cm,
// ib_sa multicast and ib_cm SIDR do on a real host.
//
// - Addresses come from the fabric's AddressPlan: binding needs an address
//   of a host local to the client (its own; every host in embedded mode),
//   and resolving one without a source goes by the host's routing table.
// - IPoIB: every Active port joins its partition's broadcast group (JoinState
//   0x1, MGID|PortGID|P_Key|JoinState, as ipoib does), retrying while the SA
//   does not answer; a port event makes it join again. rdma_cm multicast
//   needs that group: its SL, flow label and traffic class are copied into
//   every join, and without it a join fails with EADDRNOTAVAIL.
// - Joins go through a PortMulticast per port (one SA membership per group
//   and JoinState bit, however many ids ask); MULTICAST_JOIN carries the
//   group's address vector, QPN 0xFFFFFF and Q_Key; MULTICAST_ERROR the
//   status (-EINVAL when the SA refused, -ETIMEDOUT, -ENETRESET after a
//   port event).
// - Routes: a PathRecord Get from the id's port (DGID, SGID, P_Key,
//   NumbPath 1, Reversible).
// - UD "connections" are SIDR: REQ and REP MADs (class 0x07) between the
//   hosts' CM agents, rdma_cm's 36-byte header in front of the REQ's private
//   data, the service ID ps << 16 | port. A REQ nobody listens for is
//   answered "service ID not supported"; a REP with a non-zero status
//   becomes UNREACHABLE with that status, as the kernel reports it. A
//   listener holds as many requests its program has not answered yet as
//   its backlog (rdma_listen's; not 1 to 1024: net.rdma_ucm.max_backlog,
//   1024); a REQ past that is rejected, as ib_cm rejects a SIDR REQ that
//   rdma_ucm turns away. (rdma_ucm counts the requests not yet read, which
//   the engine cannot see: answered is what it can.)
#include <sys/socket.h>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/client/cm_protocol.h"
#include "api/client/protocol.h"
#include "api/client/seqpacket.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/model/fabric.h"
#include "fabric/model/port_event.h"
#include "fabric/topology/address_plan.h"
#include "sim/event_handle.h"

namespace ibfab::api {

class CmService final : public fabric::PortEventListener {
 public:
  // `hosts` in topology order; `every_host_local`: any host's address may
  // be bound by any client (the embedded transport, one process).
  CmService(fabric::Fabric& fabric, const topo::AddressPlan& plan, bool every_host_local);
  ~CmService() override;
  CmService(const CmService&) = delete;
  CmService& operator=(const CmService&) = delete;

  struct Client;
  // A CM connection of process `pid` whose host is `home` (null in
  // embedded mode without IBFAB_NODE: the first host routes).
  Client* open(fabric::Hca* home, uint32_t pid);
  // Destroys everything the client made, as its ids' rdma_destroy_id would.
  void close(Client* client);
  // One request; the reply to send back.
  CmReply handle(Client& client, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds);

  // Every Active port has joined its IPoIB broadcast group, or tried twice.
  // Cheap to ask after every event: it resumes at the host that held it up
  // last time, and says yes only after a whole pass.
  bool ipoib_settled();
  // Sends the events a full channel socket could not take yet.
  void flush();
  bool backlog() const { return backlogged_ > 0; }
  // What `client` makes the engine hold, in bytes: its ids, its channels,
  // and the events written for it that its channels' sockets could not
  // take yet. The engine charges it to the client's connection.
  std::size_t held(const Client& client) const;
  // Whether any client's held() changed since the last call.
  bool take_held_changed() { return std::exchange(held_changed_, false); }

  void on_port_event(fabric::Hca& hca, uint8_t port, fabric::PortEvent event) override;

 private:
  struct Channel;
  struct Id;
  struct Join;
  struct PortStack;
  struct HostStack;
  class CmAgent;
  enum class State : uint8_t;

  // Requests.
  int64_t create_channel(Client& c, ReceivedFds& fds);
  int64_t destroy_channel(Client& c, uint32_t channel);
  int64_t create_id(Client& c, const CmCreateId& req);
  int64_t destroy_id(Id& id);
  int64_t migrate_id(Client& c, Id& id, uint32_t channel);
  int64_t bind(Id& id, const sockaddr_storage& addr);
  int64_t resolve_addr(Id& id, const CmAddrRequest& req);
  int64_t resolve_route(Id& id, uint32_t timeout_ms);
  int64_t set_ib_path(Id& id, const CmSetIbPath& req);
  int64_t listen(Id& id, uint32_t backlog);
  int64_t connect(Id& id, const CmConnect& req);
  int64_t answer(Id& id, const CmConnect& req, bool accept);
  int64_t join(Id& id, const CmJoin& req);
  int64_t leave(Id& id, uint64_t uid);
  void query(const Id& id, CmIdInfo& info) const;
  int64_t init_qp_attr(Id& id, uint32_t state, CmIdInfo& info);
  int64_t query_address(const Client& c, uint32_t port, CmPortAddress& out) const;

  // Helpers.
  Id* find_id(Client& c, uint32_t handle);
  bool local(const Client& c, const fabric::Hca& hca) const;
  HostStack& stack(const fabric::Hca& hca) { return *stacks_.at(hca.index()); }
  PortStack& port_stack(const Id& id);
  void attach_device(Id& id, fabric::Hca& hca, uint8_t port);
  std::optional<uint32_t> qkey_of(const Id& id);
  static wire::Gid broadcast_mgid(const PortStack& ps);  // the port's IPoIB broadcast group
  const mad::McMemberRecord* broadcast(PortStack& ps) const;
  void emit(Id& id, CmEvent& ev);
  void hold(Client& c, std::ptrdiff_t bytes);
  void end_request(Id& id);  // a CONNECT_REQUEST id answered or gone: its listener's backlog has room
  void write(Channel& ch, const CmEvent& ev);
  fabric::Hca& routing_host(const Client& c) const;

  // IPoIB.
  void ipoib_join(fabric::Hca& hca, uint8_t port);
  // SIDR.
  void on_cm_mad(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad);
  void sidr_request(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& from, std::span<const uint8_t> mad);
  void sidr_reply(std::span<const uint8_t> mad);
  void send_sidr(Id& id);
  void sidr_rep_to(fabric::Hca& hca, uint8_t port, const fabric::MadAddress& to, uint64_t tid, uint32_t request_id,
                   uint64_t service_id, uint8_t status, uint32_t qpn, uint32_t qkey,
                   std::span<const uint8_t> private_data);

  fabric::Fabric& fabric_;
  const topo::AddressPlan& plan_;
  bool every_host_local_;
  std::vector<std::unique_ptr<HostStack>> stacks_;  // by node index (null for switches)
  std::size_t ipoib_cursor_ = 0;                    // ipoib_settled's place in stacks_
  std::vector<std::unique_ptr<Client>> clients_;
  std::unordered_map<uint32_t, std::unique_ptr<Channel>> channels_;
  std::unordered_map<uint32_t, std::unique_ptr<Id>> ids_;
  // Bound ports: (host or null for "every local host", port space, port) -> id.
  std::map<std::tuple<const fabric::Hca*, uint16_t, uint16_t>, uint32_t> ports_;
  std::unordered_map<uint32_t, uint32_t> sidr_out_;  // request ID -> connecting id
  uint32_t next_handle_ = 1;
  uint32_t next_request_ = 1;
  uint16_t next_ephemeral_ = 32768;
  std::size_t backlogged_ = 0;
  bool held_changed_ = false;
};

}  // namespace ibfab::api
