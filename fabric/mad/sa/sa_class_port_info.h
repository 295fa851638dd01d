#pragma once
// The SA's ClassPortInfo (attribute 0x0001 of class 0x03): the record is
// mad::ClassPortInfo (class_port_info.h) with ClassVersion 2; this header
// names the SA's CapabilityMask and CapabilityMask2 bits (IBTA 1.3 vol 1,
// 15.2.5.1) and the values OpenSM answers with.
#include <cstdint>

namespace ibfab::mad {

// SA ClassPortInfo:CapabilityMask (16 bits).
namespace sa_cap {
inline constexpr uint16_t kIsTrapSupported = 1u << 0;
inline constexpr uint16_t kIsGetSetNoticeSupported = 1u << 1;
inline constexpr uint16_t kIsOptionalRecordsSupported = 1u << 8;
inline constexpr uint16_t kIsUdMulticastSupported = 1u << 9;
inline constexpr uint16_t kIsMultiPathSupported = 1u << 10;
inline constexpr uint16_t kIsReinitSupported = 1u << 11;
inline constexpr uint16_t kIsPortInfoCapMaskMatchSupported = 1u << 13;
}  // namespace sa_cap

// SA ClassPortInfo:CapabilityMask2 (27 bits).
namespace sa_cap2 {
inline constexpr uint32_t kIsQosSupported = 1u << 1;
inline constexpr uint32_t kIsReversePathPKeySupported = 1u << 2;
inline constexpr uint32_t kIsMulticastFdbTopSupported = 1u << 3;
inline constexpr uint32_t kIsHierarchyInfoSupported = 1u << 4;
inline constexpr uint32_t kIsAliasGuidsSupported = 1u << 5;
inline constexpr uint32_t kIsFullPortInfoRecordSupported = 1u << 6;
inline constexpr uint32_t kIsExtendedSpeedsSupported = 1u << 7;
inline constexpr uint32_t kIsMulticastServiceRecordsSupported = 1u << 8;
inline constexpr uint32_t kIsPortInfoCapMask2MatchSupported = 1u << 10;
// JoinState 0x8 (SendOnlyFullMember) is understood. Older kernels refuse a
// send-only full join locally when the SA does not advertise it.
inline constexpr uint32_t kIsSendOnlyFullMemberSupported = 1u << 12;
inline constexpr uint32_t kIsLinkWidth2xSupported = 1u << 13;
inline constexpr uint32_t kIsLinkSpeedHdrSupported = 1u << 15;
}  // namespace sa_cap2

// What OpenSM (3.3.21 and later, as Debian builds it: dual-sided RMPP, so
// MultiPathRecord; default options: multicast enabled, use_mfttop on, QoS
// off) puts in its SA ClassPortInfo. kIsQosSupported would be added with
// QoS configured.
namespace opensm_sa_cpi {
inline constexpr uint8_t kClassVersion = 2;
inline constexpr uint16_t kCapabilityMask = sa_cap::kIsGetSetNoticeSupported |
                                            sa_cap::kIsUdMulticastSupported |
                                            sa_cap::kIsMultiPathSupported |
                                            sa_cap::kIsPortInfoCapMaskMatchSupported;
inline constexpr uint32_t kCapabilityMask2 =
    sa_cap2::kIsMulticastFdbTopSupported | sa_cap2::kIsAliasGuidsSupported |
    sa_cap2::kIsFullPortInfoRecordSupported | sa_cap2::kIsExtendedSpeedsSupported |
    sa_cap2::kIsMulticastServiceRecordsSupported | sa_cap2::kIsPortInfoCapMask2MatchSupported |
    sa_cap2::kIsSendOnlyFullMemberSupported | sa_cap2::kIsLinkWidth2xSupported |
    sa_cap2::kIsLinkSpeedHdrSupported;
// 4.096 us * 2^16 = 268 ms: the smallest encoding not below OpenSM's default
// 200 ms transaction timeout.
inline constexpr uint8_t kRespTimeValue = 16;
// Redirection and traps: none, on QP1 with its well-known Q_Key.
inline constexpr uint32_t kRedirectQp = 1;
inline constexpr uint32_t kQp1QKey = 0x80010000;
static_assert(kCapabilityMask == 0x2602);
static_assert(kCapabilityMask2 == 0xB5E8);
}  // namespace opensm_sa_cpi

}  // namespace ibfab::mad
