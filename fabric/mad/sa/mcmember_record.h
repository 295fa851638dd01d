#pragma once
// MCMemberRecord (SA attribute 0x0038, IBTA 1.3 vol 1, 15.2.5.17): 52 bytes,
// padded to 56 in a GetTable response (AttributeOffset 7).
//
//   0 MGID(16)   16 PortGID(16)   32 Q_Key   36 MLID
//  38 MTUSelector 7:6 | MTU 5:0     39 TClass   40 P_Key
//  42 RateSelector 7:6 | Rate 5:0
//  43 PacketLifeTimeSelector 7:6 | PacketLifeTime 5:0
//  44 SL 31:28 | FlowLabel 27:8 | HopLimit 7:0
//  48 Scope 7:4 | JoinState 3:0
//  49 ProxyJoin 7 | reserved 6:0    50 reserved(16)
// ProxyJoin sits at byte 49 bit 7, where the Linux kernel, rdma-core and
// libibmad put it. OpenSM declares it as a C bit-field, which on x86 lands
// at bit 0 instead; OpenSM never reads it from a request, so the difference
// only shows in its replies. Reserved bits are written as zero and ignored
// on unpack.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/sa/selector.h"
#include "fabric/wire/gid.h"

namespace ibfab::mad {

// MCMemberRecord ComponentMask bits, one per field in record order.
namespace mcm_comp {
inline constexpr uint64_t kMgid = 1ull << 0;
inline constexpr uint64_t kPortGid = 1ull << 1;
inline constexpr uint64_t kQKey = 1ull << 2;
inline constexpr uint64_t kMlid = 1ull << 3;
inline constexpr uint64_t kMtuSelector = 1ull << 4;
inline constexpr uint64_t kMtu = 1ull << 5;
inline constexpr uint64_t kTClass = 1ull << 6;
inline constexpr uint64_t kPKey = 1ull << 7;
inline constexpr uint64_t kRateSelector = 1ull << 8;
inline constexpr uint64_t kRate = 1ull << 9;
inline constexpr uint64_t kPacketLifeTimeSelector = 1ull << 10;
inline constexpr uint64_t kPacketLifeTime = 1ull << 11;
inline constexpr uint64_t kSl = 1ull << 12;
inline constexpr uint64_t kFlowLabel = 1ull << 13;
inline constexpr uint64_t kHopLimit = 1ull << 14;
inline constexpr uint64_t kScope = 1ull << 15;
inline constexpr uint64_t kJoinState = 1ull << 16;
inline constexpr uint64_t kProxyJoin = 1ull << 17;

// Set (join) and Delete (leave) need at least these (else SA status 0x0600).
inline constexpr uint64_t kJoinRequiredMask = kMgid | kPortGid | kJoinState;
// Set that creates a group needs at least these (else 0x0600).
inline constexpr uint64_t kCreateRequiredMask =
    kJoinRequiredMask | kQKey | kTClass | kPKey | kSl | kFlowLabel;
static_assert(kJoinRequiredMask == 0x10003);
static_assert(kCreateRequiredMask == 0x130C7);
}  // namespace mcm_comp

// MCMemberRecord:JoinState bits. A member's state is the OR of its joins.
namespace join_state {
inline constexpr uint8_t kFull = 0x1;
inline constexpr uint8_t kNonMember = 0x2;
inline constexpr uint8_t kSendOnlyNonMember = 0x4;
inline constexpr uint8_t kSendOnlyFull = 0x8;
}  // namespace join_state

struct McMemberRecord {
  static constexpr uint16_t kAttributeId = 0x0038;
  static constexpr std::size_t kSize = 52;
  static constexpr uint16_t kAttributeOffset = 7;

  wire::Gid mgid{};
  wire::Gid port_gid{};
  uint32_t q_key = 0;
  uint16_t mlid = 0;
  uint8_t mtu_selector = 0;               // 2 bits, selector::
  uint8_t mtu = 0;                        // 6 bits, mtu::
  uint8_t tclass = 0;
  uint16_t p_key = 0;
  uint8_t rate_selector = 0;              // 2 bits, selector::
  uint8_t rate = 0;                       // 6 bits
  uint8_t packet_life_time_selector = 0;  // 2 bits, selector::
  uint8_t packet_life_time = 0;           // 6 bits
  uint8_t sl = 0;                         // 4 bits
  uint32_t flow_label = 0;                // 20 bits
  uint8_t hop_limit = 0;
  uint8_t scope = 0;                      // 4 bits
  uint8_t join_state = 0;                 // 4 bits, join_state::
  bool proxy_join = false;

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  // Each field is masked to its width.
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static McMemberRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const McMemberRecord&, const McMemberRecord&) = default;
};

}  // namespace ibfab::mad
