#pragma once
// The multicast manager's bookkeeping of MFT contents, per switch GUID:
// what it wants there (the desired port mask, per MLID) and what it has
// written (the shadow, per 32-MLID block and 16-port position). A switch it
// never wrote to is all-zero, the power-on state. It answers which blocks
// must be written so that a switch holds the desired content; it sends
// nothing.
//
// A write is recorded when sent (so a second change before the answer does
// not resend it) and confirmed or disowned when answered: a failed write,
// or an older write answered after a newer one (a retry overtaking), makes
// the block "unknown", which differs from any content until rewritten.
//
// Memory: desired = one PortMask (32 bytes) per (switch, MLID) in a tree;
// shadow = 64 bytes per (switch, block, position) ever written.
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fabric/mad/forwarding_tables.h"
#include "sm/mcast/port_mask.h"

namespace ibfab::sm {

class MftShadow {
 public:
  // Sets the desired entry of `mlid` on switch `guid` (an empty mask: no
  // entry). Returns whether it changed.
  bool set_desired(uint64_t guid, uint16_t mlid, const PortMask& mask);
  // Drops every desired entry (the shadow is kept).
  void clear_desired();
  // The desired mask of `mlid` on `guid` (empty if none).
  PortMask desired(uint64_t guid, uint16_t mlid) const;
  // The desired content of one block.
  mad::MulticastForwardingTable desired_block(uint64_t guid, mad::MftAddress a) const;

  // Blocks of `guid` whose shadow differs from the desired content, for
  // positions 0 .. positions - 1: only block `block` if given, else every
  // block with desired or written content. Ascending (block, position).
  std::vector<mad::MftAddress> stale(uint64_t guid, uint8_t positions, std::optional<uint16_t> block) const;

  // Records that `content` went to (guid, a); returns the write's number.
  uint64_t sent(uint64_t guid, mad::MftAddress a, const mad::MulticastForwardingTable& content);
  // The write numbered `seq` was answered (ok = status 0) or given up.
  // Returns true when the block became unknown (the caller may rewrite it).
  bool answered(uint64_t guid, mad::MftAddress a, uint64_t seq, bool ok);

  // The switch is all-zero again (it rebooted): forgets what was written.
  void forget(uint64_t guid) { written_.erase(guid); }

  // The highest MLID with a desired entry on `guid`; 0xBFFF (an empty
  // table's MulticastFDBTop) if none.
  uint16_t top(uint64_t guid) const;

  // (switch, MLID) pairs with any desired bit set, per switch / in all.
  std::size_t entries(uint64_t guid) const;
  std::size_t entries() const { return entries_; }
  std::map<uint64_t, std::size_t> entries_per_switch() const;

 private:
  struct Block {
    mad::MulticastForwardingTable content;
    bool known = true;
    uint64_t last_sent = 0;      // number of the newest write sent
    uint64_t last_answered = 0;  // number of the newest write confirmed
  };
  static uint32_t key(mad::MftAddress a) { return uint32_t{a.block} << 4 | a.position; }

  std::unordered_map<uint64_t, std::map<uint16_t, PortMask>> desired_;  // guid -> mlid -> mask
  std::unordered_map<uint64_t, std::map<uint32_t, Block>> written_;     // guid -> key -> block
  std::size_t entries_ = 0;
  uint64_t next_seq_ = 1;
};

}  // namespace ibfab::sm
