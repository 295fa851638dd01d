#include "sm/mcast/mlid_allocator.h"

#include <algorithm>

#include "fabric/mad/forwarding_tables.h"

namespace ibfab::sm {

namespace {
constexpr uint16_t kBase = mad::MulticastForwardingTable::kMulticastLidBase;
constexpr uint16_t kTop = 0xFFFE;  // 0xFFFF is the permissive LID
}  // namespace

MlidRange MlidRange::for_cap(uint16_t cap) {
  if (cap == 0) return {};
  const uint32_t last = std::min<uint32_t>(kTop, uint32_t{kBase} + cap - 1);
  return {kBase, static_cast<uint16_t>(last)};
}

std::optional<uint16_t> MlidAllocator::allocate(std::optional<uint16_t> requested, MlidRange range) {
  range.first = std::max(range.first, kBase);
  range.last = std::min(range.last, kTop);
  if (range.last < range.first) return std::nullopt;
  uint16_t mlid = 0;
  if (requested && range.contains(*requested) && is_free(*requested)) {
    mlid = *requested;
  } else {
    bool any = false;
    for (uint32_t m = range.first; m <= range.last && !any; ++m) any = is_free(static_cast<uint16_t>(m));
    if (!any) return std::nullopt;
    mlid = pick(range);
  }
  const std::size_t i = mlid - kBase;
  if (i >= used_.size()) used_.resize(i + 1, false);
  used_[i] = true;
  ++used_count_;
  return mlid;
}

void MlidAllocator::free(uint16_t mlid) {
  if (!in_use(mlid)) return;
  used_[mlid - kBase] = false;
  --used_count_;
}

bool MlidAllocator::in_use(uint16_t mlid) const {
  return mlid >= kBase && std::size_t{static_cast<uint16_t>(mlid - kBase)} < used_.size() && used_[mlid - kBase];
}

std::string_view LowestFreeMlid::description() const {
  return "OpenSM's allocator: the lowest free MLID (keeps the MFTs short: fewest blocks in use)";
}

uint16_t LowestFreeMlid::pick(MlidRange range) {
  uint32_t m = range.first;
  while (!is_free(static_cast<uint16_t>(m))) ++m;
  return static_cast<uint16_t>(m);
}

std::string_view RoundRobinMlid::description() const {
  return "the next free MLID after the last one given, wrapping (delays reuse of a freed MLID)";
}

uint16_t RoundRobinMlid::pick(MlidRange range) {
  const uint32_t size = uint32_t{range.last} - range.first + 1;
  uint32_t start = 0;  // offset in the range of the first candidate
  if (last_ && range.contains(*last_)) start = (uint32_t{*last_} - range.first + 1) % size;
  for (uint32_t k = 0; k < size; ++k) {
    const auto m = static_cast<uint16_t>(range.first + (start + k) % size);
    if (is_free(m)) {
      last_ = m;
      return m;
    }
  }
  return range.first;  // unreachable: allocate() checked that one is free
}

std::unique_ptr<MlidAllocator> make_mlid_allocator(std::string_view name) {
  if (name == "lowest-free") return std::make_unique<LowestFreeMlid>();
  if (name == "round-robin") return std::make_unique<RoundRobinMlid>();
  return nullptr;
}

std::vector<std::string_view> mlid_allocator_names() { return {"lowest-free", "round-robin"}; }

}  // namespace ibfab::sm
