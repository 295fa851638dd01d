#include "sm/mcast/mft_shadow.h"

#include <algorithm>

namespace ibfab::sm {

namespace {

using mad::MftAddress;
using mad::MulticastForwardingTable;

}  // namespace

bool MftShadow::set_desired(uint64_t guid, uint16_t mlid, const PortMask& mask) {
  if (mask.empty()) {
    auto sw = desired_.find(guid);
    if (sw == desired_.end() || !sw->second.erase(mlid)) return false;
    --entries_;
    if (sw->second.empty()) desired_.erase(sw);
    return true;
  }
  auto [it, added] = desired_[guid].try_emplace(mlid, mask);
  if (added) {
    ++entries_;
    return true;
  }
  if (it->second == mask) return false;
  it->second = mask;
  return true;
}

void MftShadow::clear_desired() {
  desired_.clear();
  entries_ = 0;
}

PortMask MftShadow::desired(uint64_t guid, uint16_t mlid) const {
  auto sw = desired_.find(guid);
  if (sw == desired_.end()) return {};
  auto it = sw->second.find(mlid);
  return it == sw->second.end() ? PortMask{} : it->second;
}

MulticastForwardingTable MftShadow::desired_block(uint64_t guid, MftAddress a) const {
  MulticastForwardingTable t;
  auto sw = desired_.find(guid);
  if (sw == desired_.end()) return t;
  const uint16_t first = mad::mlid_of({a.block, 0});
  for (auto it = sw->second.lower_bound(first); it != sw->second.end(); ++it) {
    const auto slot = mad::mft_slot_of(it->first);
    if (!slot || slot->block != a.block) break;
    t.port_mask[slot->index] = it->second.position[a.position & 0xF];
  }
  return t;
}

std::vector<MftAddress> MftShadow::stale(uint64_t guid, uint8_t positions, std::optional<uint16_t> block) const {
  std::vector<uint16_t> blocks;
  if (block) {
    blocks.push_back(*block);
  } else {
    if (auto sw = desired_.find(guid); sw != desired_.end())
      for (const auto& [mlid, m] : sw->second)
        if (auto slot = mad::mft_slot_of(mlid)) blocks.push_back(slot->block);
    if (auto sw = written_.find(guid); sw != written_.end())
      for (const auto& [k, b] : sw->second) blocks.push_back(static_cast<uint16_t>(k >> 4));
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
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

uint16_t MftShadow::top(uint64_t guid) const {
  auto sw = desired_.find(guid);
  return sw == desired_.end() || sw->second.empty() ? 0xBFFF : sw->second.rbegin()->first;
}

std::size_t MftShadow::entries(uint64_t guid) const {
  auto sw = desired_.find(guid);
  return sw == desired_.end() ? 0 : sw->second.size();
}

std::map<uint64_t, std::size_t> MftShadow::entries_per_switch() const {
  std::map<uint64_t, std::size_t> out;
  for (const auto& [guid, m] : desired_)
    if (!m.empty()) out[guid] = m.size();
  return out;
}

}  // namespace ibfab::sm
