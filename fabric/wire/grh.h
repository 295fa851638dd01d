#pragma once
// Global Route Header (IBTA Vol 1, 8.3): 40 bytes, laid out as an IPv6
// header.
//
//   0..3     IPVer(31:28)=6  TClass(27:20)  FlowLabel(19:0)
//   4..5     PayLen: bytes after the GRH up to and including the ICRC
//   6        NxtHdr: 0x1B when a BTH follows
//   7        HopLmt
//   8..23    SGID
//   24..39   DGID
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/gid.h"

namespace ibfab::wire {

struct Grh {
  static constexpr std::size_t kSize = 40;
  static constexpr uint8_t kIpVersion = 6;
  static constexpr uint8_t kNxtHdrIba = 0x1b;
  static constexpr uint32_t kMaxFlowLabel = 0xfffff;

  uint8_t ip_ver = kIpVersion;  // 4 bits
  uint8_t tclass = 0;
  uint32_t flow_label = 0;      // 20 bits
  uint16_t pay_len = 0;
  uint8_t nxt_hdr = kNxtHdrIba;
  uint8_t hop_limit = 0;
  Gid sgid;
  Gid dgid;

  void pack(Writer& w) const;
  // nullopt only if r runs out; field values are not validated here.
  static std::optional<Grh> unpack(Reader& r);

  friend bool operator==(const Grh&, const Grh&) = default;
};

}  // namespace ibfab::wire
