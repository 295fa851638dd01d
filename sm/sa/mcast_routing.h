#pragma once
// What the SA needs from the multicast manager, and nothing more: MLIDs,
// admission of a port into a group, and the member ports of an MLID. The
// SA (mcast_groups.h) calls it synchronously while it handles a join or a
// leave; the multicast manager implements it (the SA does not include the
// manager), and tests implement it with a recording fake.
#include <cstdint>
#include <optional>
#include <vector>

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
  // The member ports (Subnet::ports indices, sorted, no duplicates) of
  // every group on `mlid` changed (a port added or removed; a JoinState
  // change alone does not call it). Empty when the MLID lost its last
  // member; free_mlid() follows when the group is deleted.
  virtual void set_members(uint16_t mlid, std::vector<uint32_t> ports) = 0;
};

}  // namespace ibfab::sm
