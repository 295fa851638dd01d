#pragma once
// The connection manager's connection (protocol.h, ConnectionKind::Cm): one
// per process that uses librdmacm, request/reply, one request at a time.
// The engine plays the kernel's part (rdma_cm, ib_sa's multicast module and
// ib_cm's SIDR): it owns the ids, resolves addresses through the fabric's
// address plan (fabric/topology/address_plan.h), asks the SA for paths and
// memberships with MADs from the id's port, and answers SIDR requests.
//
// Event channels: the client makes a socketpair per rdma_event_channel and
// hands the engine its end with CmCreateChannel (SCM_RIGHTS); the engine
// writes one CmEvent per message there, so the client's end is the
// channel's pollable fd. Events of an id go to its channel in the order
// they happen.
//
// Every request is answered by one CmReply: `value` is 0, a handle or a
// count (>= 0), or -errno as the kernel's rdma_ucm would return it;
// CmQueryId and CmInitQpAttr also fill `info`. Unknown handles are -EINVAL
// and the connection stays up; a malformed message closes it. When the
// connection closes (the process exits or is killed) its ids are destroyed
// as rdma_destroy_id would: joins are left at the SA, listens end.
#include <sys/socket.h>

#include <cstdint>

namespace ibfab::api {

inline constexpr std::size_t kCmPrivateData = 216;  // a SIDR REQ's private data, the largest
// What an rdma_cm UD "connect" may carry: a SIDR REQ less rdma_cm's 36-byte
// header (RDMA_MAX_PRIVATE_DATA for PS_UDP).
inline constexpr std::size_t kCmUdPrivateData = 180;

struct CmReply;

// CmCreateChannel: the engine's end of the channel's socket comes with it.
// Value: the channel handle.
struct CmCreateChannel {
  uint32_t reserved = 0;
};

// CmCreateId: value = the id's handle.
struct CmCreateId {
  uint32_t channel = 0;
  uint16_t ps = 0;      // enum rdma_port_space: RDMA_PS_UDP, RDMA_PS_IPOIB or RDMA_PS_IB
  uint8_t qp_type = 0;  // enum ibv_qp_type (IBV_QPT_UD for those)
  uint8_t reserved = 0;
};

// Handle-only requests: CmDestroyId, CmDestroyChannel, CmListen (backlog in
// `arg`), CmResolveRoute (timeout_ms in `arg`), CmQueryId (info about the
// id), CmInitQpAttr (`arg` = the ibv_qp_state wanted; info's qp_* fields),
// CmDisconnect (a DREQ, or the DREP to the peer's DREQ; -EINVAL for an id
// with no connection), CmNotify (`arg` = the ibv_event_type: COMM_EST makes
// a connection whose RTU has not come ESTABLISHED). CmDestroyId's value is how many
// events the engine wrote for the id (read or not); the client counts the
// ones it handed out itself, as the kernel does, and waits for their acks.
struct CmIdRequest {
  uint32_t id = 0;
  uint32_t arg = 0;
};

// CmMigrateId: the id's events go to `channel` from now on; value = the
// events written for it so far. Id handles are never reused.
struct CmMigrateId {
  uint32_t id = 0;
  uint32_t channel = 0;
};

// CmBindAddr / CmResolveAddr. A family of 0 means "not given".
struct CmAddrRequest {
  uint32_t id = 0;
  uint32_t timeout_ms = 0;  // CmResolveAddr
  sockaddr_storage src{};   // CmBindAddr: the address; CmResolveAddr: the optional source
  sockaddr_storage dst{};   // CmResolveAddr
};

// CmSetIbPath (rdma_set_option RDMA_OPTION_IB_PATH): the id's route is
// this PathRecord, as the SA would have answered it (IBTA wire layout, as
// struct ibv_path_record holds it), in place of rdma_resolve_route; the
// id must have its address resolved (else -EINVAL), and
// RDMA_CM_EVENT_ROUTE_RESOLVED follows.
struct CmSetIbPath {
  uint32_t id = 0;
  uint32_t reserved = 0;
  uint8_t path_record[64] = {};
};

// A connected id's parameters (struct rdma_conn_param as ucma's ABI
// carries it): what the REQ or REP offers, or, in an event, what the peer's
// offered, seen from this side (CONNECT_REQUEST: the requester's initiator
// depth as responder_resources and its responder resources as
// initiator_depth, as the kernel reports them).
struct CmConnParam {
  uint8_t responder_resources = 0;
  uint8_t initiator_depth = 0;
  uint8_t flow_control = 0;
  uint8_t retry_count = 0;      // CmConnect: 0..7
  uint8_t rnr_retry_count = 0;  // 0..7; 7 = retry for ever
  uint8_t srq = 0;
  uint8_t reserved[2] = {};
};

// CmConnect: a UD id sends a SIDR REQ, a connected one (RC, UC) a REQ with
// `param`. CmAccept: a UD id answers with a SIDR REP (status 0, the QP
// number and Q_Key); a connected id that holds a REQ with a REP (the QP
// number and `param`), one whose REP has come (CONNECT_RESPONSE) with the
// RTU (rdma_establish, or librdmacm once the QP is ready). CmReject: SIDR
// REP status Rejected, or REJ "consumer reject", with the private data.
struct CmConnect {
  uint32_t id = 0;
  uint32_t qp_num = 0;
  uint32_t qkey = 0;
  uint32_t private_data_len = 0;
  uint8_t private_data[kCmPrivateData] = {};
  CmConnParam param{};
};

// CmJoin: `uid` names the join in its events (the client's own token).
struct CmJoin {
  uint32_t id = 0;
  uint32_t join_flags = 0;  // enum rdma_cm_mc_join_flags
  uint64_t uid = 0;
  sockaddr_storage addr{};
};

// CmLeave: value = the events written for the join (so that the client
// can drop those it has not read yet); -EADDRNOTAVAIL for a join the id
// does not have.
struct CmLeave {
  uint32_t id = 0;
  uint32_t reserved = 0;
  uint64_t uid = 0;
};

// An address handle's attributes, as struct ibv_ah_attr holds them.
struct CmAhAttr {
  uint8_t dgid[16] = {};
  uint32_t flow_label = 0;
  uint8_t sgid_index = 0;
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
  uint8_t is_global = 0;
  uint16_t dlid = 0;
  uint8_t sl = 0;
  uint8_t src_path_bits = 0;
  uint8_t static_rate = 0;
  uint8_t port_num = 0;
  uint8_t reserved[2] = {};
};

// A PathRecord's fields as struct ibv_sa_path_rec holds them (host order
// here; the client converts).
struct CmPath {
  uint8_t dgid[16] = {};
  uint8_t sgid[16] = {};
  uint16_t dlid = 0;
  uint16_t slid = 0;
  uint32_t flow_label = 0;
  uint16_t pkey = 0;
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
  uint8_t sl = 0;
  uint8_t mtu = 0;
  uint8_t rate = 0;
  uint8_t packet_life_time = 0;
  uint8_t numb_path = 0;
  uint8_t reversible = 0;
  uint8_t reserved[2] = {};
};

// What an id is bound to, as rdma_cm_id.route shows it.
struct CmIdInfo {
  char node[64] = {};        // the bound HCA's host ("" while unbound)
  uint64_t node_guid = 0;    // host order
  uint8_t port = 0;
  uint8_t num_paths = 0;
  uint16_t pkey = 0;
  uint16_t pkey_index = 0;
  uint16_t ps = 0;
  uint8_t sgid[16] = {};
  uint8_t dgid[16] = {};
  sockaddr_storage src{};
  sockaddr_storage dst{};
  CmPath path{};
  // CmInitQpAttr: what ibv_modify_qp needs for the state asked.
  uint32_t qp_attr_mask = 0;  // enum ibv_qp_attr_mask
  uint32_t qkey = 0;
  uint32_t sq_psn = 0;
  uint8_t qp_state = 0;
  uint8_t path_mtu = 0;  // enum ibv_mtu
  uint8_t max_dest_rd_atomic = 0;
  uint8_t min_rnr_timer = 0;
  uint32_t qp_access_flags = 0;  // enum ibv_access_flags
  uint32_t dest_qp_num = 0;
  uint32_t rq_psn = 0;
  uint8_t timeout = 0;
  uint8_t retry_cnt = 0;
  uint8_t rnr_retry = 0;
  uint8_t max_rd_atomic = 0;
  CmAhAttr ah{};
};

// CmQueryAddress (a CmIdRequest: `id` unused, `arg` = a port of the
// connection's own host): the IPoIB addresses of that port as the
// fabric's address plan gives them, and whether the host's multicast route
// leaves by it, in CmReply::address. Value 0, or -ENODEV (no such port, or
// a connection that names no host).
struct CmPortAddress {
  uint32_t ipv4 = 0;  // host order; 0: the port has no IPv4 address
  uint8_t prefix4 = 0;
  uint8_t prefix6 = 0;
  uint8_t multicast_route = 0;  // 1: 224.0.0.0/4 and ff00::/8 leave by this port
  uint8_t reserved = 0;
  uint8_t ipv6[16] = {};
};

// CmQueryListener (a CmIdRequest: `id` unused, `arg` = a port number):
// value 1 when an rdma_cm id of the connection's own host listens on that
// port, in any port space, else 0; -ENODEV for a connection that names no
// host. For `ibfab launch --ready-port`: what the host's kernel would show
// of its listeners.

struct CmReply {
  int64_t value = 0;
  CmIdInfo info{};
  CmPortAddress address{};  // CmQueryAddress
};

// What the engine writes on a channel's socket.
struct CmEvent {
  uint32_t event = 0;      // enum rdma_cm_event_type
  int32_t status = 0;      // 0 or -errno (UNREACHABLE after a SIDR REP: its status)
  uint32_t id = 0;         // the id's handle; CONNECT_REQUEST: the new id's
  uint32_t listen_id = 0;  // CONNECT_REQUEST: the listening id
  uint64_t uid = 0;        // MULTICAST_JOIN/ERROR: the join's uid
  // UD parameters (ESTABLISHED, MULTICAST_JOIN, CONNECT_REQUEST).
  uint32_t qp_num = 0;
  uint32_t qkey = 0;
  CmAhAttr ah{};
  uint16_t mlid = 0;       // MULTICAST_JOIN: the group's MLID and MGID
  uint8_t mgid[16] = {};
  uint8_t reserved[2] = {};
  uint32_t private_data_len = 0;
  uint8_t private_data[kCmPrivateData] = {};
  // Connected ids (CONNECT_REQUEST, CONNECT_RESPONSE): the peer's offer;
  // qp_num above is the peer's QP.
  CmConnParam param{};
};

}  // namespace ibfab::api
