#include "fabric/mad/sa/node_record.h"

#include <algorithm>
#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {
namespace {

// The bytes of `data` from `offset` on; empty when data is shorter.
std::span<const uint8_t> from(std::span<const uint8_t> data, std::size_t offset) {
  return data.subspan(std::min(offset, data.size()));
}

}  // namespace

void NodeRecord::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u16(lid);
  w.u16(0);
  node_info.pack(data.subspan(kNodeInfoOffset, NodeInfo::kSize));
  node_description.pack(data.subspan(kNodeDescriptionOffset, NodeDescription::kSize));
}

NodeRecord NodeRecord::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  NodeRecord n;
  n.lid = r.u16();
  n.node_info = NodeInfo::unpack(from(data, kNodeInfoOffset));
  n.node_description = NodeDescription::unpack(from(data, kNodeDescriptionOffset));
  return n;
}

}  // namespace ibfab::mad
