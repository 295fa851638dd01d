#include "sm/sa/sm_info_records.h"

#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace smir = mad::smir_comp;

bool matches(const mad::SmInfo& have, const mad::SmInfo& want, uint64_t mask) {
  if ((mask & smir::kGuid) && have.guid != want.guid) return false;
  if ((mask & smir::kPriority) && have.priority != want.priority) return false;
  if ((mask & smir::kSmState) && have.sm_state != want.sm_state) return false;
  return true;
}

mad::SmInfoRecord record(const SubnetPort& port, const mad::SmInfo& info) {
  mad::SmInfoRecord r;
  r.lid = port.lid;
  r.sm_info.guid = info.guid;
  r.sm_info.act_count = info.act_count;
  r.sm_info.priority = info.priority;
  r.sm_info.sm_state = info.sm_state;
  return r;
}

}  // namespace

void sm_info_records(const Subnet& s, uint32_t requester, const mad::SmInfoRecord& req,
                     uint64_t mask, std::vector<mad::SmInfoRecord>& out) {
  out.clear();
  if (requester >= s.ports.size() || s.sms.empty()) return;
  const SubnetPort* at = nullptr;
  if (mask & smir::kLid) {
    at = s.by_lid(req.lid);
    if (!at) return;
  }
  const SubnetPort* own = s.by_guid(s.sms[0].port_guid);
  if (!own) return;
  if (!at || at == own) {
    if (!pkey::shared(s.ports[requester], *own)) return;
    if (matches(s.sms[0].info, req.sm_info, mask)) out.push_back(record(*own, s.sms[0].info));
  }
  for (std::size_t i = 1; i < s.sms.size(); ++i) {
    const SubnetPort* p = s.by_guid(s.sms[i].port_guid);
    if (!p || (at && at != p) || at == own) continue;
    if (matches(s.sms[i].info, req.sm_info, mask)) out.push_back(record(*p, s.sms[i].info));
  }
}

}  // namespace ibfab::sm
