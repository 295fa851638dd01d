#include "sm/sa/qos_table_records.h"

#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace sv = mad::slvr_comp;
namespace va = mad::vlar_comp;

// The end ports a query covers: the one owning a masked LID, or all.
template <class F>
void each_end_port(const Subnet& s, bool lid_masked, uint16_t lid, F f) {
  if (lid_masked) {
    if (const SubnetPort* p = s.by_lid(lid)) f(*p);
    return;
  }
  for (const SubnetPort* p : s.ports_in_table_order()) f(*p);
}

}  // namespace

void sl_to_vl_records(const Subnet& s, uint32_t requester, const mad::SlToVlTableRecord& req,
                      uint64_t mask, std::vector<mad::SlToVlTableRecord>& out) {
  out.clear();
  if (requester >= s.ports.size()) return;
  const SubnetPort& rp = s.ports[requester];
  each_end_port(s, mask & sv::kLid, req.lid, [&](const SubnetPort& p) {
    const SubnetNode* n = s.node(p.node_guid);
    if (!n) return;
    if (!p.is_switch) {
      if (pkey::shared(rp.pkeys, p.pkeys)) out.push_back(mad::SlToVlTableRecord{p.lid, 0, 0, {}});
      return;
    }
    const std::size_t last = n->ports.size() - 1;
    std::size_t out_first = 0, out_last = last, in_first = 0, in_last = last;
    if (mask & sv::kOutputPort) out_first = out_last = req.output_port;
    if (mask & sv::kInputPort) in_first = in_last = req.input_port;
    for (std::size_t o = out_first; o <= out_last && o <= last; ++o) {
      if (!pkey::shared(rp.pkeys, pkey::port_pkeys(s, *n, static_cast<uint8_t>(o)))) continue;
      for (std::size_t i = in_first; i <= in_last && i <= last; ++i)
        out.push_back(mad::SlToVlTableRecord{p.lid, static_cast<uint8_t>(i), static_cast<uint8_t>(o), {}});
    }
  });
}

void vl_arbitration_records(const Subnet& s, uint32_t requester,
                            const mad::VlArbitrationTableRecord& req, uint64_t mask,
                            std::vector<mad::VlArbitrationTableRecord>& out) {
  out.clear();
  if (requester >= s.ports.size()) return;
  const SubnetPort& rp = s.ports[requester];
  const auto blocks = [&](uint16_t lid, uint8_t port) {
    for (uint8_t b = 1; b <= 4; ++b)
      if (!(mask & va::kBlock) || b == req.block) {
        mad::VlArbitrationTableRecord r;
        r.lid = lid;
        r.port = port;
        r.block = b;
        out.push_back(r);
      }
  };
  each_end_port(s, mask & va::kLid, req.lid, [&](const SubnetPort& p) {
    const SubnetNode* n = s.node(p.node_guid);
    if (!n) return;
    if (!p.is_switch) {
      if (pkey::shared(rp.pkeys, p.pkeys)) blocks(p.lid, p.port);
      return;
    }
    const auto visit = [&](std::size_t o) {
      if (pkey::shared(rp.pkeys, pkey::port_pkeys(s, *n, static_cast<uint8_t>(o))))
        blocks(p.lid, static_cast<uint8_t>(o));
    };
    if (mask & va::kOutputPort) {
      if (req.port < n->ports.size()) visit(req.port);
      return;
    }
    for (std::size_t o = 0; o < n->ports.size(); ++o) visit(o);
  });
}

}  // namespace ibfab::sm
