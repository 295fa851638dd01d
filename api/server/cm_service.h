#pragma once
// The engine's side of librdmacm (cm_protocol.h): what the kernel's
// rdma_ucm, rdma_cm, ib_cm, ib_sa multicast and ipoib do on a real host,
// for every host of the fabric. Each lives in a room of its own under
// api/server/kernel/ (docs/ARCHITECTURE.md); this class only builds them,
// in this order, and passes the engine's calls and the HCAs' port events
// on:
//
//   ucma (kernel/ucma.h)        the clients' requests, event channels, handles
//   rdma_cm (kernel/rdma_cm.h)  the ids' state machine, port spaces, routes
//   ib_cm (kernel/ib_cm.h)      the CM agent on class 0x07: SIDR
//   HostStacks (kernel/host_stack.h): per host port, ib_sa's SaClient, the
//       multicast module (kernel/multicast.h) and ipoib (kernel/ipoib.h)
//
// A port event other than Active or a P_Key change (PORT_ERR, LID or SM
// change, client reregister) resets the port's multicast module (members
// told -ENETRESET, nothing sent to the SA), so rdma_cm forgets the ids'
// joins there and ipoib joins its broadcast group again; Active makes
// ipoib join.
#include <cstddef>
#include <cstdint>
#include <span>

#include "api/client/cm_protocol.h"
#include "api/client/protocol.h"
#include "api/client/seqpacket.h"
#include "api/server/kernel/host_stack.h"
#include "api/server/kernel/ib_cm.h"
#include "api/server/kernel/rdma_cm.h"
#include "api/server/kernel/ucma.h"
#include "fabric/model/fabric.h"
#include "fabric/model/port_event.h"
#include "fabric/topology/address_plan.h"

namespace ibfab::api {

class CmService final : public fabric::PortEventListener {
 public:
  using Client = UcmaClient;

  // `every_host_local`: any host's address may be bound by any client
  // (the embedded transport, one process).
  CmService(fabric::Fabric& fabric, const topo::AddressPlan& plan, bool every_host_local);
  ~CmService() override;
  CmService(const CmService&) = delete;
  CmService& operator=(const CmService&) = delete;

  // A CM connection of process `pid` whose host is `home` (null in
  // embedded mode without IBFAB_NODE: the first host routes).
  Client* open(fabric::Hca* home, uint32_t pid) { return ucma_.open(home, pid); }
  // Destroys everything the client made, as its ids' rdma_destroy_id would.
  void close(Client* client) { ucma_.close(client); }
  // One request; the reply to send back.
  CmReply handle(Client& client, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds) {
    return ucma_.handle(client, type, msg, fds);
  }

  // Every Active port has joined its IPoIB broadcast group, or tried twice
  // (HostStacks::ipoib_settled: cheap to ask after every event).
  bool ipoib_settled() { return stacks_.ipoib_settled(); }
  std::size_t ipoib_hosts_settled() const { return stacks_.ipoib_hosts_settled(); }
  std::size_t hosts() const { return stacks_.hosts(); }
  // Sends the events a full channel socket could not take yet.
  void flush() { ucma_.flush(); }
  bool backlog() const { return ucma_.backlog(); }
  // What `client` makes the engine hold, in bytes: its ids, its channels,
  // and the events written for it that its channels' sockets could not
  // take yet. The engine charges it to the client's connection.
  std::size_t held(const Client& client) const { return ucma_.held(client); }
  // Whether any client's held() changed since the last call.
  bool take_held_changed() { return ucma_.take_held_changed(); }

  void on_port_event(fabric::Hca& hca, uint8_t port, fabric::PortEvent event) override;

 private:
  HostStacks stacks_;
  // Each room is built on those above it here; ib_cm's and rdma_cm's users
  // (rdma_cm, ucma) are named before they are built and not called until
  // a MAD or a request arrives.
  IbCm ib_cm_;
  RdmaCm rdma_cm_;
  Ucma ucma_;
};

}  // namespace ibfab::api
