#pragma once
// InformInfo subscriptions (SA-MULTICAST.md section 6, after OpenSM's
// osm_sa_informinfo.c and osm_inform.c): Set subscribes or unsubscribes,
// and a Notice issued by the SM is matched against every subscription.
#include <cstdint>
#include <optional>
#include <vector>

#include "fabric/mad/notice.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/inform_info_record.h"
#include "fabric/model/mad_agent.h"
#include "sm/subnet.h"

namespace ibfab::sm {

struct Subscription {
  mad::InformInfo info;     // as stored: QPN = the Set's source QP
  fabric::MadAddress to;    // where Reports go (the Set's source)
  uint64_t port_guid = 0;   // the subscriber's port
};

class InformTable {
 public:
  // A Set from `from` (port `requester` of `subnet`). Status 0x0200 for a
  // Subscribe or IsGeneric other than 0/1, an unsubscribe that matches
  // nothing, or traps 256..259 without a trusted SM_Key. On success
  // `stored` is the InformInfo the response carries. Subscribing twice to
  // the same thing keeps one subscription.
  uint16_t set(const Subnet& subnet, uint32_t requester, const fabric::MadAddress& from,
               const mad::InformInfo& info, bool trusted, mad::InformInfo& stored);

  // Subscriptions a notice from the SM goes to: GID equal to the issuer
  // GID (or, with a zero GID, the issuer LID within LIDRange, 0xFFFF =
  // all), IsGeneric equal, Type, TrapNumber and ProducerType equal or
  // wildcards; with `group_pkey` (traps 66/67) the subscriber's port must
  // hold that P_Key.
  std::vector<const Subscription*> match(const Subnet& subnet, const mad::Notice& notice,
                                         std::optional<uint16_t> group_pkey) const;

  // InformInfoRecords (OpenSM 3.3.23 osm_sa_informinfo.c), one per
  // subscription in the order made: SubscriberGID (the subscriber port's
  // GID) and Enum (always 0) matched when masked; the subscriber's port
  // must share a P_Key with the requester's; QPN is 0 unless `trusted`.
  void records(const Subnet& subnet, uint32_t requester, const mad::InformInfoRecord& req,
               uint64_t mask, bool trusted, std::vector<mad::InformInfoRecord>& out) const;

  const std::vector<Subscription>& subscriptions() const { return subs_; }
  // Drops every subscription of a port that left the subnet.
  void drop_port(uint64_t port_guid);

 private:
  std::vector<Subscription> subs_;
};

}  // namespace ibfab::sm
