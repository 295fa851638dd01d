#pragma once
// P_KeyTableRecord (SA attribute 0x0033, IBTA 1.3 vol 1, 15.2.5.11): 72 bytes
// (AttributeOffset 9).
//
//   0 LID   2 BlockNum   4 PortNum   5 reserved(24)   8 P_KeyTable(64)
// LID: a CA port's own, or the switch's port 0 LID; PortNum is the
// switch port (a CA's is its port number too, as OpenSM fills it).
// The embedded block uses the SMP codec (pkey_table.h).
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/mad/pkey_table.h"

namespace ibfab::mad {

namespace pkr_comp {
inline constexpr uint64_t kLid = 1ull << 0;
inline constexpr uint64_t kBlock = 1ull << 1;
inline constexpr uint64_t kPort = 1ull << 2;
}  // namespace pkr_comp

struct PKeyTableRecord {
  static constexpr uint16_t kAttributeId = 0x0033;
  static constexpr std::size_t kSize = 72;
  static constexpr uint16_t kAttributeOffset = 9;
  static constexpr std::size_t kBlockOffset = 8;

  uint16_t lid = 0;
  // BlockNum goes little-endian, as OpenSM 3.3.23 sends it and reads it
  // (a host-order field in its ib_pkey_table_record_t, on x86) and as
  // saquery prints it; the IBTA and Wireshark read the field big-endian.
  uint16_t block = 0;
  uint8_t port = 0;
  PKeyTable table{};

  // Writes kSize bytes at the start of `data` (precondition: size >= kSize).
  void pack(std::span<uint8_t> data) const;
  // Reads the first kSize bytes; fields past a short span read as zero.
  static PKeyTableRecord unpack(std::span<const uint8_t> data);

  friend bool operator==(const PKeyTableRecord&, const PKeyTableRecord&) = default;
};

}  // namespace ibfab::mad
