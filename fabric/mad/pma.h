#pragma once
// Performance management (PMA) MAD layout, IBTA 1.3 vol 1, 16.1.
// A PerfMgt MAD is the 24-byte common header, 40 reserved bytes, then a
// 192-byte data area at byte 64 that holds the attribute (PortCounters,
// PortCountersExtended, ClassPortInfo, ...).
#include <cstddef>
#include <cstdint>

namespace ibfab::mad {

inline constexpr uint8_t kPerfMgtClass = 0x04;
inline constexpr std::size_t kPmaDataOffset = 64;
inline constexpr std::size_t kPmaDataSize = 192;

// PortSelect value that addresses every port of the node at once (only
// when ClassPortInfo:CapabilityMask has kAllPortSelect).
inline constexpr uint8_t kAllPortsSelect = 0xFF;

// PerfMgt ClassPortInfo:CapabilityMask bits.
namespace pma_cap {
inline constexpr uint16_t kAllPortSelect = 1u << 8;
inline constexpr uint16_t kIsExtendedWidthSupported = 1u << 9;
inline constexpr uint16_t kIsExtendedWidthSupportedNoIETF = 1u << 10;
inline constexpr uint16_t kIsSamplesOnlySupported = 1u << 11;
inline constexpr uint16_t kIsPortCountersXmitWaitSupported = 1u << 12;
inline constexpr uint16_t kIsQP1DroppedSupported = 1u << 15;
}  // namespace pma_cap

// PerfMgt ClassPortInfo:CapabilityMask2 bits.
namespace pma_cap2 {
inline constexpr uint32_t kIsPMKeySupported = 1u << 0;
inline constexpr uint32_t kIsAdditionalPortCountersExtendedSupported = 1u << 1;
}  // namespace pma_cap2

}  // namespace ibfab::mad
