#include "fabric/wire/mad_view.h"

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

const char* to_string(MadError e) {
  switch (e) {
    case MadError::kNone: return "ok";
    case MadError::kTooShort: return "MAD shorter than 256 bytes";
    case MadError::kBadBaseVersion: return "MAD BaseVersion is not 1";
  }
  return "unknown MAD error";
}

MadView parse_mad(std::span<const uint8_t> bytes) {
  MadView v;
  if (bytes.size() < kMadSize) return v;
  v.raw = bytes.first(kMadSize);
  Reader r(v.raw);
  v.header = *MadHeader::unpack(r);  // 24 <= 256: cannot run out
  if (v.header.base_version != MadHeader::kBaseVersion) {
    v.error = MadError::kBadBaseVersion;
    return v;
  }
  const uint8_t cls = v.header.mgmt_class;
  if (v.is_smp()) {
    v.data = v.raw.subspan(SmpLayout::kDataOffset, SmpLayout::kDataSize);
  } else if (cls == mgmt_class::kSubnAdm ||
             (cls >= mgmt_class::kVendorRange2Start && cls <= mgmt_class::kVendorRange2End)) {
    v.rmpp = RmppHeader::unpack(r);
    if (cls == mgmt_class::kSubnAdm) {
      v.sa = SaHeader::unpack(r);
      v.data = v.raw.subspan(SaHeader::kDataOffset);
    } else {
      v.data = v.raw.subspan(RmppHeader::kOffset + RmppHeader::kSize);
    }
  } else {
    v.data = v.raw.subspan(MadHeader::kSize);
  }
  v.error = MadError::kNone;
  return v;
}

}  // namespace ibfab::wire
