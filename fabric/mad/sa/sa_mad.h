#pragma once
// Whole SA MADs (management class 0x03, IBTA 1.3 vol 1, 15.2.1): field
// access over the 256 bytes, and the records of a GetTable response.
//
//   0 BaseVersion 1   1 MgmtClass 0x03   2 ClassVersion 2   3 Method
//   4 Status   8 TID(64)   16 AttributeID   20 AttributeModifier
//  24 RMPP header (12 bytes, wire/rmpp_header.h)
//  36 SM_Key(64)   44 AttributeOffset   46 reserved   48 ComponentMask(64)
//  56 data (200 bytes)
// A GetTable response carries its records back to back, each padded to
// AttributeOffset * 8 bytes; one that does not fit in 200 bytes is split
// into RMPP segments whose data areas concatenate into one payload.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fabric/wire/mad_header.h"
#include "fabric/wire/sa_header.h"

namespace ibfab::mad {

using SaBuffer = std::span<uint8_t, wire::kMadSize>;
using ConstSaBuffer = std::span<const uint8_t, wire::kMadSize>;

inline constexpr uint8_t kSaClass = wire::mgmt_class::kSubnAdm;
inline constexpr uint8_t kSaClassVersion = wire::MadHeader::kSaClassVersion;
inline constexpr std::size_t kSaSmKeyOffset = wire::SaHeader::kOffset;
inline constexpr std::size_t kSaAttributeOffsetOffset = wire::SaHeader::kOffset + 8;
inline constexpr std::size_t kSaComponentMaskOffset = wire::SaHeader::kOffset + 12;
inline constexpr std::size_t kSaDataOffset = wire::SaHeader::kDataOffset;
inline constexpr std::size_t kSaDataSize = wire::SaHeader::kDataSize;

// The AttributeOffset (record size in 8-byte words, rounded up) of the SA
// attributes this module has codecs for (ClassPortInfo, Notice, InformInfo
// and the records of fabric/mad/sa/). 0 for any other.
uint16_t sa_attribute_offset_for(uint16_t attribute_id);

// A fresh SA request: zeroes the MAD, then BaseVersion 1, class 0x03,
// ClassVersion 2, method, TID, AttributeID, SM_Key, ComponentMask and
// AttributeOffset = sa_attribute_offset_for(attribute_id). The RMPP header
// stays zero (a request fits in one MAD); the record goes in
// mutable_sa_data(mad).
// saquery (libibmad) leaves AttributeOffset 0 in its requests, OpenSM's own
// clients fill it in; an SA reads neither. set_sa_attribute_offset(mad, 0)
// gives saquery's bytes exactly.
void init_sa_request(SaBuffer mad, uint8_t method, uint16_t attribute_id, uint64_t tid,
                     uint64_t component_mask, uint64_t sm_key = 0);

inline uint8_t sa_method(ConstSaBuffer m) { return m[3]; }
inline uint16_t sa_status(ConstSaBuffer m) { return wire::load_be16(&m[4]); }
inline uint64_t sa_tid(ConstSaBuffer m) { return wire::load_be64(&m[8]); }
inline uint16_t sa_attribute_id(ConstSaBuffer m) { return wire::load_be16(&m[16]); }
inline uint32_t sa_attribute_modifier(ConstSaBuffer m) { return wire::load_be32(&m[20]); }
inline uint64_t sa_sm_key(ConstSaBuffer m) { return wire::load_be64(&m[kSaSmKeyOffset]); }
inline uint16_t sa_attribute_offset(ConstSaBuffer m) {
  return wire::load_be16(&m[kSaAttributeOffsetOffset]);
}
inline uint64_t sa_component_mask(ConstSaBuffer m) {
  return wire::load_be64(&m[kSaComponentMaskOffset]);
}
inline std::span<const uint8_t, kSaDataSize> sa_data(ConstSaBuffer m) {
  return m.subspan<kSaDataOffset, kSaDataSize>();
}

inline void set_sa_method(SaBuffer m, uint8_t v) { m[3] = v; }
inline void set_sa_status(SaBuffer m, uint16_t v) { wire::store_be16(&m[4], v); }
inline void set_sa_tid(SaBuffer m, uint64_t v) { wire::store_be64(&m[8], v); }
inline void set_sa_attribute_id(SaBuffer m, uint16_t v) { wire::store_be16(&m[16], v); }
inline void set_sa_attribute_modifier(SaBuffer m, uint32_t v) { wire::store_be32(&m[20], v); }
inline void set_sa_sm_key(SaBuffer m, uint64_t v) { wire::store_be64(&m[kSaSmKeyOffset], v); }
inline void set_sa_attribute_offset(SaBuffer m, uint16_t v) {
  wire::store_be16(&m[kSaAttributeOffsetOffset], v);
}
inline void set_sa_component_mask(SaBuffer m, uint64_t v) {
  wire::store_be64(&m[kSaComponentMaskOffset], v);
}
inline std::span<uint8_t, kSaDataSize> mutable_sa_data(SaBuffer m) {
  return m.subspan<kSaDataOffset, kSaDataSize>();
}

// The number of whole records of AttributeOffset `attribute_offset` in a
// GetTable payload (the data area of one MAD, or the reassembled data of an
// RMPP transfer): floor(size / (8 * attribute_offset)); 0 when the offset is
// 0, which is how an empty GetTableResp says it has no records.
std::size_t sa_records_in(std::span<const uint8_t> payload, uint16_t attribute_offset);

// Record i of that payload, 8 * attribute_offset bytes long.
// Precondition: i < sa_records_in(payload, attribute_offset).
std::span<const uint8_t> sa_record(std::span<const uint8_t> payload, uint16_t attribute_offset,
                                   std::size_t i);

}  // namespace ibfab::mad
