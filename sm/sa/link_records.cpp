#include "sm/sa/link_records.h"

#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace lr = mad::lr_comp;

struct Query {
  const Subnet& s;
  const std::vector<uint16_t>& req_pkeys;
  const mad::LinkRecord& req;
  uint64_t mask;
  std::vector<mad::LinkRecord>& out;

  // The link from (sn, sp) to (dn, dp); dn < 0: whatever sp is cabled to;
  // sn < 0: whatever is cabled to (dn, dp).
  void link(int32_t sn, uint8_t sp, int32_t dn, uint8_t dp) {
    if (sn >= 0) {
      const SubnetNode& a = s.nodes[static_cast<uint32_t>(sn)];
      if (sp >= a.ports.size()) return;
      const SubnetNodePort& ap = a.ports[sp];
      if (ap.peer_node < 0) return;
      if (dn >= 0 && (ap.peer_node != dn || ap.peer_port != dp)) return;
      dn = ap.peer_node;
      dp = ap.peer_port;
    } else {
      const SubnetNode& b = s.nodes[static_cast<uint32_t>(dn)];
      if (dp >= b.ports.size() || b.ports[dp].peer_node < 0) return;
      sn = b.ports[dp].peer_node;
      sp = b.ports[dp].peer_port;
    }
    const SubnetNode& a = s.nodes[static_cast<uint32_t>(sn)];
    const SubnetNode& b = s.nodes[static_cast<uint32_t>(dn)];
    const auto& ak = pkey::port_pkeys(s, a, sp);
    const auto& bk = pkey::port_pkeys(s, b, dp);
    if (!pkey::shared(ak, bk) || !pkey::shared(ak, req_pkeys) || !pkey::shared(req_pkeys, bk)) return;
    if ((mask & lr::kFromPort) && sp != req.from_port) return;
    if ((mask & lr::kToPort) && dp != req.to_port) return;
    const uint16_t from = s.base_lid(a, sp), to = s.base_lid(b, dp);
    const auto lmc_mask = static_cast<uint16_t>(~((1u << s.lmc) - 1));
    if ((mask & lr::kFromLid) && from != (req.from_lid & lmc_mask)) return;
    if ((mask & lr::kToLid) && to != (req.to_lid & lmc_mask)) return;
    out.push_back(mad::LinkRecord{from, sp, dp, to});
  }
};

// The node owning `lid`, or -1.
int32_t node_of_lid(const Subnet& s, uint16_t lid) {
  const SubnetPort* p = s.by_lid(lid);
  if (!p) return -1;
  auto it = s.node_by_guid.find(p->node_guid);
  return it == s.node_by_guid.end() ? -1 : static_cast<int32_t>(it->second);
}

}  // namespace

void link_records(const Subnet& s, uint32_t requester, const mad::LinkRecord& req, uint64_t mask,
                  std::vector<mad::LinkRecord>& out) {
  out.clear();
  if (requester >= s.ports.size()) return;
  Query q{s, s.ports[requester].pkeys, req, mask, out};
  int32_t src = -1, dst = -1;
  if (mask & lr::kFromLid) {
    src = node_of_lid(s, req.from_lid);
    if (src < 0) return;
  }
  if (mask & lr::kToLid) {
    dst = node_of_lid(s, req.to_lid);
    if (dst < 0) return;
  }
  const auto ports_of = [&](int32_t n) {
    return static_cast<uint8_t>(s.nodes[static_cast<uint32_t>(n)].ports.size());
  };
  if (src >= 0 && dst >= 0) {
    for (uint8_t sp = 1; sp < ports_of(src); ++sp)
      for (uint8_t dp = 1; dp < ports_of(dst); ++dp) q.link(src, sp, dst, dp);
  } else if (src >= 0) {
    if (mask & lr::kFromPort) q.link(src, req.from_port, -1, 0);
    else
      for (uint8_t sp = 1; sp < ports_of(src); ++sp) q.link(src, sp, -1, 0);
  } else if (dst >= 0) {
    if (mask & lr::kToPort) q.link(-1, 0, dst, req.to_port);
    else
      for (uint8_t dp = 1; dp < ports_of(dst); ++dp) q.link(-1, 0, dst, dp);
  } else {
    for (const uint32_t n : s.nodes_in_table_order())
      for (uint8_t sp = 1; sp < ports_of(static_cast<int32_t>(n)); ++sp)
        q.link(static_cast<int32_t>(n), sp, -1, 0);
  }
}

}  // namespace ibfab::sm
