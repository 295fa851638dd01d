#pragma once
// What the SA needs from the multicast manager, and nothing more: MLIDs,
// admission of a port into a group, and membership changes, one port at a
// time. An MLID carries one group. The SA (mcast_groups.h) calls it
// synchronously while it handles a join or a leave; the multicast manager
// implements it (the SA does not include the manager), and tests implement
// it with a recording fake.
#include <cstdint>
#include <optional>

namespace ibfab::sm {

class McastRouting {
 public:
  virtual ~McastRouting() = default;
  // A free MLID for a new group: `requested` if it is in range and free,
  // else the lowest free one; nullopt when none is left (the SA answers
  // 0x0100 NO_RESOURCES). The MLID stays taken until free_mlid().
  virtual std::optional<uint16_t> allocate_mlid(std::optional<uint16_t> requested) = 0;
  virtual void free_mlid(uint16_t mlid) = 0;
  // Join admission: may end port `port_index` (Subnet::ports) become a
  // member of the group on `mlid`? Asked once, before a port is added to a
  // group it is not a member of yet. A refusal is answered 0x0100.
  virtual bool admit(uint32_t port_index, uint16_t mlid) = 0;
  // Port `port_guid` became a member of the group on `mlid` (it was not).
  // A JoinState change alone does not call it.
  virtual void add_member(uint16_t mlid, uint64_t port_guid) = 0;
  // Port `port_guid` is no longer a member of the group on `mlid`.
  virtual void remove_member(uint16_t mlid, uint64_t port_guid) = 0;
  // The group on `mlid` lost every member at once (it is deleted, or a
  // well-known group was emptied); free_mlid() follows a deletion.
  virtual void clear_members(uint16_t mlid) = 0;
};

}  // namespace ibfab::sm
