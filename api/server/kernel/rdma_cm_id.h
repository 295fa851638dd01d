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

// rdma_cm's states (enum rdma_cm_state). The kernel keeps a connecting
// id in RDMA_CM_CONNECT from the request to the disconnection; the steps
// in between are told apart here, as cma.c tells them apart by ib_cm's.
enum class RdmaCmState : uint8_t {
  Idle,
  AddrQuery,
  AddrBound,
  AddrResolved,
  RouteQuery,
  RouteResolved,
  Listen,
  Connect,         // the SIDR REQ or REQ out; connected ids: until the RTU is sent or comes
  ConnectRequest,  // a SIDR REQ or REQ came in, not yet accepted or rejected
  Connected,       // UD: answered; connected ids: ESTABLISHED
  Disconnect,      // DISCONNECTED told (rdma_cm's RDMA_CM_DISCONNECT)
};

// A connected (RC, UC, XRC) id's connection: ib_cm's id and what
// rdma_init_qp_attr gives for RTR and RTS, seen from this side.
struct RdmaCmConnection {
  CmId cm = 0;  // 0: none (ib_cm's ids are never 0)
  uint32_t remote_qpn = 0;
  uint32_t remote_psn = 0;          // the peer's starting PSN: this side's rq_psn
  uint8_t responder_resources = 0;  // RTR's max_dest_rd_atomic
  uint8_t initiator_depth = 0;      // RTS's max_rd_atomic
  uint8_t retry_count = 0;
  uint8_t rnr_retry_count = 0;
  uint8_t path_mtu = 0;             // the REQ's
  uint8_t ack_timeout = 0;          // RTS's timeout (cm.c's av.timeout)
  bool active = false;              // made by rdma_connect (else from a REQ)
  bool peer_known = false;          // the REQ (passive) or REP (active) came: RTR and RTS can be given
};

// The starting PSN an id offers (24 bits). The kernel draws it at random
// when it makes the id; here it is a hash of the id's handle, so that runs
// repeat.
inline uint32_t first_psn(uint32_t handle) { return (handle * 0x9E3779B1u >> 8) & 0xFFFFFF; }

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
  uint32_t seq_num = 0;       // the starting PSN this side offers (24 bits)
  RdmaCmConnection conn;
};

}  // namespace ibfab::api
