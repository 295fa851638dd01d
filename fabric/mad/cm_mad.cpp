#include "fabric/mad/cm_mad.h"

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void pack_cm_header(CmMad& mad, uint64_t tid, uint16_t attr_id, uint32_t attr_mod) {
  wire::MadHeader h;
  h.mgmt_class = kCmClass;
  h.class_version = kCmClassVersion;
  h.method = wire::mad_method::kSend;
  h.tid = tid;
  h.attr_id = attr_id;
  h.attr_mod = attr_mod;
  wire::Writer w(mad);
  h.pack(w);
}

std::optional<wire::MadHeader> cm_header(std::span<const uint8_t> mad) {
  if (mad.size() < wire::kMadSize) return std::nullopt;
  wire::Reader r(mad);
  std::optional<wire::MadHeader> h = wire::MadHeader::unpack(r);
  if (!h || h->base_version != wire::MadHeader::kBaseVersion || h->mgmt_class != kCmClass ||
      h->class_version != kCmClassVersion)
    return std::nullopt;
  return h;
}

}  // namespace ibfab::mad
