#include "fabric/mad/node_info.h"

#include <cassert>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::mad {

void NodeInfo::pack(std::span<uint8_t> data) const {
  assert(data.size() >= kSize);
  wire::Writer w(data);
  w.u8(base_version);
  w.u8(class_version);
  w.u8(node_type);
  w.u8(num_ports);
  w.u64(system_image_guid);
  w.u64(node_guid);
  w.u64(port_guid);
  w.u16(partition_cap);
  w.u16(device_id);
  w.u32(revision);
  w.u8(local_port_num);
  w.u24(vendor_id & 0xFFFFFF);
}

NodeInfo NodeInfo::unpack(std::span<const uint8_t> data) {
  wire::Reader r(data);
  NodeInfo n;
  n.base_version = r.u8();
  n.class_version = r.u8();
  n.node_type = r.u8();
  n.num_ports = r.u8();
  n.system_image_guid = r.u64();
  n.node_guid = r.u64();
  n.port_guid = r.u64();
  n.partition_cap = r.u16();
  n.device_id = r.u16();
  n.revision = r.u32();
  n.local_port_num = r.u8();
  n.vendor_id = r.u24();
  return n;
}

}  // namespace ibfab::mad
