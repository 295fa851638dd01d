#pragma once
// PortInfo (SMP attribute 0x0015, IBTA 1.3 vol 1, 14.2.5.6): 64 bytes.
// AttributeModifier = port number (0 = switch management port).
//
// Byte layout (bits numbered 7..0 within a byte, 7 most significant):
//   0 M_Key(64)            8 GidPrefix(64)        16 LID   18 MasterSMLID
//  20 CapabilityMask(32)  24 DiagCode            26 M_KeyLeasePeriod
//  28 LocalPortNum  29 LinkWidthEnabled  30 LinkWidthSupported  31 LinkWidthActive
//  32 LinkSpeedSupported 7:4 | PortState 3:0
//  33 PortPhysicalState 7:4 | LinkDownDefaultState 3:0
//  34 M_KeyProtectBits 7:6 | reserved 5:3 | LMC 2:0
//  35 LinkSpeedActive 7:4 | LinkSpeedEnabled 3:0
//  36 NeighborMTU 7:4 | MasterSMSL 3:0      37 VLCap 7:4 | InitType 3:0
//  38 VLHighLimit  39 VLArbitrationHighCap  40 VLArbitrationLowCap
//  41 InitTypeReply 7:4 | MTUCap 3:0        42 VLStallCount 7:5 | HOQLife 4:0
//  43 OperationalVLs 7:4 | PartitionEnforcementInbound 3 | ...Outbound 2 |
//     FilterRawInbound 1 | FilterRawOutbound 0
//  44 M_KeyViolations  46 P_KeyViolations  48 Q_KeyViolations  50 GUIDCap
//  51 ClientReregister 7 | MulticastPKeyTrapSuppressionEnabled 6:5 | SubnetTimeOut 4:0
//  52 reserved 7:5 | RespTimeValue 4:0      53 LocalPhyErrors 7:4 | OverrunErrors 3:0
//  54 MaxCreditHint  56 reserved  57 LinkRoundTripLatency(24)
//  60 CapabilityMask2  62 LinkSpeedExtActive 7:4 | LinkSpeedExtSupported 3:0
//  63 reserved 7:5 | LinkSpeedExtEnabled 4:0
// IBTA 1.3 has no LinkWidthExt fields: 2x width is LinkWidth* bit 16.
// Reserved bits are written as zero and ignored on unpack.
#include <cstdint>
#include <span>

namespace ibfab::mad {

// PortInfo:PortState (4 bits). NoChange is only meaningful in a Set.
namespace port_state {
inline constexpr uint8_t kNoChange = 0;
inline constexpr uint8_t kDown = 1;
inline constexpr uint8_t kInit = 2;
inline constexpr uint8_t kArmed = 3;
inline constexpr uint8_t kActive = 4;
}  // namespace port_state

// PortInfo:PortPhysicalState (4 bits); also LinkDownDefaultState uses
// 0 NoChange, 1 Sleep, 2 Polling.
namespace phys_state {
inline constexpr uint8_t kNoChange = 0;
inline constexpr uint8_t kSleep = 1;
inline constexpr uint8_t kPolling = 2;
inline constexpr uint8_t kDisabled = 3;
inline constexpr uint8_t kPortConfigurationTraining = 4;
inline constexpr uint8_t kLinkUp = 5;
inline constexpr uint8_t kLinkErrorRecovery = 6;
inline constexpr uint8_t kPhyTest = 7;
}  // namespace phys_state

// PortInfo:CapabilityMask bits.
namespace port_cap {
inline constexpr uint32_t kIsSM = 1u << 1;
inline constexpr uint32_t kIsNoticeSupported = 1u << 2;
inline constexpr uint32_t kIsTrapSupported = 1u << 3;
inline constexpr uint32_t kIsOptionalIPDSupported = 1u << 4;
inline constexpr uint32_t kIsAutomaticMigrationSupported = 1u << 5;
inline constexpr uint32_t kIsSLMappingSupported = 1u << 6;
inline constexpr uint32_t kIsMKeyNVRAM = 1u << 7;
inline constexpr uint32_t kIsPKeyNVRAM = 1u << 8;
inline constexpr uint32_t kIsLEDInfoSupported = 1u << 9;
inline constexpr uint32_t kIsSMdisabled = 1u << 10;
inline constexpr uint32_t kIsSystemImageGUIDSupported = 1u << 11;
inline constexpr uint32_t kIsPKeySwitchExternalPortTrapSupported = 1u << 12;
inline constexpr uint32_t kIsCableInfoSupported = 1u << 13;
inline constexpr uint32_t kIsExtendedSpeedsSupported = 1u << 14;
inline constexpr uint32_t kIsCapabilityMask2Supported = 1u << 15;
inline constexpr uint32_t kIsCommunicationManagementSupported = 1u << 16;
inline constexpr uint32_t kIsSNMPTunnelingSupported = 1u << 17;
inline constexpr uint32_t kIsReinitSupported = 1u << 18;
inline constexpr uint32_t kIsDeviceManagementSupported = 1u << 19;
inline constexpr uint32_t kIsVendorClassSupported = 1u << 20;
inline constexpr uint32_t kIsDRNoticeSupported = 1u << 21;
inline constexpr uint32_t kIsCapabilityMaskNoticeSupported = 1u << 22;
inline constexpr uint32_t kIsBootManagementSupported = 1u << 23;
inline constexpr uint32_t kIsLinkRoundTripLatencySupported = 1u << 24;
inline constexpr uint32_t kIsClientReregistrationSupported = 1u << 25;
inline constexpr uint32_t kIsOtherLocalChangesNoticeSupported = 1u << 26;
inline constexpr uint32_t kIsLinkSpeedWidthPairsTableSupported = 1u << 27;
inline constexpr uint32_t kIsVendorSpecificMadsTableSupported = 1u << 28;
inline constexpr uint32_t kIsMcastPkeyTrapSuppressionSupported = 1u << 29;
inline constexpr uint32_t kIsMulticastFDBTopSupported = 1u << 30;
inline constexpr uint32_t kIsHierarchyInfoSupported = 1u << 31;
}  // namespace port_cap

// PortInfo:CapabilityMask2 bits.
namespace port_cap2 {
inline constexpr uint16_t kIsSetNodeDescriptionSupported = 1u << 0;
inline constexpr uint16_t kIsPortInfoExtendedSupported = 1u << 1;
inline constexpr uint16_t kIsVirtualizationSupported = 1u << 2;
inline constexpr uint16_t kIsSwitchPortStateTableSupported = 1u << 3;
inline constexpr uint16_t kIsLinkWidth2xSupported = 1u << 4;
inline constexpr uint16_t kIsLinkSpeedHDRSupported = 1u << 5;
}  // namespace port_cap2

// MTU encodings (NeighborMTU, MTUCap): 1=256 2=512 3=1024 4=2048 5=4096.
namespace mtu {
inline constexpr uint8_t k256 = 1;
inline constexpr uint8_t k512 = 2;
inline constexpr uint8_t k1024 = 3;
inline constexpr uint8_t k2048 = 4;
inline constexpr uint8_t k4096 = 5;
}  // namespace mtu

struct PortInfo {
  static constexpr uint16_t kAttributeId = 0x0015;
  static constexpr std::size_t kSize = 64;

