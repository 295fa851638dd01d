#include "sm/mcast/mft_shadow.h"

#include <algorithm>
#include <iterator>
#include <set>

namespace ibfab::sm {

namespace {

using mad::MftAddress;
using mad::MulticastForwardingTable;

bool any_bit(const MftShadow::Masks& m) {
  return std::any_of(m.begin(), m.end(), [](uint16_t v) { return v != 0; });
}

}  // namespace

std::vector<uint64_t> MftShadow::set_desired(uint16_t mlid, const std::map<uint64_t, Masks>& masks) {
  std::vector<uint64_t> changed;
  std::vector<uint64_t> now;
  std::vector<uint64_t>& before = switches_of_[mlid];
  for (const uint64_t guid : before) {  // entries that go away
    auto it = masks.find(guid);
    if (it != masks.end() && any_bit(it->second)) continue;
    desired_[guid].erase(mlid);
    changed.push_back(guid);
  }
  for (const auto& [guid, m] : masks) {
    if (!any_bit(m)) continue;
    now.push_back(guid);
    Masks& slot = desired_[guid][mlid];
    if (slot != m) {
      slot = m;
      changed.push_back(guid);
    }
  }
  if (now.empty()) switches_of_.erase(mlid);
  else before = std::move(now);
  std::sort(changed.begin(), changed.end());
  return changed;
}

void MftShadow::clear_desired() {
  desired_.clear();
  switches_of_.clear();
}

MftShadow::Masks MftShadow::desired(uint64_t guid, uint16_t mlid) const {
  auto sw = desired_.find(guid);
  if (sw == desired_.end()) return {};
  auto it = sw->second.find(mlid);
  return it == sw->second.end() ? Masks{} : it->second;
}

MulticastForwardingTable MftShadow::desired_block(uint64_t guid, MftAddress a) const {
  MulticastForwardingTable t;
  auto sw = desired_.find(guid);
  if (sw == desired_.end()) return t;
  const uint16_t first = mad::mlid_of({a.block, 0});
  for (auto it = sw->second.lower_bound(first); it != sw->second.end(); ++it) {
    const auto slot = mad::mft_slot_of(it->first);
    if (!slot || slot->block != a.block) break;
    if (a.position < it->second.size()) t.port_mask[slot->index] = it->second[a.position];
  }
  return t;
}

std::vector<MftAddress> MftShadow::stale(uint64_t guid, uint8_t positions, std::optional<uint16_t> block) const {
  std::set<uint16_t> blocks;
  if (block) {
    blocks.insert(*block);
  } else {
    if (auto sw = desired_.find(guid); sw != desired_.end())
      for (const auto& [mlid, m] : sw->second)
        if (auto slot = mad::mft_slot_of(mlid)) blocks.insert(slot->block);
    if (auto sw = written_.find(guid); sw != written_.end())
      for (const auto& [k, b] : sw->second) blocks.insert(static_cast<uint16_t>(k >> 4));
  }
  const auto written = written_.find(guid);
  std::vector<MftAddress> out;
  for (const uint16_t b : blocks) {
    for (uint8_t p = 0; p < positions; ++p) {
      const MftAddress a{b, p};
      const MulticastForwardingTable want = desired_block(guid, a);
      const Block* have = nullptr;
      if (written != written_.end()) {
        auto it = written->second.find(key(a));
        if (it != written->second.end()) have = &it->second;
      }
      const bool same = have ? have->known && have->content == want : want == MulticastForwardingTable{};
      if (!same) out.push_back(a);
    }
  }
  return out;
}

uint64_t MftShadow::sent(uint64_t guid, MftAddress a, const MulticastForwardingTable& content) {
  Block& b = written_[guid][key(a)];
  b.content = content;
  b.known = true;
  b.last_sent = next_seq_++;
  return b.last_sent;
}

bool MftShadow::answered(uint64_t guid, MftAddress a, uint64_t seq, bool ok) {
  Block& b = written_[guid][key(a)];  // created unknown if forgotten meanwhile
  if (b.last_sent == 0) {
    b.known = false;
    return true;
  }
  if (!ok || seq < b.last_answered) {
    // The switch holds something other than the shadow: a failed write, or
    // an older write that landed after a newer one.
    const bool was_known = b.known;
    b.known = false;
    return was_known;
  }
  b.last_answered = seq;
  return false;
}

std::size_t MftShadow::entries(uint64_t guid) const {
  auto sw = desired_.find(guid);
  return sw == desired_.end() ? 0 : sw->second.size();
}

std::size_t MftShadow::entries() const {
  std::size_t n = 0;
  for (const auto& [guid, m] : desired_) n += m.size();
  return n;
}

std::map<uint64_t, std::size_t> MftShadow::entries_per_switch() const {
  std::map<uint64_t, std::size_t> out;
  for (const auto& [guid, m] : desired_)
    if (!m.empty()) out[guid] = m.size();
  return out;
}

}  // namespace ibfab::sm
