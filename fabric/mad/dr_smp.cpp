#include "fabric/mad/dr_smp.h"

#include <algorithm>
#include <cassert>

namespace ibfab::mad::dr_smp {

void init_request(SmpBuffer s, const DrRequest& r, std::span<const uint8_t> hops) {
  assert(hops.size() <= kMaxHops);
  std::fill(s.begin(), s.end(), uint8_t{0});
  s[0] = 1;
  s[kMgmtClassOffset] = kClassDirectedRoute;
  s[2] = 1;
  s[kMethodOffset] = r.method;
  wire::store_be64(&s[kTransactionIdOffset], r.transaction_id);
  wire::store_be16(&s[kAttributeIdOffset], r.attribute_id);
  wire::store_be32(&s[kAttributeModifierOffset], r.attribute_modifier);
  wire::store_be64(&s[kMKeyOffset], r.m_key);
  set_dr_slid(s, r.dr_slid);
  set_dr_dlid(s, r.dr_dlid);
  set_hop_count(s, static_cast<uint8_t>(hops.size()));
  std::copy(hops.begin(), hops.end(), s.begin() + kInitialPathOffset + 1);
}

}  // namespace ibfab::mad::dr_smp
