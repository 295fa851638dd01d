#pragma once
// The SA's multicast group table and the MCMemberRecord rules of
// /work/shared/reference/SA-MULTICAST.md section 3 (OpenSM's
// osm_sa_mcmember_record.c and osm_multicast.c behaviour), as a
// synchronous API with no MADs: join (Set), leave (Delete) and get
// (Get/GetTable). Every call either succeeds or leaves the table exactly
// as it was (a group created by a failing join is rolled back).
//
// Members are end ports of the Subnet, named by port GUID; the requester
// is a Subnet::ports index (the port the request came from). MLIDs,
// admission and member lists go through McastRouting.
//
// Choices where the rulebook leaves room, or where OpenSM has a bug:
// - Leave (3.2): by default a member is kept while it still holds Full or
//   SendOnlyFull, and full_members drops exactly when a member loses its
//   last Full/SendOnlyFull bit, so join 0x9 then leave 0x1 keeps the
//   member as 0x8 and the group alive. reproduce_opensm_leave_leak = true
//   gives OpenSM's behaviour (linux-rdma/opensm#43): the keep test looks
//   at 0x1 only, the member is removed, full_members stays at 1 and the
//   group and its MLID leak.
// - Admission refused by McastRouting::admit -> 0x0100 NO_RESOURCES (the
//   fabric cannot take the member: a resource answer, not a malformed
//   request; 0x0700 DENIED would tell the client its request is not
//   allowed at all).
// - The group's Scope field is the creating request's, as OpenSM keeps it
//   (checked against OpenSM by tests/tools_real/sa_diff.py); an SA-assigned
//   MGID's scope nibble is the Scope asked for (mask bit set), else 2.
// - consolidate_ipv6_snm_req is not implemented: every group gets its own
//   MLID, so an MLID carries one group.
// - PortGIDs with the link-local prefix fe80::/64 are accepted as well as
//   the subnet prefix (OpenSM 3.3.24+), and echoed back as sent.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/wire/gid.h"
#include "sm/sa/mcast_routing.h"
#include "sm/subnet.h"

namespace ibfab::sm {

struct McastOptions {
  // OpenSM's ipoib_mcgroup_creation_validation (3.1 rule 8).
  bool creation_validation = true;
  // OpenSM's mcgroup_join_validation (3.1 rule 9).
  bool join_validation = true;
  // Reproduce OpenSM's leave leak (see above). Off: no leak.
  bool reproduce_opensm_leave_leak = false;
  // JoinState 0x8 (SendOnlyFullMember, rulebook section 4) is understood,
  // as by OpenSM 3.3.21 and later. Off: an SA from before it, which does
  // not advertise CapabilityMask2 bit 12 in its ClassPortInfo (SaAgent)
  // and refuses a join carrying 0x8 with 0x0200, after the rule 1 mask
  // check and before any other rule, leaving the table as it was. (OpenSM
  // before 3.3.21 refused only a creating join without 0x1; refusing every
  // 0x8 join is the simpler contract a client of such an SA must expect.)
  bool send_only_full_member = true;
  // Pre-create the IPoIB broadcast group of the default partition.
  bool ipoib_broadcast = true;
  // The groups a partition configuration creates (sm/partitions/
  // pkey_assignment.h well_known_groups), MLID 0 in each: when set, these
  // and only these are pre-created (ipoib_broadcast still false: none).
  std::optional<std::vector<mad::McMemberRecord>> well_known;
  // Attempts at an unused SA-assigned MGID before 0x0100.
  uint32_t mgid_tries = 1000;
};

struct McastMember {
  uint64_t port_guid = 0;
  uint8_t join_state = 0;   // OR of the joins, 4 bits
  bool proxy_join = false;  // joined by another port on its behalf
  friend bool operator==(const McastMember&, const McastMember&) = default;
};

struct McastGroup {
  // The group's fields: MGID, Q_Key, MLID, MTU, TClass, P_Key, Rate,
  // PacketLifeTime, SL, FlowLabel, HopLimit, Scope; selectors = 2;
  // PortGID, JoinState and ProxyJoin zero.
  mad::McMemberRecord rec;
  std::map<uint64_t, McastMember> members;  // by port GUID
  // Members holding Full or SendOnlyFull: the group lives while > 0.
  uint32_t full_members = 0;
  // Partition-configured (the IPoIB broadcast group): survives its last
  // full member, keeps its MLID.
  bool well_known = false;
  friend bool operator==(const McastGroup&, const McastGroup&) = default;
};

struct McastResult {
  uint16_t status = 0;       // 0 or an SA status (wire/mad_header.h mad_status::)
  mad::McMemberRecord record;  // the response record (the request on failure)
};

class McastGroups {
 public:
  // The subnet and the routing must outlive this object. The subnet may
  // change between calls (a sweep); members are kept by port GUID.
  McastGroups(const Subnet& subnet, McastRouting& routing, McastOptions options = {});

