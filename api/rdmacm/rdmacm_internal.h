#pragma once
// librdmacm's objects as ibfab holds them. Each embeds the public struct the
// application sees as its first member and is recovered from it by a cast,
// as rdma-core's cma.c does with container_of. The engine plays the
// kernel's rdma_ucm (api/client/cm_protocol.h): ids and joins live there,
// named by handles and uids; their events arrive on the channel's socket.
//
// Event accounting, as the kernel's rdma_ucm keeps it: an event counts for
// its id (and its join) once rdma_get_cm_event hands it out ("delivered");
// rdma_destroy_id, rdma_leave_multicast and rdma_migrate_id wait until every
// delivered event is acked. Events still unread when an id or a join goes
// are dropped when read, as the kernel drops them at destroy time.
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "api/client/cm_protocol.h"
#include "api/client/protocol.h"

namespace ibfab::rdmacm {

// -1 with errno = e, as rdma-core's ERR() fails a call.
inline int fail(int e) {
  errno = e;
  return -1;
}

// A reply value as a call's result: 0 when it is >= 0, else -1 with errno.
inline int status_of(int64_t value) { return value < 0 ? fail(static_cast<int>(-value)) : 0; }

// An address handle's attributes as the engine gives them.
inline void copy_ah(ibv_ah_attr& a, const api::CmAhAttr& s) {
  std::memcpy(a.grh.dgid.raw, s.dgid, sizeof s.dgid);
  a.grh.flow_label = s.flow_label;
  a.grh.sgid_index = s.sgid_index;
  a.grh.hop_limit = s.hop_limit;
  a.grh.traffic_class = s.traffic_class;
  a.dlid = s.dlid;
  a.sl = s.sl;
  a.src_path_bits = s.src_path_bits;
  a.static_rate = s.static_rate;
  a.is_global = s.is_global;
  a.port_num = s.port_num;
}

// A request over the process's CM connection (-ENODEV when there is none).
api::CmReply request(api::MsgType type, const void* body, std::size_t size, std::span<const int> fds = {});

// rdma-core's ucma_init: 0 once the engine is reachable and has devices,
// else -1 with errno ENODEV (no kernel rdma_cm).
int init();

// The size of an address of a family the connection manager knows (AF_INET,
// AF_INET6, AF_IB); 0 for NULL or any other family.
socklen_t addr_len(const sockaddr* addr);

// --- Devices (rdmacm_devices.cpp) ---------------------------------------------

// An RDMA device as rdma-core's cma_device: opened on first use, with a PD
// (and, once an XRC id needs one, an XRC domain) that ids bound to it share
// while any exists.
struct CmDevice {
  ibv_device* dev = nullptr;
  __be64 guid = 0;
  ibv_context* verbs = nullptr;
  ibv_pd* pd = nullptr;
  ibv_xrcd* xrcd = nullptr;
  int refcnt = 0;     // ids bound to it and rdma_get_devices lists naming it
  bool dead = false;  // could not be opened
  uint8_t max_initiator_depth = 0;
  uint8_t max_responder_resources = 0;
};

// The device with node GUID `guid` (network order), opened, its PD made,
// its count raised; nullptr with errno when there is none.
CmDevice* acquire_device(__be64 guid);
// Lowers the count; the PD and the XRC domain go with the last id.
void release_device(CmDevice* device);
// rdma-core's ucma_get_xrcd: the device's XRC domain of its own (fd -1,
// O_CREAT), opened on first use; nullptr with errno.
ibv_xrcd* device_xrcd(CmDevice* device);

// --- Event channels (rdmacm_channel.cpp) ---------------------------------------

struct Channel {
  rdma_event_channel ch{};  // first: ch.fd is the client's end of the socket
  uint32_t handle = 0;      // the engine's name for it
  int engine_end = -1;      // a copy of the engine's end: what is sent there is read on ch.fd
  static Channel* from(rdma_event_channel* c) { return reinterpret_cast<Channel*>(c); }
};

// A channel made at the engine; nullptr with errno (ENODEV: no engine).
Channel* create_channel();
void destroy_channel(Channel* channel);
// The events queued on the channel now, read without waiting.
std::vector<api::CmEvent> drain(Channel& channel);
// Queues `event` on the channel again, after what is there.
void requeue(Channel& channel, const api::CmEvent& event);

// --- Ids and joins ---------------------------------------------------------------

// Where an id is, as far as the options and the calls that need no engine
// ask (the engine keeps the real state).
enum class State : uint8_t { Idle, Bound, Resolving, Listen, Connect };

struct Id;

struct Join {
  Id* owner = nullptr;
  void* context = nullptr;
  uint16_t join_flags = 0;
  sockaddr_storage addr{};
  ibv_gid mgid{};
  uint16_t mlid = 0;
  // Guarded by owner->mu.
  int delivered = 0;
  int acked = 0;
  // Guarded by the registry (rdmacm_mcast.cpp), once the join is left: the
  // events the engine gave it that nobody was handed (the join's memory,
  // whose address is its uid, stays until they have been read).
  int64_t dropped = 0;
  int64_t owed = -1;  // -1: not known yet
  uint64_t uid() const { return reinterpret_cast<uintptr_t>(this); }
};

struct Id {
  rdma_cm_id id{};  // first
  uint32_t handle = 0;
  CmDevice* device = nullptr;
  bool sync = false;  // made with no channel: id.channel is its own
  State state = State::Idle;
  uint8_t tos = 0;
  mutable std::mutex mu;  // guards the counts below and `joins`
  std::condition_variable acked_cv;
  int delivered = 0;
  int acked = 0;
  std::vector<Join*> joins;
  std::unique_ptr<ibv_qp_init_attr> qp_init_attr;  // rdma_create_ep, passive: each request's QP
  std::vector<uint8_t> connect_data;               // rdma_create_ep: ai_connect, sent first
  ibv_ece local_ece{};
  ibv_ece remote_ece{};
  // A connected id's offer (rdma-core's id_priv fields): set by
  // rdma_connect and rdma_accept, and on a request's new id from the
  // CONNECT_REQUEST (the requester's, seen from this side).
  uint8_t initiator_depth = 0;
  uint8_t responder_resources = 0;
  std::optional<uint8_t> ack_timeout;  // RDMA_OPTION_ID_ACK_TIMEOUT: the QP's timeout, in place of the path's
  static Id* from(rdma_cm_id* i) { return reinterpret_cast<Id*>(i); }
};

// A new id on `channel` (its own channel when NULL), created at the engine
// and registered; nullptr with errno.
Id* create_id(rdma_event_channel* channel, void* context, rdma_port_space ps, ibv_qp_type qp_type);
// An id for the engine's `handle` (a connection request's): registered,
// on `like`'s channel, context, port space and QP type.
Id* adopt_id(uint32_t handle, Id& like);
// Frees what the client holds for an id the engine no longer has.
void free_id(Id* id);
// Moves `id`'s events to `target` (rdma_migrate_id's work; the id's events
// still unread on its old channel go along). 0 or -1 with errno.
int migrate(Id& id, Channel* target, bool sync);

// Under the registry: the live id `handle` with its delivered count raised,
// or nullptr (an id destroyed, its event dropped).
Id* claim_id(uint32_t handle);
// The same for a join, by uid (the owner's count raised too); a left
// join's event is dropped.
Join* claim_join(uint64_t uid);
// Drops the joins of an id being destroyed: the engine leaves them.
void retire_joins(Id& id);
// A MULTICAST_JOIN's work (rdma-core's ucma_process_join): keeps the
// group's MGID and MLID and attaches id.qp unless the join is send-only.
// 0 or -1 with errno.
int process_join(Join& join, rdma_cm_id& id, const api::CmEvent& event);
// Whether the message on a channel is for `id` (or one of its joins).
bool event_is_for(const Id& id, const api::CmEvent& e);

// Marks a handed-out event acked (wakes whoever waits for it).
void complete_event(Id& owner, Join* join);

// --- Addresses and routes (rdmacm_addr.cpp) ---------------------------------------

// Asks the engine what `id` is bound to and fills id.route, id.verbs,
// id.pd and id.port_num (the device the first time), as ucma_query_addr and
// ucma_query_gid do; with `path`, id.route.path_rec too (ucma_query_path).
// 0 or -1 with errno.
int query(Id& id, bool path);

// rdma_set_option(RDMA_OPTION_IB, RDMA_OPTION_IB_PATH): the primary,
// bidirectional GMP path among `optlen` bytes of struct ibv_path_data
// becomes the id's route, as the kernel's ucma_set_ib_path takes it
// (EINVAL: optlen not a multiple of the struct, no such path, or the
// address not resolved); RDMA_CM_EVENT_ROUTE_RESOLVED follows. 0 or -1
// with errno.
int set_ib_path(Id& id, const void* optval, size_t optlen);

// --- Events (rdmacm_events.cpp) -------------------------------------------------------

struct Event {
  rdma_cm_event event{};  // first
  uint8_t private_data[api::kCmPrivateData] = {};
  Id* owner = nullptr;  // whose count its ack completes (a request's: the listener)
  Join* join = nullptr;
  static Event* from(rdma_cm_event* e) { return reinterpret_cast<Event*>(e); }
};

// rdma-core's ucma_complete: on an id with its own channel, waits for the
// call's event and turns a failure into -1 with errno; else 0.
int complete(Id& id);

// --- Queue pairs (rdmacm_qp.cpp) -------------------------------------------------------

// Moves id.qp (if any) to the error state: 0 or -1 with errno.
int qp_to_error(rdma_cm_id& id);
// rdma-core's ucma_modify_qp_rtr and ucma_modify_qp_rts: id.qp (if any)
// through INIT to RTR, or to RTS, with rdma_init_qp_attr's attributes,
// `depth` (max_dest_rd_atomic, max_rd_atomic) replacing the engine's unless
// it is 0xFF (RDMA_MAX_RESP_RES, RDMA_MAX_INIT_DEPTH). 0 or -1 with errno.
int qp_to_rtr(rdma_cm_id& id, uint8_t depth);
int qp_to_rts(rdma_cm_id& id, uint8_t depth);

}  // namespace ibfab::rdmacm
