#pragma once
// The protocol between the client core (api/client) and the engine that
// owns a fabric (api/server), over a SOCK_SEQPACKET Unix socket: one
// message per packet, a MsgHeader then a fixed body (RecvMad and SendMad
// end with the MAD bytes). Host byte order: both ends run on one machine.
//
// Connections are of two kinds, named by the Hello that opens them:
//   - control: request/reply (QueryNode, RegisterAgent, UnregisterAgent),
//     one per client process;
//   - MAD port: one per umad_open_port; carries SendMad (client to engine)
//     and RecvMad (engine to client) only, so its fd is pollable for MADs
//     and a MAD never waits behind a reply;
//   - verbs: one per ibv_open_device; request/reply for the verbs objects
//     (verbs_protocol.h). Their data path does not use the socket: it runs
//     through rings in shared memory (verbs_rings.h);
//   - connection manager: one per process using librdmacm; request/reply
//     for rdma_cm ids (cm_protocol.h), events on sockets of their own.
// A connection that sends anything malformed gets an Error and is closed;
// nothing else changes.
#include <infiniband/umad.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace ibfab::api {

inline constexpr uint32_t kProtocolVersion = 7;
inline constexpr std::size_t kNodeNameSize = 64;
inline constexpr std::size_t kMaxPkeys = 128;
inline constexpr std::size_t kMaxPorts = 4;
inline constexpr std::size_t kMaxMad = 256;           // one MAD per SendMad/RecvMad segment
// The largest message: a RecvMad of a coalesced RMPP transfer. A Unix
// socket's default send buffer (net.core.wmem_default, 208 KiB) bounds it.
inline constexpr std::size_t kMaxMessage = 200 * 1024;

enum class MsgType : uint16_t {
  Hello = 1,
  HelloReply,
  QueryNode,
  NodeReply,
  RegisterAgent,
  RegisterReply,
  UnregisterAgent,
  UnregisterReply,
  SendMad,
  RecvMad,
  Error,
  ListHosts,
  HostsReply,
  // The verbs connection's requests (verbs_protocol.h); each is answered
  // by a Result (or by a NodeReply for QueryNode).
  CreateChannel,
  DestroyChannel,
  CreateCq,
  DestroyCq,
  ResizeCq,
  CreateQp,
  ModifyQp,
  DestroyQp,
  AttachMcast,
  DetachMcast,
  AllocPd,
  DeallocPd,
  RegMr,
  DeregMr,
  ReregMr,
  AllocMw,
  DeallocMw,
  CreateSrq,
  ModifySrq,
  DestroySrq,
  OpenXrcd,
  CloseXrcd,
  VerbsReply,
  // The connection manager's requests (cm_protocol.h), each answered by a
  // CmReply.
  CmCreateChannel,
  CmDestroyChannel,
  CmCreateId,
  CmDestroyId,
  CmMigrateId,
  CmBindAddr,
  CmResolveAddr,
  CmResolveRoute,
  CmListen,
  CmConnect,
  CmAccept,
  CmReject,
  CmJoin,
  CmLeave,
  CmQueryId,
  CmInitQpAttr,
  CmSetIbPath,
  CmQueryAddress,
  CmDisconnect,
  CmNotify,
  CmQueryListener,
  CmReply,
  kLast = CmReply,
};

struct MsgHeader {
  uint16_t type = 0;
  uint16_t reserved = 0;
  uint32_t length = 0;  // body bytes after this header
};

enum class ConnectionKind : uint8_t { Control = 0, MadPort = 1, Verbs = 2, Cm = 3 };

struct Hello {
  uint32_t version = kProtocolVersion;
  uint32_t pid = 0;
  ConnectionKind kind = ConnectionKind::Control;
  uint8_t port = 0;           // MadPort: the HCA port
  uint8_t reserved[2] = {};
  char node[kNodeNameSize] = {};  // NUL-terminated host name; a control
                                  // connection may name none (embedded
                                  // mode with no IBFAB_NODE): it then only
                                  // lists hosts
};

struct HelloReply {
  int32_t status = 0;  // 0 or -errno (-ENODEV: no such host or port)
  uint32_t handle = 0; // MadPort: what RegisterAgent names it by
  uint32_t flags = 0;  // kEveryHostLocal
};
// HelloReply::flags: every host is local to every client (`ibfab serve
// --every-host-local`, and embedded mode): a client sees every host's HCA
// and may bind any host's address.
inline constexpr uint32_t kEveryHostLocal = 1;

