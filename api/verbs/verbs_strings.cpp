// Names of node types, port states, async event types and work completion
// statuses (verbs.h), word for word as rdma-core 44 prints them: programs
// show them in logs and users grep for them ("Work Request Flushed Error" is
// capitalised, the others are not). Every function returns a static string,
// and "unknown" for a value outside its enum; none of them fails.
#include <infiniband/verbs.h>

#include <cstddef>
#include <iterator>
#include <span>

#include "api/c_enum_argument.h"
#include "api/verbs/export.h"

namespace ibfab::verbs {
namespace {

// names[i] is the name of enum value first + i.
struct Names {
  int first;
  std::span<const char* const> names;

  const char* operator()(int value) const {
    const long index = static_cast<long>(value) - first;
    if (index < 0 || index >= static_cast<long>(names.size())) return "unknown";
    return names[static_cast<std::size_t>(index)];
  }
};

// From IBV_NODE_CA (1) on; IBV_NODE_UNKNOWN (-1) and 0 are "unknown".
constexpr const char* kNodeTypes[] = {
    "InfiniBand channel adapter",  // IBV_NODE_CA
    "InfiniBand switch",           // IBV_NODE_SWITCH
    "InfiniBand router",           // IBV_NODE_ROUTER
    "iWARP NIC",                   // IBV_NODE_RNIC
    "usNIC",                       // IBV_NODE_USNIC
    "usNIC UDP",                   // IBV_NODE_USNIC_UDP
    "unspecified",                 // IBV_NODE_UNSPECIFIED
};

constexpr const char* kPortStates[] = {
    "no state change (NOP)",  // IBV_PORT_NOP
    "down",                   // IBV_PORT_DOWN
    "init",                   // IBV_PORT_INIT
    "armed",                  // IBV_PORT_ARMED
    "active",                 // IBV_PORT_ACTIVE
    "active defer",           // IBV_PORT_ACTIVE_DEFER
};

constexpr const char* kEventTypes[] = {
    "CQ error",                                 // IBV_EVENT_CQ_ERR
    "local work queue catastrophic error",      // IBV_EVENT_QP_FATAL
    "invalid request local work queue error",   // IBV_EVENT_QP_REQ_ERR
    "local access violation work queue error",  // IBV_EVENT_QP_ACCESS_ERR
    "communication established",                // IBV_EVENT_COMM_EST
    "send queue drained",                       // IBV_EVENT_SQ_DRAINED
    "path migrated",                            // IBV_EVENT_PATH_MIG
    "path migration request error",             // IBV_EVENT_PATH_MIG_ERR
    "local catastrophic error",                 // IBV_EVENT_DEVICE_FATAL
    "port active",                              // IBV_EVENT_PORT_ACTIVE
    "port error",                               // IBV_EVENT_PORT_ERR
    "LID change",                               // IBV_EVENT_LID_CHANGE
    "P_Key change",                             // IBV_EVENT_PKEY_CHANGE
    "SM change",                                // IBV_EVENT_SM_CHANGE
    "SRQ catastrophic error",                   // IBV_EVENT_SRQ_ERR
    "SRQ limit reached",                        // IBV_EVENT_SRQ_LIMIT_REACHED
    "last WQE reached",                         // IBV_EVENT_QP_LAST_WQE_REACHED
    "client reregistration",                    // IBV_EVENT_CLIENT_REREGISTER
    "GID table change",                         // IBV_EVENT_GID_CHANGE
    "WQ fatal",                                 // IBV_EVENT_WQ_FATAL
};

constexpr const char* kWcStatuses[] = {
    "success",                            // IBV_WC_SUCCESS
    "local length error",                 // IBV_WC_LOC_LEN_ERR
    "local QP operation error",           // IBV_WC_LOC_QP_OP_ERR
    "local EE context operation error",   // IBV_WC_LOC_EEC_OP_ERR
    "local protection error",             // IBV_WC_LOC_PROT_ERR
    "Work Request Flushed Error",         // IBV_WC_WR_FLUSH_ERR
    "memory management operation error",  // IBV_WC_MW_BIND_ERR
    "bad response error",                 // IBV_WC_BAD_RESP_ERR
    "local access error",                 // IBV_WC_LOC_ACCESS_ERR
    "remote invalid request error",       // IBV_WC_REM_INV_REQ_ERR
    "remote access error",                // IBV_WC_REM_ACCESS_ERR
    "remote operation error",             // IBV_WC_REM_OP_ERR
    "transport retry counter exceeded",   // IBV_WC_RETRY_EXC_ERR
    "RNR retry counter exceeded",         // IBV_WC_RNR_RETRY_EXC_ERR
    "local RDD violation error",          // IBV_WC_LOC_RDD_VIOL_ERR
    "remote invalid RD request",          // IBV_WC_REM_INV_RD_REQ_ERR
    "aborted error",                      // IBV_WC_REM_ABORT_ERR
    "invalid EE context number",          // IBV_WC_INV_EECN_ERR
    "invalid EE context state",           // IBV_WC_INV_EEC_STATE_ERR
    "fatal error",                        // IBV_WC_FATAL_ERR
    "response timeout error",             // IBV_WC_RESP_TIMEOUT_ERR
    "general error",                      // IBV_WC_GENERAL_ERR
    "TM error",                           // IBV_WC_TM_ERR
    "TM software rendezvous",             // IBV_WC_TM_RNDV_INCOMPLETE
};

// Each table must end at the last value its enum has in verbs.h.
static_assert(IBV_NODE_CA + std::size(kNodeTypes) - 1 == IBV_NODE_UNSPECIFIED);
static_assert(std::size(kPortStates) - 1 == IBV_PORT_ACTIVE_DEFER);
static_assert(std::size(kEventTypes) - 1 == IBV_EVENT_WQ_FATAL);
static_assert(std::size(kWcStatuses) - 1 == IBV_WC_TM_RNDV_INCOMPLETE);

}  // namespace
}  // namespace ibfab::verbs

using ibfab::verbs::Names;

IBFAB_VERBS_EXPORT IBFAB_C_ENUM_ARGUMENT const char* ibv_node_type_str(ibv_node_type node_type) {
  return Names{IBV_NODE_CA, ibfab::verbs::kNodeTypes}(node_type);
}

IBFAB_VERBS_EXPORT IBFAB_C_ENUM_ARGUMENT const char* ibv_port_state_str(ibv_port_state port_state) {
  return Names{IBV_PORT_NOP, ibfab::verbs::kPortStates}(port_state);
}

IBFAB_VERBS_EXPORT IBFAB_C_ENUM_ARGUMENT const char* ibv_event_type_str(ibv_event_type event) {
  return Names{IBV_EVENT_CQ_ERR, ibfab::verbs::kEventTypes}(event);
}

IBFAB_VERBS_EXPORT IBFAB_C_ENUM_ARGUMENT const char* ibv_wc_status_str(ibv_wc_status status) {
  return Names{IBV_WC_SUCCESS, ibfab::verbs::kWcStatuses}(status);
}
