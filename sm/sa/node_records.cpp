#include "sm/sa/node_records.h"

#include <cstring>

#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace nr = mad::nr_comp;

// NodeDescriptions compare as strncmp over the 64 bytes does.
bool same_description(const std::string& a, const std::string& b) {
  const std::size_t n = mad::NodeDescription::kSize;
  return std::strncmp(a.c_str(), b.c_str(), n) == 0;
}

bool node_matches(const SubnetNode& n, const mad::NodeRecord& req, uint64_t mask) {
  const mad::NodeInfo& q = req.node_info;
  const mad::NodeInfo& i = n.info;
  if ((mask & nr::kNodeGuid) && i.node_guid != q.node_guid) return false;
  if ((mask & nr::kSystemImageGuid) && i.system_image_guid != q.system_image_guid) return false;
  if ((mask & nr::kBaseVersion) && i.base_version != q.base_version) return false;
  if ((mask & nr::kClassVersion) && i.class_version != q.class_version) return false;
  if ((mask & nr::kNodeType) && i.node_type != q.node_type) return false;
  if ((mask & nr::kNumPorts) && i.num_ports != q.num_ports) return false;
  if ((mask & nr::kPartitionCap) && i.partition_cap != q.partition_cap) return false;
  if ((mask & nr::kDeviceId) && i.device_id != q.device_id) return false;
  if ((mask & nr::kRevision) && i.revision != q.revision) return false;
  if ((mask & nr::kVendorId) && i.vendor_id != q.vendor_id) return false;
  if ((mask & nr::kNodeDescription) && !same_description(n.description, req.node_description.text))
    return false;
  return true;
}

}  // namespace

void node_records(const Subnet& s, uint32_t requester, const mad::NodeRecord& req, uint64_t mask,
                  std::vector<mad::NodeRecord>& out) {
  out.clear();
  if (requester >= s.ports.size()) return;
  const SubnetPort& rp = s.ports[requester];
  for (const uint32_t idx : s.nodes_in_table_order()) {
    const SubnetNode& n = s.nodes[idx];
    if (!node_matches(n, req, mask)) continue;
    const std::size_t first = n.is_switch() ? 0 : 1;
    const std::size_t end = n.is_switch() ? 1 : n.port_guids.size();
    for (std::size_t pn = first; pn < end; ++pn) {
      const uint64_t guid = n.is_switch() ? n.info.node_guid : n.port_guids[pn];
      const SubnetPort* p = guid ? s.by_guid(guid) : nullptr;
      if (!p || !pkey::shared(p->pkeys, rp.pkeys)) continue;
      if ((mask & nr::kPortGuid) && guid != req.node_info.port_guid) continue;
      if ((mask & nr::kLid) && (req.lid < p->lid || req.lid > p->lid + (1u << p->lmc) - 1)) continue;
      if ((mask & nr::kLocalPortNum) && pn != req.node_info.local_port_num) continue;
      mad::NodeRecord r;
      r.lid = p->lid;
      r.node_info = n.info;
      r.node_info.port_guid = guid;
      r.node_info.local_port_num = static_cast<uint8_t>(pn);
      r.node_description.text = n.description;
      out.push_back(r);
    }
  }
}

}  // namespace ibfab::sm
