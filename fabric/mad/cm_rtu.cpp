#include "fabric/mad/cm_rtu.h"

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

template <uint16_t AttributeId>
void CmIdsMessage<AttributeId>::pack(std::span<uint8_t, kSize> out) const {
  wire::Writer w(out);
  w.u32(local_comm_id);
  w.u32(remote_comm_id);
  w.bytes(private_data.data(), private_data.size());
}

template <uint16_t AttributeId>
std::optional<CmIdsMessage<AttributeId>> CmIdsMessage<AttributeId>::unpack(std::span<const uint8_t> in) {
  if (in.size() < kSize) return std::nullopt;
  wire::Reader r(in);
  CmIdsMessage m;
  m.local_comm_id = r.u32();
  m.remote_comm_id = r.u32();
  r.bytes(m.private_data.data(), m.private_data.size());
  return m;
}

template struct CmIdsMessage<cm_attr::kRtu>;
template struct CmIdsMessage<cm_attr::kDrep>;

}  // namespace ibfab::mad