// One HCA port as the SM configured it.
struct PortRecord {
  uint8_t number = 0;
  uint8_t state = 0;        // IBTA PortState: 1 Down .. 4 Active
  uint8_t phys_state = 0;   // 5 LinkUp, 3 Disabled, 2 Polling
  uint8_t lmc = 0;
  uint8_t sm_sl = 0;
  uint8_t reserved[3] = {};
  uint16_t lid = 0;
  uint16_t sm_lid = 0;
  uint32_t rate_mbps = 0;   // nominal rate, as sysfs "rate" gives it (4X EDR: 100,000)
  uint8_t active_width = 0; // ibv_port_attr encoding: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x
  uint8_t active_speed = 0; // ibv_port_attr encoding: 1 SDR .. 32 EDR, 64 HDR, 128 NDR
  uint8_t active_mtu = 0;   // IBTA enum: 1 256 .. 5 4096
  uint8_t max_mtu = 0;
  uint32_t capability_mask = 0;
  uint64_t gid_prefix = 0;  // host order
  uint64_t port_guid = 0;   // host order
  uint16_t pkey_count = 0;
  uint16_t pkeys[kMaxPkeys] = {};
};

// QueryNode's body: empty (the connection's host) or this, naming another
// host (the embedded transport's other devices).
struct QueryNodeBody {
  char node[kNodeNameSize] = {};
};

struct NodeReply {
  int32_t status = 0;
  uint32_t node_type = 1;   // 1 CA
  uint64_t node_guid = 0;   // host order
  uint64_t system_image_guid = 0;
  char name[kNodeNameSize] = {};
  uint32_t num_ports = 0;
  PortRecord ports[kMaxPorts];
};

struct RegisterAgent {
  uint32_t handle = 0;  // the MAD port's
  uint8_t mgmt_class = 0;
  uint8_t class_version = 0;
  uint8_t rmpp_version = 0;
  uint8_t reserved = 0;
  uint32_t oui = 0;
  uint64_t method_mask[2] = {};
};

struct Result {
  int32_t value = 0;  // RegisterReply: agent id (>= 0) or -errno; UnregisterReply: 0 or -errno
};

struct UnregisterAgent {
  uint32_t handle = 0;
  uint32_t agent = 0;
};

// SendMad and RecvMad: this, then `length` MAD bytes. A message longer than
// kFragment (a coalesced RMPP transfer, or a long SA answer an RMPP agent
// sends) goes as consecutive messages on the same connection, each with the
// same envelope but `length` bytes of the message, in order, `total` bytes
// in all.
inline constexpr std::size_t kFragment = 96 * 1024;
struct MadEnvelope {
  uint32_t agent = 0;
  int32_t status = 0;       // RecvMad: 0, or ETIMEDOUT for a request that got no answer
  uint32_t timeout_ms = 0;  // SendMad
  uint32_t retries = 0;     // SendMad
  uint32_t length = 0;      // bytes after this envelope
  uint32_t total = 0;       // bytes of the whole message (== length unless fragmented)
  ib_mad_addr addr{};
  uint64_t stamp = 0;       // SendMad: program_clock_ns() when it was sent (program order)
};

// ListHosts: the fabric's hosts from index `first`, for the embedded
// transport's device list; HostsReply carries up to kHostsPerReply names.
inline constexpr std::size_t kHostsPerReply = 512;
struct ListHosts {
  uint32_t first = 0;
};
struct HostsReply {
  uint32_t total = 0;  // hosts in the fabric
  uint32_t count = 0;  // names in this reply
  char names[kHostsPerReply][kNodeNameSize] = {};
};

struct ErrorBody {
  int32_t status = 0;
  char text[120] = {};
};

// The body of `bytes` as a T if the header says `type` and the sizes fit;
// else nullopt. For MadEnvelope the trailing MAD bytes are checked too.
template <class T>
std::optional<T> body_as(std::span<const uint8_t> bytes, MsgType type) {
  MsgHeader h;
  if (bytes.size() < sizeof h + sizeof(T)) return std::nullopt;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.type != static_cast<uint16_t>(type) || h.length != bytes.size() - sizeof h) return std::nullopt;
  T t;
  std::memcpy(static_cast<void*>(&t), bytes.data() + sizeof h, sizeof t);
  return t;
}

// The message type in `bytes`, or nullopt if it has no whole header.
inline std::optional<MsgType> type_of(std::span<const uint8_t> bytes) {
  MsgHeader h;
  if (bytes.size() < sizeof h) return std::nullopt;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.type < static_cast<uint16_t>(MsgType::Hello) || h.type > static_cast<uint16_t>(MsgType::kLast)) return std::nullopt;
  return static_cast<MsgType>(h.type);
}

}  // namespace ibfab::api