  // Set: join or create (3.1). `requester` indexes subnet.ports.
  McastResult join(uint32_t requester, const mad::McMemberRecord& req, uint64_t comp_mask);
  // Delete: leave (3.2).
  McastResult leave(uint32_t requester, const mad::McMemberRecord& req, uint64_t comp_mask);
  // Get/GetTable (3.3). trusted = the request carried a non-zero SM_Key.
  std::vector<mad::McMemberRecord> get(uint32_t requester, const mad::McMemberRecord& req,
                                       uint64_t comp_mask, bool trusted) const;

  // A port left the subnet: it leaves every group as if it had sent a
  // Delete with its whole JoinState (traps and cleanup included).
  void drop_port(uint64_t port_guid);
  // Creates the well-known groups if they are missing (MLIDs may not be
  // available before the first sweep). Called by the constructor.
  void ensure_well_known();

  // Traps 66 (group gets its first Full/SendOnlyFull member) and 67 (the
  // group loses its last one, sent before cleanup): trap number and the
  // group as it stood at that moment.
  std::function<void(uint16_t trap, const McastGroup& group)> on_trap;

  const std::map<wire::Gid, McastGroup>& groups() const { return groups_; }
  const McastGroup* find(const wire::Gid& mgid) const;
  // Empty when the table is consistent (every full_members matches its
  // members, MLIDs unique, non-well-known groups have a full member),
  // else a description of the first problem.
  std::string check_invariants() const;
  const McastOptions& options() const { return options_; }

  // The MGID the SA assigns for `counter` (3.1 rule 8):
  // ff1S:a01b:<prefix bytes 0-5>:<counter, host order>:0000.
  static wire::Gid assigned_mgid(uint64_t prefix, uint8_t scope, uint32_t counter);
  // ff1S:401b:PPPP::ffff:ffff.
  static wire::Gid ipoib_broadcast_mgid(uint8_t scope, uint16_t pkey);

 private:
  using Rec = mad::McMemberRecord;
  void add_well_known(const Rec& rec);
  const SubnetPort* port_of(const wire::Gid& port_gid) const;
  bool prefix_ok(const wire::Gid& port_gid) const;
  uint16_t validate_mgid(const Rec& req, uint64_t mask) const;
  uint16_t create(uint32_t port_index, const Rec& req, uint64_t mask, wire::Gid& mgid);
  uint16_t check_group_fields(const McastGroup& g, const SubnetPort& port, const Rec& req,
                              uint64_t mask) const;
  void delete_group(std::map<wire::Gid, McastGroup>::iterator it);
  // Applies stored & ~bits to a member; returns the remaining state.
  uint8_t remove_bits(std::map<wire::Gid, McastGroup>::iterator git, uint64_t port_guid,
                      uint8_t bits);
  Rec response(const McastGroup& g, Rec rec) const;

  const Subnet* subnet_;
  McastRouting* routing_;
  McastOptions options_;
  std::map<wire::Gid, McastGroup> groups_;
  uint32_t mgid_counter_ = 0;
};

}  // namespace ibfab::sm