  uint64_t m_key = 0;
  uint64_t gid_prefix = 0;
  uint16_t lid = 0;
  uint16_t master_sm_lid = 0;
  uint32_t capability_mask = 0;
  uint16_t diag_code = 0;
  uint16_t m_key_lease_period = 0;
  uint8_t local_port_num = 0;
  uint8_t link_width_enabled = 0;
  uint8_t link_width_supported = 0;
  uint8_t link_width_active = 0;
  uint8_t link_speed_supported = 0;     // 4 bits
  uint8_t port_state = 0;               // 4 bits, port_state::
  uint8_t port_physical_state = 0;      // 4 bits, phys_state::
  uint8_t link_down_default_state = 0;  // 4 bits
  uint8_t m_key_protect_bits = 0;       // 2 bits
  uint8_t lmc = 0;                      // 3 bits
  uint8_t link_speed_active = 0;        // 4 bits
  uint8_t link_speed_enabled = 0;       // 4 bits
  uint8_t neighbor_mtu = 0;             // 4 bits, mtu::
  uint8_t master_sm_sl = 0;             // 4 bits
  uint8_t vl_cap = 0;                   // 4 bits
  uint8_t init_type = 0;                // 4 bits
  uint8_t vl_high_limit = 0;
  uint8_t vl_arbitration_high_cap = 0;
  uint8_t vl_arbitration_low_cap = 0;
  uint8_t init_type_reply = 0;          // 4 bits
  uint8_t mtu_cap = 0;                  // 4 bits, mtu::
  uint8_t vl_stall_count = 0;           // 3 bits
  uint8_t hoq_life = 0;                 // 5 bits
  uint8_t operational_vls = 0;          // 4 bits
  bool partition_enforcement_inbound = false;
  bool partition_enforcement_outbound = false;
  bool filter_raw_inbound = false;
  bool filter_raw_outbound = false;
  uint16_t m_key_violations = 0;
  uint16_t p_key_violations = 0;
  uint16_t q_key_violations = 0;
  uint8_t guid_cap = 0;
  bool client_reregister = false;
  uint8_t multicast_pkey_trap_suppression_enabled = 0;  // 2 bits
  uint8_t subnet_timeout = 0;                           // 5 bits
  uint8_t resp_time_value = 0;                          // 5 bits
  uint8_t local_phy_errors = 0;                         // 4 bits
  uint8_t overrun_errors = 0;                           // 4 bits
  uint16_t max_credit_hint = 0;
  uint32_t link_round_trip_latency = 0;                 // 24 bits
  uint16_t capability_mask2 = 0;
  uint8_t link_speed_ext_active = 0;                    // 4 bits
  uint8_t link_speed_ext_supported = 0;                 // 4 bits
  uint8_t link_speed_ext_enabled = 0;                   // 5 bits

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  // Each field is masked to its width.
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static PortInfo unpack(std::span<const uint8_t> data);

  friend bool operator==(const PortInfo&, const PortInfo&) = default;
};

}  // namespace ibfab::mad
