#include "fabric/mad/sa/sa_mad.h"

#include <algorithm>
#include <cassert>

#include "fabric/mad/class_port_info.h"
#include "fabric/mad/notice.h"
#include "fabric/mad/sa/guid_info_record.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/inform_info_record.h"
#include "fabric/mad/sa/lft_record.h"
#include "fabric/mad/sa/link_record.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/mft_record.h"
#include "fabric/mad/sa/node_record.h"
#include "fabric/mad/sa/path_record.h"
#include "fabric/mad/sa/pkey_table_record.h"
#include "fabric/mad/sa/port_info_record.h"
#include "fabric/mad/sa/service_record.h"
#include "fabric/mad/sa/sl_to_vl_table_record.h"
#include "fabric/mad/sa/sm_info_record.h"
#include "fabric/mad/sa/switch_info_record.h"
#include "fabric/mad/sa/vl_arbitration_table_record.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/rmpp_header.h"

namespace ibfab::mad {
namespace {

constexpr uint16_t words_of(std::size_t record_size) {
  return static_cast<uint16_t>((record_size + 7) / 8);
}

static_assert(words_of(McMemberRecord::kSize) == McMemberRecord::kAttributeOffset);
static_assert(words_of(PathRecord::kSize) == PathRecord::kAttributeOffset);
static_assert(words_of(NodeRecord::kSize) == NodeRecord::kAttributeOffset);
static_assert(words_of(PortInfoRecord::kSize) == PortInfoRecord::kAttributeOffset);
static_assert(words_of(InformInfo::kSize) == InformInfo::kAttributeOffset);

}  // namespace

uint16_t sa_attribute_offset_for(uint16_t attribute_id) {
  switch (attribute_id) {
    case ClassPortInfo::kAttributeId: return words_of(ClassPortInfo::kSize);
    case Notice::kAttributeId: return words_of(Notice::kSize);
    case InformInfo::kAttributeId: return InformInfo::kAttributeOffset;
    case NodeRecord::kAttributeId: return NodeRecord::kAttributeOffset;
    case PortInfoRecord::kAttributeId: return PortInfoRecord::kAttributeOffset;
    case PathRecord::kAttributeId: return PathRecord::kAttributeOffset;
    case McMemberRecord::kAttributeId: return McMemberRecord::kAttributeOffset;
    case LinkRecord::kAttributeId: return LinkRecord::kAttributeOffset;
    case SwitchInfoRecord::kAttributeId: return SwitchInfoRecord::kAttributeOffset;
    case LftRecord::kAttributeId: return LftRecord::kAttributeOffset;
    case MftRecord::kAttributeId: return MftRecord::kAttributeOffset;
    case SmInfoRecord::kAttributeId: return SmInfoRecord::kAttributeOffset;
    case PKeyTableRecord::kAttributeId: return PKeyTableRecord::kAttributeOffset;
    case GuidInfoRecord::kAttributeId: return GuidInfoRecord::kAttributeOffset;
    case ServiceRecord::kAttributeId: return ServiceRecord::kAttributeOffset;
    case InformInfoRecord::kAttributeId: return InformInfoRecord::kAttributeOffset;
    case SlToVlTableRecord::kAttributeId: return SlToVlTableRecord::kAttributeOffset;
    case VlArbitrationTableRecord::kAttributeId: return VlArbitrationTableRecord::kAttributeOffset;
    default: return 0;
  }
}

void init_sa_request(SaBuffer mad, uint8_t method, uint16_t attribute_id, uint64_t tid,
                     uint64_t component_mask, uint64_t sm_key) {
  std::fill(mad.begin(), mad.end(), uint8_t{0});
  wire::Writer w(mad);
  wire::MadHeader h;
  h.mgmt_class = kSaClass;
  h.class_version = kSaClassVersion;
  h.method = method;
  h.tid = tid;
  h.attr_id = attribute_id;
  h.pack(w);
  wire::RmppHeader{}.pack(w);
  wire::SaHeader sa;
  sa.sm_key = sm_key;
  sa.attr_offset = sa_attribute_offset_for(attribute_id);
  sa.comp_mask = component_mask;
  sa.pack(w);
  assert(w.ok() && w.pos() == kSaDataOffset);
}

std::size_t sa_records_in(std::span<const uint8_t> payload, uint16_t attribute_offset) {
  if (attribute_offset == 0) return 0;
  return payload.size() / (std::size_t{attribute_offset} * 8);
}

std::span<const uint8_t> sa_record(std::span<const uint8_t> payload, uint16_t attribute_offset,
                                   std::size_t i) {
  assert(i < sa_records_in(payload, attribute_offset));
  const std::size_t size = std::size_t{attribute_offset} * 8;
  return payload.subspan(i * size, size);
}

}  // namespace ibfab::mad
