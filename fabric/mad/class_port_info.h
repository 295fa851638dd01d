#pragma once
// ClassPortInfo (attribute 0x0001 of every GSI class, IBTA 1.3 vol 1,
// 13.4.8.1): 72 bytes.
//
//   0 BaseVersion  1 ClassVersion  2 CapabilityMask(16)
//   4 CapabilityMask2 31:5 (27 bits) | RespTimeValue 4:0
//   8 RedirectGID(16 bytes)
//  24 RedirectTC 31:24 | RedirectSL 23:20 | RedirectFL 19:0
//  28 RedirectLID  30 RedirectP_Key  32 reserved 31:24 | RedirectQP 23:0
//  36 RedirectQ_Key  40 TrapGID(16 bytes)
//  56 TrapTC 31:24 | TrapSL 23:20 | TrapFL 19:0
//  60 TrapLID  62 TrapP_Key  64 TrapHL 31:24 | TrapQP 23:0  68 TrapQ_Key
// Class-specific capability bits: pma.h (PerfMgt).
#include <cstdint>
#include <span>

#include "fabric/mad/gid.h"

namespace ibfab::mad {

struct ClassPortInfo {
  static constexpr uint16_t kAttributeId = 0x0001;
  static constexpr std::size_t kSize = 72;

  uint8_t base_version = 1;
  uint8_t class_version = 1;
  uint16_t capability_mask = 0;
  uint32_t capability_mask2 = 0;  // 27 bits
  uint8_t resp_time_value = 0;    // 5 bits
  Gid redirect_gid{};
  uint8_t redirect_tc = 0;
  uint8_t redirect_sl = 0;        // 4 bits
  uint32_t redirect_fl = 0;       // 20 bits
  uint16_t redirect_lid = 0;
  uint16_t redirect_p_key = 0;
  uint32_t redirect_qp = 0;       // 24 bits
  uint32_t redirect_q_key = 0;
  Gid trap_gid{};
  uint8_t trap_tc = 0;
  uint8_t trap_sl = 0;            // 4 bits
  uint32_t trap_fl = 0;           // 20 bits
  uint16_t trap_lid = 0;
  uint16_t trap_p_key = 0;
  uint8_t trap_hl = 0;
  uint32_t trap_qp = 0;           // 24 bits
  uint32_t trap_q_key = 0;

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static ClassPortInfo unpack(std::span<const uint8_t> data);

  friend bool operator==(const ClassPortInfo&, const ClassPortInfo&) = default;
};

}  // namespace ibfab::mad
