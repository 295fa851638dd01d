#include "sm/sa/port_table_records.h"

#include <algorithm>

#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace pk = mad::pkr_comp;
namespace gi = mad::gir_comp;

void pkey_blocks(const SubnetPort& p, uint8_t port_num, const mad::PKeyTableRecord& req,
                 uint64_t mask, std::vector<mad::PKeyTableRecord>& out) {
  constexpr std::size_t kPer = mad::PKeyTable::kEntriesPerBlock;
  const std::size_t blocks = (p.pkeys.size() + kPer - 1) / kPer;
  const auto one = [&](std::size_t b) {
    mad::PKeyTableRecord r;
    r.lid = p.lid;
    r.block = static_cast<uint16_t>(b);
    r.port = port_num;
    for (std::size_t k = 0; k < kPer && b * kPer + k < p.pkeys.size(); ++k)
      r.table.p_key[k] = p.pkeys[b * kPer + k];
    out.push_back(r);
  };
  if (mask & pk::kBlock) one(req.block);
  else
    for (std::size_t b = 0; b < blocks; ++b) one(b);
}

void pkey_of_port(const Subnet& s, const SubnetPort& req_port, const SubnetPort& p,
                  const mad::PKeyTableRecord& req, uint64_t mask,
                  std::vector<mad::PKeyTableRecord>& out) {
  const SubnetNode* n = s.node(p.node_guid);
  if (!n) return;
  uint8_t port_num = req.port;
  if (!p.is_switch) {
    port_num = p.port;
    mask |= pk::kPort;
  }
  const auto visit = [&](uint8_t pn) {
    // Only end ports have a table the SM read (see the header).
    if (p.is_switch && pn != 0) return;
    if (!pkey::shared(req_port.pkeys, p.pkeys)) return;
    pkey_blocks(p, pn, req, mask, out);
  };
  if (mask & pk::kPort) {
    if (port_num < n->ports.size()) visit(port_num);
  } else {
    for (std::size_t pn = 0; pn < n->ports.size(); ++pn) visit(static_cast<uint8_t>(pn));
  }
}

}  // namespace

void pkey_table_records(const Subnet& s, uint32_t requester, const mad::PKeyTableRecord& req,
                        uint64_t mask, std::vector<mad::PKeyTableRecord>& out) {
  out.clear();
  if (requester >= s.ports.size()) return;
  const SubnetPort& rp = s.ports[requester];
  if (mask & pk::kLid) {
    if (const SubnetPort* p = s.by_lid(req.lid)) pkey_of_port(s, rp, *p, req, mask, out);
    return;
  }
  for (const SubnetPort* p : s.ports_in_table_order()) pkey_of_port(s, rp, *p, req, mask, out);
}

void guid_info_records(const Subnet& s, uint32_t requester, const mad::GuidInfoRecord& req,
                       uint64_t mask, std::vector<mad::GuidInfoRecord>& out) {
  out.clear();
  if (requester >= s.ports.size()) return;
  const SubnetPort& rp = s.ports[requester];
  const uint16_t match_lid = (mask & gi::kLid) ? req.lid : 0;
  const int match_block = (mask & gi::kBlock) ? req.block : -1;
  uint64_t match_guid = 0;
  if (mask & (gi::kGid0 << 0)) {
    if (req.block == 0) match_guid = rp.guid;
    if (req.guid_info.guid[0] != match_guid) return;
  }
  for (unsigned k = 1; k < 8; ++k)
    if ((mask & (gi::kGid0 << k)) && req.guid_info.guid[k] != 0) return;
  for (const uint32_t i : s.nodes_in_table_order()) {
    const SubnetNode& n = s.nodes[i];
    const std::size_t last = n.is_switch() ? 1 : n.ports.size();
    for (std::size_t pn = n.is_switch() ? 0 : 1; pn < last; ++pn) {
      const uint64_t guid = n.is_switch() ? n.info.node_guid : n.port_guids[pn];
      const SubnetPort* p = guid ? s.by_guid(guid) : nullptr;
      if (!p || !n.ports[pn].known) continue;
      if (!pkey::shared(p->pkeys, rp.pkeys)) continue;
      if (match_guid && guid != match_guid) continue;
      const uint8_t cap = n.ports[pn].info.guid_cap;
      if (cap == 0) continue;
      const int blocks = (cap + 7) / 8;
      int first = 0, end = blocks;
      if (match_block >= 0) {
        if (match_block >= blocks) continue;
        first = match_block;
        end = match_block + 1;
      }
      if (match_lid && (match_lid < p->lid || match_lid > p->lid + (1u << p->lmc) - 1)) continue;
      for (int b = first; b < end; ++b) {
        mad::GuidInfoRecord r;
        r.lid = p->lid;
        r.block = static_cast<uint8_t>(b);
        if (b == 0) r.guid_info.guid[0] = guid;
        out.push_back(r);
      }
    }
  }
}

}  // namespace ibfab::sm
