#pragma once
// Reads OpenSM 3.3.23's partitions.conf syntax (doc/partition-config.txt):
//
//   [Name][=PKey][,ipoib][,mtu=..][,rate=..][,sl=..][,scope=..][,Q_Key=..]
//       [,TClass=..][,FlowLabel=..][,defmember=full|limited|both][,indx0] :
//     member[=full|limited|both], ... | mgid=GID[,group flags]  ;
//
// '#' starts a comment; a definition may span lines (it ends at ';'); a
// line may hold several; an `mgid=` takes the rest of its line (or of its
// definition, if a ';' comes first). Members are port GUIDs or ALL,
// ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF, NONE. Keywords and flags may be
// abbreviated as OpenSM allows (any prefix, tried in OpenSM's order), and
// numbers are C literals (0x.., 0.., decimal). Definitions of one P_Key
// merge; a partition without a P_Key gets one (the one of an earlier
// partition of the same name, else the lowest unused from 1), as OpenSM
// does. The implicit Default partition (0x7FFF) comes first.
//
// Where OpenSM logs "PARSE ERROR" (and falls back to its default
// partitions) or "PARSE WARN" (and skips the item), this reader throws
// PartitionError "SOURCE:LINE: problem": a file is taken whole or not at
// all. Also refused: P_Keys above 0xFFFF and an explicit P_Key whose base
// is 0 (OpenSM truncates or generates one), values out of their field's
// range, and files over kMaxFileBytes.
#include <cstddef>
#include <string>
#include <string_view>

#include "sm/partitions/partition_config.h"

namespace ibfab::sm::partitions {

inline constexpr std::size_t kMaxFileBytes = std::size_t{4} << 20;

// `source` names the text in messages.
PartitionConfig read_partitions(std::string_view text, const std::string& source);
// Reads a regular file (not a FIFO, device or directory) of at most
// kMaxFileBytes (fabric/topology/text_file.h); any failure is a
// PartitionError naming the file.
PartitionConfig load_partitions(const std::string& path);
// OpenSM's partitions without a file: Default=0x7fff,ipoib: ALL=full.
PartitionConfig default_partitions();

}  // namespace ibfab::sm::partitions
