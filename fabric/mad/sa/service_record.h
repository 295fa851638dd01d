#pragma once
// ServiceRecord (SA attribute 0x0031, IBTA 1.3 vol 1, 15.2.5.14): 176
// bytes (AttributeOffset 22).
//
//   0 ServiceID(64)   8 ServiceGID(128)   24 ServiceP_Key   26 reserved(16)
//  28 ServiceLease(32)   32 ServiceKey(128)   48 ServiceName(64 bytes)
// 112 ServiceData8[16]   128 ServiceData16[8]   144 ServiceData32[4]
// 160 ServiceData64[2]
// ServiceLease 0xFFFFFFFF is infinite; otherwise seconds.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/wire/gid.h"

namespace ibfab::mad {

// ComponentMask bits: one per field, and one per element of the ServiceData
// arrays (Data8 from bit 7, Data16 from 23, Data32 from 31, Data64 from 35).
namespace sr_comp {
inline constexpr uint64_t kServiceId = 1ull << 0;
inline constexpr uint64_t kServiceGid = 1ull << 1;
inline constexpr uint64_t kServicePKey = 1ull << 2;
inline constexpr uint64_t kServiceLease = 1ull << 4;
inline constexpr uint64_t kServiceKey = 1ull << 5;
inline constexpr uint64_t kServiceName = 1ull << 6;
inline constexpr unsigned kData8First = 7;
inline constexpr unsigned kData16First = 23;
inline constexpr unsigned kData32First = 31;
inline constexpr unsigned kData64First = 35;
}  // namespace sr_comp

inline constexpr uint32_t kServiceLeaseInfinite = 0xFFFFFFFF;

struct ServiceRecord {
  static constexpr uint16_t kAttributeId = 0x0031;
  static constexpr std::size_t kSize = 176;
  static constexpr uint16_t kAttributeOffset = 22;

  uint64_t service_id = 0;
  wire::Gid service_gid{};
  uint16_t service_p_key = 0;
  uint32_t service_lease = 0;
  std::array<uint8_t, 16> service_key{};
  std::array<uint8_t, 64> service_name{};  // NUL-padded UTF-8
  std::array<uint8_t, 16> data8{};
  std::array<uint16_t, 8> data16{};
  std::array<uint32_t, 4> data32{};
  std::array<uint64_t, 2> data64{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static ServiceRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const ServiceRecord&, const ServiceRecord&) = default;
};

}  // namespace ibfab::mad
