#pragma once
// A scenario as written in a YAML file: what fabric to build, what happens
// to it and when, and how the run is checked. Pure data; see
// scenario_loader.h for the file format and scenario_runner.h for the run.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabric/model/link_ref.h"
#include "sim/scheduler.h"
#include "sim/time.h"
#include "sm/partitions/partition_config.h"

namespace ibfab::scenario {

// A link named by one of its ends, "S1[3]", or by both, "S1[3]-H1[1]".
using fabric::LinkRef;

// A multicast request a host makes of the SA, traffic it sends, or a
// group its QP is attached to or detached from.
struct McastSpec {
  std::string mgid;            // "0" asks the SA to assign one; "" for a unicast send
  std::string to;              // send: the receiving host of a unicast UD send ("" for multicast)
  bool grh = false;            // a unicast send's AH has a GRH (multicast always has one)
  uint8_t join_state = 1;      // JoinState bits: 1 full, 2 non, 4 send-only non, 8 send-only full
  uint32_t qkey = 0x11111111;  // perftest's default
  uint16_t pkey = 0xFFFF;
  std::optional<uint16_t> expect_status;  // fail the run unless the SA answers this
  std::optional<uint64_t> mask;           // component mask (default: 0x130C7 join, 0x10003 leave)
  uint32_t count = 1;          // send: packets
  uint32_t size = 64;          // send: payload bytes
};

// A check at a point in time.
struct Expectation {
  std::string group;                  // MGID
  std::optional<bool> exists;
  std::optional<uint32_t> members;
  std::string node;                   // with `received`
  std::optional<uint64_t> received;   // messages node's QP has accepted so far (multicast and unicast)
  std::optional<uint16_t> trap;       // with `reports`: Reports of this trap the node received
  std::optional<uint64_t> reports;
};

// A reliable connection (RC, through rdma_cm) between a host and another,
// and the work requests posted on it.
struct ConnSpec {
  // The work a `post` asks of the connection: ibv_post_send opcodes.
  enum class Op : uint8_t { Send, SendImm, Write, WriteImm, Read };
  std::string to;      // the other end (connect: the host that listens and accepts)
  Op op = Op::Send;
  uint32_t count = 1;  // messages, each its own work request
  uint32_t size = 64;  // bytes each
  uint32_t imm = 0;    // SendImm, WriteImm: message i carries immediate data imm + i
  // Connect: false when nobody listens at `to`'s address and port: the
  // request is rejected (REJ "invalid service ID") and no connection is made.
  bool listen = true;
};

// The states a host's UD QP can be moved to (ibv_modify_qp).
enum class QpStateName : uint8_t { Reset, Init, Rtr, Rts, Err };

struct Action {
  enum class Kind {
    LinkDown, LinkUp, NodeDown, NodeUp, LinkLoss, Probe, Join, Leave, Send, Expect, SmKill, Subscribe,
    Attach,    // ibv_attach_mcast of the host's QP to a group (mcast.mgid)
    Detach,    // ibv_detach_mcast
    QpState,   // ibv_modify_qp of the host's QP to qp_state
    CreateQp,  // the host's QP destroyed and made again, with block_self_mcast_lb
    Connect,     // an RC connection from node to conn.to (rdma_connect; conn.to accepts)
    Post,        // conn.count work requests of conn.op posted by node on its connection with conn.to
    Disconnect,  // rdma_disconnect by node of its connection with conn.to
  };
  Kind kind;
  sim::Time at;
  int line = 0;        // in the scenario file
  LinkRef link;        // LinkDown, LinkUp, LinkLoss
  std::string node;    // NodeDown, NodeUp, Probe (the probing host), SmKill (the SM's host)
  double probability = 0;  // LinkLoss
  McastSpec mcast;         // Join, Leave, Send, Attach, Detach (node = the host)
  QpStateName qp_state = QpStateName::Rts;  // QpState
  bool block_self_mcast_lb = false;         // CreateQp: IBV_QP_CREATE_BLOCK_SELF_MCAST_LB
  ConnSpec conn;                            // Connect, Post, Disconnect (node = the host acting)
  uint16_t trap = 0;       // Subscribe
  Expectation expect;      // Expect
  // Repeated: applied at `at`, then every `every` while the time is at
  // most `until` (zero `every`: once).
  sim::Time every, until;
};

// A Subnet Manager placed on a host port.
struct SmSpec {
  std::string node;
  uint8_t port = 1;
  std::string routing = "minhop";
  std::string mcast_root = "min-max-hop";      // multicast root selection policy
  std::string mlid_allocator = "lowest-free";
  std::string admission = "unlimited";
  sim::Time mcast_batch;  // MFT changes programmed in batches this far apart
  uint8_t priority = 0;
  // Its partitions (key `partitions`: a partitions.conf path, relative to
  // the scenario, or the text itself when it holds a ';'); unset: OpenSM's
  // default partition.
  std::optional<sm::partitions::PartitionConfig> partitions;
  sim::Time at;  // when it starts its first sweep
  int line = 0;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::string topology;     // a topology spec (net-file paths are relative to the file)
  uint64_t seed = 1;
  std::string scheduler = sim::kDefaultScheduler;  // sim::make_scheduler name
  sim::Time duration = sim::Time::ms(1);  // simulated time to run
  std::vector<SmSpec> sms;
  std::vector<Action> actions;            // sorted by time, then file order
  std::optional<std::string> fingerprint;  // golden run digest, 16 hex digits
  int fingerprint_line = 0;
};

const char* to_string(Action::Kind k);
const char* to_string(QpStateName s);  // "reset", "init", "rtr", "rts", "err"
const char* to_string(ConnSpec::Op op);  // "send", "send-imm", "write", "write-imm", "read"

}  // namespace ibfab::scenario
