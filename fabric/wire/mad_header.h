#pragma once
// The common MAD header (IBTA Vol 1, 13.4.2): the first 24 of every MAD's
// 256 bytes.
//
//   0 BaseVersion   1 MgmtClass   2 ClassVersion   3 Method (bit 7: response)
//   4..5 Status     6..7 ClassSpecific (SMP: HopPointer, HopCount)
//   8..15 TID       16..17 AttributeID   18..19 reserved
//   20..23 AttributeModifier
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

inline constexpr std::size_t kMadSize = 256;

namespace mgmt_class {
inline constexpr uint8_t kSubnLid = 0x01;        // LID-routed SMP
inline constexpr uint8_t kSubnAdm = 0x03;        // SA
inline constexpr uint8_t kPerfMgt = 0x04;
inline constexpr uint8_t kBaseboard = 0x05;
inline constexpr uint8_t kDevMgt = 0x06;
inline constexpr uint8_t kComMgt = 0x07;         // CM
inline constexpr uint8_t kSnmp = 0x08;
inline constexpr uint8_t kVendorRange2Start = 0x30;  // vendor classes with RMPP
inline constexpr uint8_t kVendorRange2End = 0x4f;
inline constexpr uint8_t kSubnDirected = 0x81;   // directed-route SMP
}  // namespace mgmt_class

namespace mad_method {
inline constexpr uint8_t kGet = 0x01;
inline constexpr uint8_t kSet = 0x02;
inline constexpr uint8_t kSend = 0x03;
inline constexpr uint8_t kTrap = 0x05;
inline constexpr uint8_t kReport = 0x06;
inline constexpr uint8_t kTrapRepress = 0x07;
inline constexpr uint8_t kGetTable = 0x12;
inline constexpr uint8_t kGetTraceTable = 0x13;
inline constexpr uint8_t kGetMulti = 0x14;
inline constexpr uint8_t kDelete = 0x15;
inline constexpr uint8_t kResponseBit = 0x80;
inline constexpr uint8_t kGetResp = 0x81;
inline constexpr uint8_t kReportResp = 0x86;
inline constexpr uint8_t kGetTableResp = 0x92;
inline constexpr uint8_t kGetMultiResp = 0x94;
inline constexpr uint8_t kDeleteResp = 0x95;
}  // namespace mad_method

namespace mad_status {
inline constexpr uint16_t kOk = 0x0000;
inline constexpr uint16_t kBusy = 0x0001;
inline constexpr uint16_t kRedirect = 0x0002;
inline constexpr uint16_t kBadVersion = 0x0004;
inline constexpr uint16_t kMethodUnsupported = 0x0008;
inline constexpr uint16_t kMethodAttrUnsupported = 0x000c;
inline constexpr uint16_t kInvalidAttrValue = 0x001c;
inline constexpr uint16_t kInvalidFieldMask = 0x001c;  // bits 4:2
// SA class-specific status: code << 8.
inline constexpr uint16_t kSaNoResources = 0x0100;
inline constexpr uint16_t kSaReqInvalid = 0x0200;
inline constexpr uint16_t kSaNoRecords = 0x0300;
inline constexpr uint16_t kSaTooManyRecords = 0x0400;
inline constexpr uint16_t kSaInvalidGid = 0x0500;
inline constexpr uint16_t kSaInsufficientComponents = 0x0600;
inline constexpr uint16_t kSaDenied = 0x0700;
inline constexpr uint16_t kSaPrioritySuggested = 0x0800;
}  // namespace mad_status

struct MadHeader {
  static constexpr std::size_t kSize = 24;
  static constexpr uint8_t kBaseVersion = 1;
  static constexpr uint8_t kSmpClassVersion = 1;
  static constexpr uint8_t kSaClassVersion = 2;
  static constexpr uint8_t kPerfMgtClassVersion = 1;

  uint8_t base_version = kBaseVersion;
  uint8_t mgmt_class = 0;
  uint8_t class_version = 0;
  uint8_t method = 0;
  uint16_t status = 0;
  uint16_t class_specific = 0;
  uint64_t tid = 0;
  uint16_t attr_id = 0;
  uint32_t attr_mod = 0;

  bool is_response() const { return (method & mad_method::kResponseBit) != 0; }

  void pack(Writer& w) const;
  static std::optional<MadHeader> unpack(Reader& r);

  friend bool operator==(const MadHeader&, const MadHeader&) = default;
};

}  // namespace ibfab::wire
