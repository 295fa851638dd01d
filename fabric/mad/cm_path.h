#pragma once
// A path as the CM carries it (IBTA 1.3 vol 1, 12.6): REQ's primary and
// alternate paths (message bytes 52-95 and 96-139) and LAP's alternate
// path (bytes 20-63). The two messages order the last eight bytes
// differently; offsets within the path's 44 bytes:
//   0 LocalPortLID(16)   2 RemotePortLID(16)
//   4 LocalPortGID(16 bytes)   20 RemotePortGID(16 bytes)
// REQ:
//  36 FlowLabel 31:12 | reserved 11:6 | PacketRate 5:0 (a 32-bit word)
//  40 TrafficClass  41 HopLimit
//  42 SL 7:4 | SubnetLocal 3 | reserved 2:0
//  43 LocalACKTimeout 7:3 | reserved 2:0 (the alternate path's bit 2 is
//     the REQ's SAP Supported, cm_req.h)
// LAP:
//  36 FlowLabel 31:12 | reserved 11:8 | TrafficClass 7:0 (a 32-bit word)
//  40 HopLimit  41 reserved 7:6 | PacketRate 5:0
//  42 SL 7:4 | SubnetLocal 3 | reserved 2:0
//  43 LocalACKTimeout 7:3 | reserved 2:0
// Local and remote are as the sender of the message sees them. Reserved
// bits are written as zero and ignored on reading.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/gid.h"

namespace ibfab::mad {

struct CmPath {
  static constexpr std::size_t kSize = 44;

  uint16_t local_lid = 0;
  uint16_t remote_lid = 0;
  Gid local_gid{};
  Gid remote_gid{};
  uint32_t flow_label = 0;        // 20 bits
  uint8_t packet_rate = 0;        // 6 bits, the IBTA rate encoding (PathRecord Rate)
  uint8_t traffic_class = 0;
  uint8_t hop_limit = 0;
  uint8_t sl = 0;                 // 4 bits
  bool subnet_local = false;
  uint8_t local_ack_timeout = 0;  // 5 bits: 4.096 us * 2^value

  // REQ's layout. Each field is masked to its width.
  void pack_req(std::span<uint8_t, kSize> out) const;
  static CmPath unpack_req(std::span<const uint8_t, kSize> in);
  // LAP's layout.
  void pack_lap(std::span<uint8_t, kSize> out) const;
  static CmPath unpack_lap(std::span<const uint8_t, kSize> in);

  friend bool operator==(const CmPath&, const CmPath&) = default;
};

}  // namespace ibfab::mad
