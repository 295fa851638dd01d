#pragma once
// ucma (drivers/infiniband/core/ucma.c, the rdma_ucm device) for every
// client: its CM connection's requests (cm_protocol.h), its event
// channels, and the handles of its ids. On rdma_cm, below it.
//
// - Handles: one counter for channels and ids, never reused; an id or a
//   channel of another client is -EINVAL.
// - Event channels: a socket per channel whose other end the client holds;
//   one CmEvent per message, in the order rdma_cm gives them. What a full
//   socket cannot take waits in the channel's queue, in order, until
//   flush(). Events are counted per id and per join, for CmDestroyId,
//   CmMigrateId and CmLeave to return.
// - Listen backlog: rdma_listen's, bounded to 1..1024 (anything else is
//   1024, net.rdma_ucm.max_backlog). A listener holds as many CONNECT_
//   REQUEST ids not yet read as its backlog; past that ucma does not adopt
//   the request and ib_cm rejects it, as the kernel's ucma turns a request
//   away. The kernel counts a request read when ucma_get_event hands it
//   out; the engine cannot see reads, but librdmacm queries the new id
//   (CmQueryId) as it hands the event to the application, and a request
//   answered (accepted, rejected) or destroyed was read too.
// - Accounting: what a client makes the engine hold (its ids, its
//   channels, and its channels' queued events), in bytes, for the engine
//   to charge to its connection.
// - A client that goes (close) destroys its ids in handle order, as
//   rdma_destroy_id would, then its channels.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/client/cm_protocol.h"
#include "api/client/protocol.h"
#include "api/client/seqpacket.h"
#include "api/server/kernel/rdma_cm.h"
#include "fabric/model/hca.h"
#include "fabric/topology/address_plan.h"

namespace ibfab::api {

// A client: one process's CM connection.
struct UcmaClient {
  fabric::Hca* home = nullptr;  // its host (null: it named none)
  uint32_t pid = 0;
  std::size_t held = 0;  // Ucma::held
};

class Ucma final : public RdmaCm::User {
 public:
  Ucma(RdmaCm& rdma_cm, const topo::AddressPlan& plan);
  ~Ucma();
  Ucma(const Ucma&) = delete;
  Ucma& operator=(const Ucma&) = delete;

  UcmaClient* open(fabric::Hca* home, uint32_t pid);
  void close(UcmaClient* client);
  // One request; the reply to send back.
  CmReply handle(UcmaClient& client, MsgType type, std::span<const uint8_t> msg, ReceivedFds& fds);

  // Sends the events a full channel socket could not take yet.
  void flush();
  bool backlog() const { return backlogged_ > 0; }
  std::size_t held(const UcmaClient& client) const { return client.held; }
  // Whether any client's held() changed since the last call.
  bool take_held_changed() { return std::exchange(held_changed_, false); }

  bool adopt(RdmaCmId& id, RdmaCmId& listener) override;
  void deliver(RdmaCmId& id, CmEvent& ev) override;

 private:
  struct Channel;

  int64_t create_channel(UcmaClient& c, ReceivedFds& fds);
  int64_t destroy_channel(UcmaClient& c, uint32_t channel);
  int64_t create_id(UcmaClient& c, const CmCreateId& req);
  int64_t destroy_id(RdmaCmId& id);
  int64_t migrate_id(UcmaClient& c, RdmaCmId& id, uint32_t channel);
  int64_t listen(RdmaCmId& id, uint32_t backlog);
  int64_t answer(RdmaCmId& id, const CmConnect& req, bool accept);
  int64_t leave(RdmaCmId& id, uint64_t uid);
  int64_t query_address(const UcmaClient& c, uint32_t port, CmPortAddress& out) const;

  RdmaCmId* find_id(UcmaClient& c, uint32_t handle);
  bool owns_channel(const UcmaClient& c, uint32_t channel) const;
  void end_request(RdmaCmId& id);  // a CONNECT_REQUEST id read, answered or gone: its listener's backlog has room
  void write(Channel& ch, const CmEvent& ev);
  void hold(UcmaClient& c, std::ptrdiff_t bytes);

  RdmaCm& rdma_cm_;
  const topo::AddressPlan& plan_;
  std::vector<std::unique_ptr<UcmaClient>> clients_;
  std::unordered_map<uint32_t, std::unique_ptr<Channel>> channels_;
  uint32_t next_handle_ = 1;
  std::size_t backlogged_ = 0;
  bool held_changed_ = false;
};

}  // namespace ibfab::api
