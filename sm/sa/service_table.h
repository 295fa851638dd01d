#pragma once
// ServiceRecord registrations (OpenSM 3.3.23 osm_sa_service_record.c and
// osm_service.c), as a pure table: the SA hands it each request with the
// current simulated time.
//
// - A record is identified (its RID) by ServiceID, ServiceGID and
//   ServiceP_Key, as sent. Newest registrations come first.
// - Set: ServiceID and ServiceGID must be masked (else 0x0200); with
//   ServiceP_Key masked the requester must hold it, and so must the port of
//   a unicast ServiceGID (no such port: 0x0200). An existing RID is
//   replaced. ServiceLease unmasked is infinite (0xFFFFFFFF); otherwise the
//   record goes ServiceLease seconds after this Set. The answer is the
//   record, with ServiceP_Key 0xFFFF when it was not masked.
// - Delete: the same P_Key checks; the record with the request's RID goes
//   (none: 0x0300); the answer is the record deleted.
// - Get/GetTable: records whose masked fields (ServiceID, GID, P_Key, Key,
//   Name, each ServiceData element) equal the request's, and whose valid
//   ServiceP_Key the requester holds.
// - Answers to a request with SM_Key 0 carry ServiceKey 0.
#include <cstdint>
#include <vector>

#include "fabric/mad/sa/service_record.h"
#include "sim/time.h"
#include "sm/subnet.h"

namespace ibfab::sm {

class ServiceTable {
 public:
  // `requester` indexes subnet.ports. On success `answer` is the record the
  // response carries (before the ServiceKey rule, which the caller applies).
  uint16_t set(const Subnet& subnet, uint32_t requester, const mad::ServiceRecord& rec,
               uint64_t mask, sim::Time now, mad::ServiceRecord& answer);
  uint16_t remove(const Subnet& subnet, uint32_t requester, const mad::ServiceRecord& rec,
                  uint64_t mask, sim::Time now, mad::ServiceRecord& answer);
  void get(const Subnet& subnet, uint32_t requester, const mad::ServiceRecord& req, uint64_t mask,
           sim::Time now, std::vector<mad::ServiceRecord>& out);

  // Records still registered at `now` (expired leases dropped).
  std::size_t size(sim::Time now);

 private:
  struct Entry {
    mad::ServiceRecord rec;
    sim::Time expires;  // Time::max() for an infinite lease
  };
  void expire(sim::Time now);
  bool valid_request(const Subnet& subnet, uint32_t requester, const mad::ServiceRecord& rec,
                     uint64_t mask) const;
  std::vector<Entry> entries_;  // newest first
};

}  // namespace ibfab::sm
