#include "sm/sa/switch_records.h"

#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

// The switches the requester may see, in OpenSM's node table order, with
// their port 0.
template <class F>
void each_visible_switch(const Subnet& s, uint32_t requester, F f) {
  if (requester >= s.ports.size()) return;
  const SubnetPort& req = s.ports[requester];
  for (const uint32_t i : s.nodes_in_table_order()) {
    const SubnetNode& n = s.nodes[i];
    if (!n.is_switch()) continue;
    const SubnetPort* port0 = s.by_guid(n.info.node_guid);
    if (!port0 || !pkey::shared(req, *port0)) continue;
    f(n, *port0);
  }
}

bool in_range(const SubnetPort& p, uint16_t lid) {
  return lid >= p.lid && lid <= p.lid + (1u << p.lmc) - 1;
}

}  // namespace

void switch_info_records(const Subnet& s, uint32_t requester, const mad::SwitchInfoRecord& req,
                         uint64_t mask, std::vector<mad::SwitchInfoRecord>& out) {
  out.clear();
  if ((mask & mad::swir_comp::kLid) && req.lid == 0) return;
  each_visible_switch(s, requester, [&](const SubnetNode& n, const SubnetPort& port0) {
    if ((mask & mad::swir_comp::kLid) && !in_range(port0, req.lid)) return;
    out.push_back(mad::SwitchInfoRecord{port0.lid, n.switch_info});
  });
}

void lft_records(const Subnet& s, uint32_t requester, const mad::LftRecord& req, uint64_t mask,
                 std::vector<mad::LftRecord>& out) {
  out.clear();
  each_visible_switch(s, requester, [&](const SubnetNode& n, const SubnetPort& port0) {
    if ((mask & mad::lftr_comp::kLid) && !in_range(port0, req.lid)) return;
    uint16_t first = 0, last = static_cast<uint16_t>(n.switch_info.linear_fdb_top / 64);
    if (mask & mad::lftr_comp::kBlock) {
      if (req.block > last) return;
      first = last = req.block;
    }
    static const std::vector<uint8_t> kNone;
    const std::vector<uint8_t>& lft =
        n.routing_index >= 0 && static_cast<std::size_t>(n.routing_index) < s.routes.lft.size()
            ? s.routes.lft[static_cast<std::size_t>(n.routing_index)]
            : kNone;
    for (uint32_t b = first; b <= last; ++b) {
      mad::LftRecord r;
      r.lid = port0.lid;
      r.block = static_cast<uint16_t>(b);
      for (std::size_t k = 0; k < 64; ++k) {
        const std::size_t lid = std::size_t{b} * 64 + k;
        r.lft.port[k] = lid < lft.size() ? lft[lid] : mad::LinearForwardingTable::kNoPort;
      }
      out.push_back(r);
    }
  });
}

void mft_records(const Subnet& s, const MftView& mfts, uint32_t requester, const mad::MftRecord& req,
                 uint64_t mask, std::vector<mad::MftRecord>& out) {
  out.clear();
  each_visible_switch(s, requester, [&](const SubnetNode& n, const SubnetPort& port0) {
    if ((mask & mad::mftr_comp::kLid) && !in_range(port0, req.lid)) return;
    const uint16_t top = mfts.mft_top(n.info.node_guid);
    if (top < mad::MulticastForwardingTable::kMulticastLidBase) return;
    const auto last_block = static_cast<uint16_t>((top - mad::MulticastForwardingTable::kMulticastLidBase) /
                                                  mad::MulticastForwardingTable::kEntriesPerBlock);
    const auto last_position = static_cast<uint8_t>((n.info.num_ports + 1u + 15u) / 16u - 1u);
    uint16_t b0 = 0, b1 = last_block;
    uint8_t p0 = 0, p1 = last_position;
    if (mask & mad::mftr_comp::kBlock) {
      if (req.block > last_block) return;
      b0 = b1 = req.block;
    }
    if (mask & mad::mftr_comp::kPosition) {
      if (req.position > last_position) return;
      p0 = p1 = req.position;
    }
    for (uint32_t b = b0; b <= b1; ++b)
      for (uint32_t p = p0; p <= p1; ++p) {
        mad::MftRecord r;
        r.lid = port0.lid;
        r.block = static_cast<uint16_t>(b);
        r.position = static_cast<uint8_t>(p);
        r.mft = mfts.mft_block(n.info.node_guid, mad::MftAddress{r.block, r.position});
        out.push_back(r);
      }
  });
}

}  // namespace ibfab::sm
