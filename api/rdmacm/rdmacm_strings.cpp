// rdma_event_str(3): the name of a connection manager event, which is the
// enumerator's own spelling (RDMA_CM_EVENT_ADDR_RESOLVED, ...), as rdma-core
// 44 returns it; "UNKNOWN EVENT" for a value outside enum rdma_cm_event_type.
// The strings are static; the call never fails.
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <iterator>

#include "api/c_enum_argument.h"
#include "api/rdmacm/export.h"

namespace ibfab::rdmacm {
namespace {

// kEventNames[i] is the name of event value i (the enum starts at 0).
constexpr const char* kEventNames[] = {
    "RDMA_CM_EVENT_ADDR_RESOLVED",  "RDMA_CM_EVENT_ADDR_ERROR",      "RDMA_CM_EVENT_ROUTE_RESOLVED",
    "RDMA_CM_EVENT_ROUTE_ERROR",    "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
    "RDMA_CM_EVENT_CONNECT_ERROR",  "RDMA_CM_EVENT_UNREACHABLE",     "RDMA_CM_EVENT_REJECTED",
    "RDMA_CM_EVENT_ESTABLISHED",    "RDMA_CM_EVENT_DISCONNECTED",    "RDMA_CM_EVENT_DEVICE_REMOVAL",
    "RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR", "RDMA_CM_EVENT_ADDR_CHANGE",
    "RDMA_CM_EVENT_TIMEWAIT_EXIT",
};
static_assert(std::size(kEventNames) == RDMA_CM_EVENT_TIMEWAIT_EXIT + 1);

}  // namespace
}  // namespace ibfab::rdmacm

IBFAB_RDMACM_EXPORT IBFAB_C_ENUM_ARGUMENT const char* rdma_event_str(rdma_cm_event_type event) {
  const auto& names = ibfab::rdmacm::kEventNames;
  const long value = static_cast<long>(event);
  if (value < 0 || value >= static_cast<long>(std::size(names))) return "UNKNOWN EVENT";
  return names[static_cast<std::size_t>(value)];
}
