#include "sm/sa/multi_path_records.h"

#include <algorithm>

#include "fabric/wire/mad_header.h"
#include "sm/sa/path_records.h"
#include "sm/sa/sa_enums.h"

namespace ibfab::sm {
namespace {

namespace mp = mad::mpr_comp;
namespace pr = mad::pr_comp;
namespace status = wire::mad_status;

constexpr uint32_t kMaxPaths = 127;  // NumbPath's largest value

bool link_local(const wire::Gid& g) { return (g.prefix() >> 54) == (0xFE80000000000000ull >> 54); }

// The PathRecord request for one (source, destination) pair.
std::pair<mad::PathRecord, uint64_t> pair_request(const mad::MultiPathRecord& m, uint64_t mask,
                                                  const wire::Gid& s, const wire::Gid& d) {
  mad::PathRecord p;
  uint64_t pm = pr::kSgid | pr::kDgid;
  p.sgid = s;
  p.dgid = d;
  const auto carry = [&](uint64_t from, uint64_t to) {
    if (mask & from) pm |= to;
  };
  p.flow_label = m.flow_label;
  carry(mp::kFlowLabel, pr::kFlowLabel);
  p.hop_limit = m.hop_limit;
  carry(mp::kHopLimit, pr::kHopLimit);
  p.tclass = m.tclass;
  carry(mp::kTClass, pr::kTClass);
  p.p_key = m.p_key;
  carry(mp::kPKey, pr::kPKey);
  p.sl = m.sl;
  carry(mp::kSl, pr::kSl);
  p.mtu_selector = m.mtu_selector;
  p.mtu = m.mtu;
  carry(mp::kMtuSelector, pr::kMtuSelector);
  carry(mp::kMtu, pr::kMtu);
  p.rate_selector = m.rate_selector;
  p.rate = m.rate;
  carry(mp::kRateSelector, pr::kRateSelector);
  carry(mp::kRate, pr::kRate);
  p.packet_life_time_selector = m.packet_life_time_selector;
  p.packet_life_time = m.packet_life_time;
  carry(mp::kPacketLifeTimeSelector, pr::kPacketLifeTimeSelector);
  carry(mp::kPacketLifeTime, pr::kPacketLifeTime);
  p.service_id = m.service_id;
  if ((mask & mp::kServiceId) == mp::kServiceId) pm |= pr::kServiceId;
  return {p, pm};
}

}  // namespace

uint16_t multi_path_records(const Subnet& s, const McastGroups& groups, uint32_t requester,
                            const mad::MultiPathRecord& req, uint64_t mask, uint8_t packet_life,
                            std::vector<mad::PathRecord>& out) {
  out.clear();
  if (!(mask & mp::kSgidCount) || !(mask & mp::kDgidCount)) return status::kSaInsufficientComponents;
  if ((mask & (mp::kRateSelector | mp::kRate)) == (mp::kRateSelector | mp::kRate) &&
      !sa_enum::valid_rate(req.rate))
    return status::kSaReqInvalid;
  if ((mask & (mp::kMtuSelector | mp::kMtu)) == (mp::kMtuSelector | mp::kMtu) && !sa_enum::valid_mtu(req.mtu))
    return status::kSaReqInvalid;
  const uint64_t sid = mask & mp::kServiceId;
  if (sid != 0 && sid != mp::kServiceId) return status::kSaInsufficientComponents;
  const std::size_t kMax = mad::MultiPathRecord::kMaxGids;
  const std::size_t nsrc = std::min<std::size_t>(req.sgid_count, kMax);
  const std::size_t ndst = std::min<std::size_t>(req.dgid_count, kMax - nsrc);
  for (std::size_t i = 0; i < nsrc + ndst; ++i) {
    const wire::Gid& g = req.gids[i];
    if (!link_local(g) && ((i < nsrc && g.is_multicast()) || g.prefix() != s.prefix))
      return status::kSaInvalidGid;
    if (!s.by_guid(g.guid())) return status::kSaInvalidGid;
  }
  if (nsrc == 0 || ndst == 0) return status::kSaReqInvalid;
  const uint32_t max_paths = (mask & mp::kNumbPath) ? (req.numb_path & 0x7Fu) : kMaxPaths;
  std::vector<mad::PathRecord> one;
  for (std::size_t i = 0; i < nsrc && out.size() < max_paths; ++i)
    for (std::size_t j = nsrc; j < nsrc + ndst && out.size() < max_paths; ++j) {
      const auto [p, pm] = pair_request(req, mask, req.gids[i], req.gids[j]);
      if (path_records(s, groups, requester, p, pm, packet_life, one) != status::kOk) continue;
      for (const mad::PathRecord& r : one)
        if (out.size() < max_paths) out.push_back(r);
    }
  return status::kOk;
}

}  // namespace ibfab::sm
