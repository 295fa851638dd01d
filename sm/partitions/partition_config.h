#pragma once
// A partition configuration as OpenSM 3.3.23's partitions.conf gives it
// (doc/partition-config.txt, opensm/osm_prtn_config.c), after reading and
// before it meets a subnet: partitions by P_Key, each with its members in
// file order (a later mention of a port overrides an earlier one, as
// OpenSM's osm_prtn_add_port does) and the multicast groups it creates.
// sm/partitions/pkey_assignment.h turns it into P_Key tables for the end
// ports an SM found.
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabric/wire/gid.h"

namespace ibfab::sm::partitions {

// Every reading problem: what() is "SOURCE:LINE: problem", one line.
class PartitionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Membership : uint8_t { Limited, Full, Both };

struct Member {
  // Who: one port GUID, or a class of end ports, or the SM's own port.
  enum class Kind : uint8_t { Guid, All, AllCas, AllSwitches, AllRouters, Self };
  Kind kind = Kind::Guid;
  uint64_t guid = 0;  // Kind::Guid only
  // Both counts as Full: OpenSM adds the limited entry too only with
  // allow_both_pkeys, which is off by default and not modelled.
  Membership membership = Membership::Limited;
  bool indx0 = false;  // the definition had indx0: this P_Key goes to index 0
  unsigned line = 0;
};

// A multicast group the partition creates (its IPoIB broadcast group with
// `ipoib`, or an `mgid=` line), with OpenSM's values filled in.
struct GroupDef {
  wire::Gid mgid;          // scope nibble and (IP groups) P_Key bits as OpenSM sets them
  uint8_t mtu = 4;         // IBTA enum (4 = 2048)
  uint8_t rate = 3;        // SA rate enum (3 = 10 Gb/s)
  uint8_t sl = 0;
  uint8_t scope = 2;
  uint32_t q_key = 0;
  uint8_t tclass = 0;
  uint32_t flow_label = 0;
  uint16_t p_key = 0;      // the partition's P_Key, full member bit set
  unsigned line = 0;
  uint32_t order = 0;      // creation order across the file (OpenSM's MLID order)
};

struct Partition {
  std::string name;        // the first definition's
  uint16_t pkey = 0;       // base, 0x0001 .. 0x7FFF
  std::vector<Member> members;
  std::vector<GroupDef> groups;
  unsigned line = 0;       // first definition
};

struct PartitionConfig {
  // By base P_Key; definitions of one P_Key are merged, as OpenSM does.
  std::map<uint16_t, Partition> partitions;
  // True when made from a file. Without a file OpenSM's Default partition
  // holds every port as a full member and has the IPoIB broadcast group;
  // with one, every port not named is a limited member of it (its own
  // port full) and it has only the groups the file gives it.
  bool from_file = false;
  std::string source;      // the file name, for messages
};

inline constexpr uint16_t kDefaultPKey = 0x7FFF;
inline constexpr uint32_t kIpoibQKey = 0x0B1B;

}  // namespace ibfab::sm::partitions
