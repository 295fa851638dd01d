#pragma once
// PathRecord (SA attribute 0x0035, IBTA 1.3 vol 1, 15.2.5.16): 64 bytes
// (AttributeOffset 8).
//
//   0 ServiceID(64)   8 DGID(16)   24 SGID(16)   40 DLID   42 SLID
//  44 RawTraffic 31 | reserved 30:28 | FlowLabel 27:8 | HopLimit 7:0
//  48 TClass   49 Reversible 7 | NumbPath 6:0   50 P_Key
//  52 QoSClass 15:4 | SL 3:0
//  54 MTUSelector 7:6 | MTU 5:0     55 RateSelector 7:6 | Rate 5:0
//  56 PacketLifeTimeSelector 7:6 | PacketLifeTime 5:0
//  57 Preference   58 reserved(48)
// Reserved bits are written as zero and ignored on unpack.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/sa/selector.h"
#include "fabric/wire/gid.h"

namespace ibfab::mad {

// PathRecord ComponentMask bits. ServiceID is two bits (its upper and
// lower 32 bits); OpenSM wants both or neither (else SA status 0x0600).
namespace pr_comp {
inline constexpr uint64_t kServiceIdMsb = 1ull << 0;
inline constexpr uint64_t kServiceIdLsb = 1ull << 1;
inline constexpr uint64_t kServiceId = kServiceIdMsb | kServiceIdLsb;
inline constexpr uint64_t kDgid = 1ull << 2;
inline constexpr uint64_t kSgid = 1ull << 3;
inline constexpr uint64_t kDlid = 1ull << 4;
inline constexpr uint64_t kSlid = 1ull << 5;
inline constexpr uint64_t kRawTraffic = 1ull << 6;
// bit 7 reserved
inline constexpr uint64_t kFlowLabel = 1ull << 8;
inline constexpr uint64_t kHopLimit = 1ull << 9;
inline constexpr uint64_t kTClass = 1ull << 10;
inline constexpr uint64_t kReversible = 1ull << 11;
inline constexpr uint64_t kNumbPath = 1ull << 12;
inline constexpr uint64_t kPKey = 1ull << 13;
inline constexpr uint64_t kQosClass = 1ull << 14;
inline constexpr uint64_t kSl = 1ull << 15;
inline constexpr uint64_t kMtuSelector = 1ull << 16;
inline constexpr uint64_t kMtu = 1ull << 17;
inline constexpr uint64_t kRateSelector = 1ull << 18;
inline constexpr uint64_t kRate = 1ull << 19;
inline constexpr uint64_t kPacketLifeTimeSelector = 1ull << 20;
inline constexpr uint64_t kPacketLifeTime = 1ull << 21;
inline constexpr uint64_t kPreference = 1ull << 22;
}  // namespace pr_comp

struct PathRecord {
  static constexpr uint16_t kAttributeId = 0x0035;
  static constexpr std::size_t kSize = 64;
  static constexpr uint16_t kAttributeOffset = 8;

  uint64_t service_id = 0;
  wire::Gid dgid{};
  wire::Gid sgid{};
  uint16_t dlid = 0;
  uint16_t slid = 0;
  bool raw_traffic = false;
  uint32_t flow_label = 0;                // 20 bits
  uint8_t hop_limit = 0;
  uint8_t tclass = 0;
  bool reversible = false;
  uint8_t numb_path = 0;                  // 7 bits
  uint16_t p_key = 0;
  uint16_t qos_class = 0;                 // 12 bits
  uint8_t sl = 0;                         // 4 bits
  uint8_t mtu_selector = 0;               // 2 bits, selector::
  uint8_t mtu = 0;                        // 6 bits, mtu::
  uint8_t rate_selector = 0;              // 2 bits, selector::
  uint8_t rate = 0;                       // 6 bits
  uint8_t packet_life_time_selector = 0;  // 2 bits, selector::
  uint8_t packet_life_time = 0;           // 6 bits
  uint8_t preference = 0;

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  // Each field is masked to its width.
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static PathRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const PathRecord&, const PathRecord&) = default;
};

}  // namespace ibfab::mad
