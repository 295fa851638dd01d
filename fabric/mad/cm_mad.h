#pragma once
// A Communication Manager MAD (IBTA 1.3 vol 1, 12.6; management class 0x07,
// ClassVersion 2): the 24-byte common MAD header, method Send, then one CM
// message in the remaining 232 bytes. The messages are plain structs, one
// header each (cm_req.h, cm_rep.h, cm_rtu.h, cm_rej.h, cm_mra.h, cm_dreq.h
// for DREQ and DREP, cm_lap.h for LAP and APR, cm_sidr.h), each with
//   static constexpr uint16_t kAttributeId; static constexpr size_t kSize;
//   void pack(std::span<uint8_t, kSize>) const;   // every byte, reserved = 0
//   static ... unpack(std::span<const uint8_t ...>);  // reserved ignored
// and this header turns any of them into, or back out of, a whole MAD.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/wire/mad_header.h"

namespace ibfab::mad {

inline constexpr uint8_t kCmClass = wire::mgmt_class::kComMgt;
inline constexpr uint8_t kCmClassVersion = 2;
inline constexpr std::size_t kCmDataOffset = wire::MadHeader::kSize;
inline constexpr std::size_t kCmDataSize = wire::kMadSize - kCmDataOffset;  // 232

using CmMad = std::array<uint8_t, wire::kMadSize>;
using CmData = std::span<uint8_t, kCmDataSize>;
using ConstCmData = std::span<const uint8_t, kCmDataSize>;

// CM AttributeIDs (IBTA 1.3 vol 1, 12.6).
namespace cm_attr {
inline constexpr uint16_t kClassPortInfo = 0x0001;
inline constexpr uint16_t kReq = 0x0010;
inline constexpr uint16_t kMra = 0x0011;
inline constexpr uint16_t kRej = 0x0012;
inline constexpr uint16_t kRep = 0x0013;
inline constexpr uint16_t kRtu = 0x0014;
inline constexpr uint16_t kDreq = 0x0015;
inline constexpr uint16_t kDrep = 0x0016;
inline constexpr uint16_t kSidrReq = 0x0017;
inline constexpr uint16_t kSidrRep = 0x0018;
inline constexpr uint16_t kLap = 0x0019;
inline constexpr uint16_t kApr = 0x001A;
}  // namespace cm_attr

// The message bytes of a whole CM MAD.
inline CmData cm_data(CmMad& mad) { return CmData(mad.data() + kCmDataOffset, kCmDataSize); }
inline ConstCmData cm_data(const CmMad& mad) {
  return ConstCmData(mad.data() + kCmDataOffset, kCmDataSize);
}

// Writes a CM MAD's common header into mad[0, 24): BaseVersion 1, class
// 0x07, ClassVersion 2, method Send, status 0, ClassSpecific 0, `tid`,
// `attr_id`, reserved 0, `attr_mod` (0 but where the kernel's ECE puts the
// REQ's and REP's options).
void pack_cm_header(CmMad& mad, uint64_t tid, uint16_t attr_id, uint32_t attr_mod);

// The header of `mad` when it is a CM MAD: at least 256 bytes, BaseVersion
// 1, class 0x07, ClassVersion 2; nullopt otherwise.
std::optional<wire::MadHeader> cm_header(std::span<const uint8_t> mad);

// A whole CM MAD carrying `m`.
template <class Message>
CmMad make_cm_mad(uint64_t tid, const Message& m, uint32_t attr_mod = 0) {
  CmMad mad{};
  pack_cm_header(mad, tid, Message::kAttributeId, attr_mod);
  m.pack(cm_data(mad));
  return mad;
}

// The Message in a whole CM MAD: nullopt when `mad` is short, is not a CM
// MAD (cm_header), or carries another attribute.
template <class Message>
std::optional<Message> cm_message(std::span<const uint8_t> mad) {
  const std::optional<wire::MadHeader> h = cm_header(mad);
  if (!h || h->attr_id != Message::kAttributeId) return std::nullopt;
  return Message::unpack(ConstCmData(mad.data() + kCmDataOffset, kCmDataSize));
}

}  // namespace ibfab::mad
