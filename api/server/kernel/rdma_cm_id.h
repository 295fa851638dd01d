#pragma once
// An rdma_cm id as the host side holds it: what ucma keeps for the client
// (its handle, owner, channel, event counts, listen backlog) and what
// rdma_cm keeps (rdma_id_private: state, device and port, addresses,
// route, joins, the SIDR exchange). Each room writes only its own fields
// (ucma chooses the handle, rdma_cm keys its ids by it) and rdma_cm reads
// nothing else of ucma's.
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "api/server/kernel/ib_cm.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/model/hca.h"
#include "fabric/wire/gid.h"
#include "sim/event_handle.h"

namespace ibfab::api {

struct UcmaClient;

// rdma_cm's states (enum rdma_cm_state), as far as UD ids go.
enum class RdmaCmState : uint8_t {
  Idle,
  AddrQuery,
  AddrBound,
  AddrResolved,
  RouteQuery,
  RouteResolved,
  Listen,
  Connect,         // SIDR REQ out
  ConnectRequest,  // a SIDR REQ came in, not yet accepted or rejected
  Connected,
};

struct RdmaCmJoin {
  uint64_t uid = 0;
  uint64_t member = 0;  // rdma_cm's: the PortMulticast member (0 after a port event)
  uint32_t events = 0;  // ucma's: events written for the join
};

// A bound port: (host, or null for "every local host"; port space; port).
using RdmaCmPort = std::tuple<const fabric::Hca*, uint16_t, uint16_t>;

struct RdmaCmId {
  // ucma's.
  uint32_t handle = 0;
  UcmaClient* owner = nullptr;
  uint32_t channel = 0;
  uint32_t events = 0;
  // Listening: the requests it may hold unanswered, and how many it does.
  uint32_t backlog = 0;
  uint32_t pending = 0;
  uint32_t listener = 0;  // a CONNECT_REQUEST's id, until answered: its listener's handle

  // rdma_cm's.
  fabric::Hca* home = nullptr;  // the host of the process that made it (null: none named)
  uint16_t ps = 0;
  uint8_t qp_type = 0;
  RdmaCmState state = RdmaCmState::Idle;
  fabric::Hca* hca = nullptr;  // the device, once bound to one
  uint8_t port = 0;
  uint16_t pkey = 0xFFFF;
  uint16_t pkey_index = 0;
  sockaddr_storage src{};
  sockaddr_storage dst{};
  std::optional<RdmaCmPort> bound;
  wire::Gid dgid{};
  std::optional<mad::PathRecord> path;
  uint64_t sa_ticket = 0;
  sim::EventHandle timer;  // address resolution's timeout
  std::vector<RdmaCmJoin> joins;
  uint32_t request_id = 0;    // Connect: ib_cm's RequestID of the SIDR REQ out
  SidrRequester requester;    // ConnectRequest: the SIDR REQ it answers
};

}  // namespace ibfab::api
