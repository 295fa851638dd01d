#include "sm/sa/service_table.h"

#include <algorithm>
#include <cstring>

#include "fabric/wire/mad_header.h"
#include "sm/sa/pkey_rules.h"

namespace ibfab::sm {
namespace {

namespace sr = mad::sr_comp;
namespace status = wire::mad_status;

bool same_rid(const mad::ServiceRecord& a, const mad::ServiceRecord& b) {
  return a.service_id == b.service_id && a.service_gid == b.service_gid &&
         a.service_p_key == b.service_p_key;
}

bool bit(uint64_t mask, unsigned n) { return (mask >> n) & 1; }

bool matches(const mad::ServiceRecord& have, const mad::ServiceRecord& want, uint64_t mask) {
  if ((mask & sr::kServiceId) && have.service_id != want.service_id) return false;
  if ((mask & sr::kServiceGid) && have.service_gid != want.service_gid) return false;
  if ((mask & sr::kServicePKey) && have.service_p_key != want.service_p_key) return false;
  if ((mask & sr::kServiceKey) && have.service_key != want.service_key) return false;
  if ((mask & sr::kServiceName) && have.service_name != want.service_name) return false;
  for (unsigned i = 0; i < 16; ++i)
    if (bit(mask, sr::kData8First + i) && have.data8[i] != want.data8[i]) return false;
  for (unsigned i = 0; i < 8; ++i)
    if (bit(mask, sr::kData16First + i) && have.data16[i] != want.data16[i]) return false;
  for (unsigned i = 0; i < 4; ++i)
    if (bit(mask, sr::kData32First + i) && have.data32[i] != want.data32[i]) return false;
  for (unsigned i = 0; i < 2; ++i)
    if (bit(mask, sr::kData64First + i) && have.data64[i] != want.data64[i]) return false;
  return true;
}

sim::Time expiry(sim::Time now, uint32_t lease) {
  if (lease == mad::kServiceLeaseInfinite) return sim::Time::max();
  const sim::Time left = sim::Time::max() - now;
  if (left.ps() / sim::Time::s(1).ps() <= lease) return sim::Time::max();
  return now + sim::Time::s(lease);
}

}  // namespace

void ServiceTable::expire(sim::Time now) {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const Entry& e) { return e.expires <= now; }),
                 entries_.end());
}

std::size_t ServiceTable::size(sim::Time now) {
  expire(now);
  return entries_.size();
}

bool ServiceTable::valid_request(const Subnet& s, uint32_t requester, const mad::ServiceRecord& rec,
                                 uint64_t mask) const {
  if (requester >= s.ports.size()) return false;
  if (!(mask & sr::kServicePKey)) return true;
  if (!pkey::holds(s.ports[requester], rec.service_p_key)) return false;
  if ((mask & sr::kServiceGid) && !rec.service_gid.is_multicast()) {
    const SubnetPort* p = s.by_guid(rec.service_gid.guid());
    if (!p || !pkey::holds(*p, rec.service_p_key)) return false;
  }
  return true;
}

uint16_t ServiceTable::set(const Subnet& s, uint32_t requester, const mad::ServiceRecord& rec,
                           uint64_t mask, sim::Time now, mad::ServiceRecord& answer) {
  expire(now);
  if (!valid_request(s, requester, rec, mask)) return status::kSaReqInvalid;
  if ((mask & (sr::kServiceId | sr::kServiceGid)) != (sr::kServiceId | sr::kServiceGid))
    return status::kSaReqInvalid;
  mad::ServiceRecord stored = rec;
  if (!(mask & sr::kServiceLease)) stored.service_lease = mad::kServiceLeaseInfinite;
  const Entry e{stored, expiry(now, stored.service_lease)};
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& x) { return same_rid(x.rec, stored); });
  if (it == entries_.end()) entries_.insert(entries_.begin(), e);
  else *it = e;
  answer = stored;
  if (!(mask & sr::kServicePKey)) answer.service_p_key = pkey::kDefault;
  return status::kOk;
}

uint16_t ServiceTable::remove(const Subnet& s, uint32_t requester, const mad::ServiceRecord& rec,
                              uint64_t mask, sim::Time now, mad::ServiceRecord& answer) {
  expire(now);
  if (!valid_request(s, requester, rec, mask)) return status::kSaReqInvalid;
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& x) { return same_rid(x.rec, rec); });
  if (it == entries_.end()) return status::kSaNoRecords;
  answer = it->rec;
  entries_.erase(it);
  return status::kOk;
}

void ServiceTable::get(const Subnet& s, uint32_t requester, const mad::ServiceRecord& req,
                       uint64_t mask, sim::Time now, std::vector<mad::ServiceRecord>& out) {
  out.clear();
  expire(now);
  if (requester >= s.ports.size()) return;
  for (const Entry& e : entries_) {
    if (!matches(e.rec, req, mask)) continue;
    if ((e.rec.service_p_key & pkey::kBase) != 0 && !pkey::holds(s.ports[requester], e.rec.service_p_key))
      continue;
    out.push_back(e.rec);
  }
}

}  // namespace ibfab::sm
