#pragma once
// MultiPathRecord (SA attribute 0x003A, IBTA 1.3 vol 1, 15.2.5.20): a
// request for the paths between SGIDCount source and DGIDCount destination
// GIDs, sent with GetMulti; the answer is PathRecords. 24 bytes followed by
// the GIDs (sources first), at most 11 in one MAD (OpenSM's limit).
//
//   0 RawTraffic(1) | reserved(3) | FlowLabel(20) | HopLimit(8)
//   4 TClass   5 Reversible(1) | NumbPath(7)   6 P_Key
//   8 QoSClass(12) | SL(4)   10 MTUSelector(2) | MTU(6)
//  11 RateSelector(2) | Rate(6)   12 PacketLifeTimeSelector(2) | PLT(6)
//  13 ServiceID 63:56   14 IndependenceSelector(2) | GIDScope(6)
//  15 SGIDCount   16 DGIDCount   17 ServiceID 55:0   24 SDGID[0..]
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/wire/gid.h"

namespace ibfab::mad {

namespace mpr_comp {
inline constexpr uint64_t kRawTraffic = 1ull << 0;
inline constexpr uint64_t kFlowLabel = 1ull << 2;
inline constexpr uint64_t kHopLimit = 1ull << 3;
inline constexpr uint64_t kTClass = 1ull << 4;
inline constexpr uint64_t kReversible = 1ull << 5;
inline constexpr uint64_t kNumbPath = 1ull << 6;
inline constexpr uint64_t kPKey = 1ull << 7;
inline constexpr uint64_t kQosClass = 1ull << 8;
inline constexpr uint64_t kSl = 1ull << 9;
inline constexpr uint64_t kMtuSelector = 1ull << 10;
inline constexpr uint64_t kMtu = 1ull << 11;
inline constexpr uint64_t kRateSelector = 1ull << 12;
inline constexpr uint64_t kRate = 1ull << 13;
inline constexpr uint64_t kPacketLifeTimeSelector = 1ull << 14;
inline constexpr uint64_t kPacketLifeTime = 1ull << 15;
inline constexpr uint64_t kServiceIdMsb = 1ull << 16;
inline constexpr uint64_t kIndependenceSelector = 1ull << 17;
inline constexpr uint64_t kSgidCount = 1ull << 19;
inline constexpr uint64_t kDgidCount = 1ull << 20;
inline constexpr uint64_t kServiceIdLsb = 1ull << 21;
inline constexpr uint64_t kServiceId = kServiceIdMsb | kServiceIdLsb;
}  // namespace mpr_comp

struct MultiPathRecord {
  static constexpr uint16_t kAttributeId = 0x003A;
  static constexpr std::size_t kFixedSize = 24;
  static constexpr std::size_t kMaxGids = 11;
  static constexpr std::size_t kSize = kFixedSize + kMaxGids * wire::Gid::kSize;  // 200
  static constexpr uint16_t kAttributeOffset = 3;  // the fixed part

  bool raw_traffic = false;
  uint32_t flow_label = 0;  // 20 bits
  uint8_t hop_limit = 0;
  uint8_t tclass = 0;
  bool reversible = false;
  uint8_t numb_path = 0;  // 7 bits
  uint16_t p_key = 0;
  uint16_t qos_class = 0;  // 12 bits
  uint8_t sl = 0;          // 4 bits
  uint8_t mtu_selector = 0, mtu = 0;
  uint8_t rate_selector = 0, rate = 0;
  uint8_t packet_life_time_selector = 0, packet_life_time = 0;
  uint8_t independence_selector = 0;  // 2 bits
  uint8_t gid_scope = 0;              // 6 bits
  uint8_t sgid_count = 0, dgid_count = 0;
  uint64_t service_id = 0;
  std::array<wire::Gid, kMaxGids> gids{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static MultiPathRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const MultiPathRecord&, const MultiPathRecord&) = default;
};

}  // namespace ibfab::mad
