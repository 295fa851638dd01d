#include "fabric/model/memory_table.h"

#include <algorithm>
#include <cerrno>

namespace ibfab::fabric {

const char* to_string(MemoryFault f) {
  switch (f) {
    case MemoryFault::kNone: return "none";
    case MemoryFault::kBadKey: return "no region or bound window has this key";
    case MemoryFault::kWrongPd: return "the key belongs to another protection domain";
    case MemoryFault::kOutOfRange: return "the access is outside the region or window";
    case MemoryFault::kNoAccess: return "the region or window does not grant the access";
    case MemoryFault::kWrongQp: return "the window is bound to another QP";
    case MemoryFault::kHostFault: return "the host memory could not be reached";
  }
  return "?";
}

namespace {

uint32_t key_of(uint32_t index, uint8_t tag) { return (index + 1) << 8 | tag; }

}  // namespace

const MemoryTable::Entry* MemoryTable::find(uint32_t key) const {
  const uint32_t slot = key >> 8;
  if (slot == 0 || slot > entries_.size()) return nullptr;
  const Entry& e = entries_[slot - 1];
  if (e.kind == Kind::kFree || e.tag != static_cast<uint8_t>(key)) return nullptr;
  return &e;
}

uint32_t MemoryTable::take_slot() {
  if (!free_.empty()) {
    const uint32_t i = free_.back();
    free_.pop_back();
    return i;
  }
  if (entries_.size() >= kMaxEntries) return UINT32_MAX;
  entries_.emplace_back();
  return static_cast<uint32_t>(entries_.size() - 1);
}

bool MemoryTable::inside(const Entry& e, uint64_t addr, uint64_t length) {
  return addr >= e.iova && addr - e.iova <= e.length && length <= e.length - (addr - e.iova);
}

uint32_t MemoryTable::register_region(uint32_t pd, HostMemory& memory, uint64_t addr, uint64_t length, uint64_t iova,
                                      uint32_t access) {
  const uint32_t i = take_slot();
  if (i == UINT32_MAX) return 0;
  Entry& e = entries_[i];
  const uint8_t tag = static_cast<uint8_t>(e.tag + 1);  // a reused slot's old keys fault
  e = Entry{};
  e.kind = Kind::kRegion;
  e.tag = tag;
  e.pd = pd;
  e.access = access;
  e.memory = &memory;
  e.addr = addr;
  e.iova = iova;
  e.length = length;
  ++regions_;
  return key_of(i, tag);
}

int MemoryTable::reregister(uint32_t key, uint32_t pd, HostMemory& memory, uint64_t addr, uint64_t length,
                            uint64_t iova, uint32_t access) {
  Entry* e = find(key);
  if (e == nullptr || e->kind != Kind::kRegion) return EINVAL;
  if (e->windows_bound != 0) return EBUSY;
  e->pd = pd;
  e->memory = &memory;
  e->addr = addr;
  e->iova = iova;
  e->length = length;
  e->access = access;
  return 0;
}

int MemoryTable::deregister(uint32_t key) {
  Entry* e = find(key);
  if (e == nullptr || e->kind != Kind::kRegion) return EINVAL;
  if (e->windows_bound != 0) return EBUSY;
  e->kind = Kind::kFree;
  free_.push_back((key >> 8) - 1);
  --regions_;
  return 0;
}

uint32_t MemoryTable::allocate_window(uint32_t pd, uint8_t type) {
  if (type != 1 && type != 2) return 0;
  const uint32_t i = take_slot();
  if (i == UINT32_MAX) return 0;
  Entry& e = entries_[i];
  const uint8_t tag = static_cast<uint8_t>(e.tag + 1);
  e = Entry{};
  e.kind = Kind::kWindow;
  e.tag = tag;
  e.window_type = type;
  e.pd = pd;
  ++windows_;
  return key_of(i, tag);
}

uint32_t MemoryTable::window_key(uint32_t key) const {
  const uint32_t slot = key >> 8;
  if (slot == 0 || slot > entries_.size()) return 0;
  const Entry& e = entries_[slot - 1];
  return e.kind == Kind::kWindow ? key_of(slot - 1, e.tag) : 0;
}

int MemoryTable::deallocate_window(uint32_t rkey) {
  Entry* e = find(rkey);
  if (e == nullptr || e->kind != Kind::kWindow) return EINVAL;
  if (e->bound && e->window_type == 2) return EBUSY;
  if (e->bound) entries_[e->region].windows_bound--;
  e->kind = Kind::kFree;
  free_.push_back((rkey >> 8) - 1);
  --windows_;
  return 0;
}

MemoryFault MemoryTable::bind_window(uint32_t window_rkey, uint32_t new_tag, uint32_t mr_key, uint32_t pd,
                                     uint32_t qpn, uint64_t addr, uint64_t length, uint32_t access,
                                     uint32_t& bound_rkey) {
  Entry* w = find(window_rkey);
  if (w == nullptr || w->kind != Kind::kWindow) return MemoryFault::kBadKey;
  if (w->pd != pd) return MemoryFault::kWrongPd;
  if (w->window_type == 2 && w->bound) return MemoryFault::kNoAccess;  // invalidate it first
  const uint32_t index = (window_rkey >> 8) - 1;
  if (w->window_type == 1 && length == 0) {  // unbind: a bind like any other, to a new key
    if (w->bound) entries_[w->region].windows_bound--;
    w->bound = false;
    w->length = 0;
    w->tag = static_cast<uint8_t>(w->tag + 1);
    bound_rkey = key_of(index, w->tag);
    return MemoryFault::kNone;
  }
  const Entry* r = find(mr_key);
  if (r == nullptr || r->kind != Kind::kRegion) return MemoryFault::kBadKey;
  if (r->pd != pd) return MemoryFault::kWrongPd;
  if ((r->access & access::kMwBind) == 0) return MemoryFault::kNoAccess;
  // Remote write and atomics through a window need local write on the region.
  if ((access & (access::kRemoteWrite | access::kRemoteAtomic)) != 0 && (r->access & access::kLocalWrite) == 0)
    return MemoryFault::kNoAccess;
  if (!inside(*r, addr, length)) return MemoryFault::kOutOfRange;
  const uint32_t region = (mr_key >> 8) - 1;
  if (w->bound) entries_[w->region].windows_bound--;
  entries_[region].windows_bound++;
  const uint8_t tag = w->window_type == 2 ? static_cast<uint8_t>(new_tag) : static_cast<uint8_t>(w->tag + 1);
  w->tag = tag;
  w->bound = true;
  w->region = region;
  w->qpn = qpn;
  w->access = access & (access::kRemoteRead | access::kRemoteWrite | access::kRemoteAtomic | access::kZeroBased);
  w->memory = r->memory;
  w->addr = r->addr + (addr - r->iova);
  w->iova = (access & access::kZeroBased) != 0 ? 0 : addr;
  w->length = length;
  bound_rkey = key_of(index, tag);
  return MemoryFault::kNone;
}

MemoryFault MemoryTable::invalidate(uint32_t rkey, uint32_t pd) {
  Entry* w = find(rkey);
  if (w == nullptr || w->kind != Kind::kWindow || w->window_type != 2 || !w->bound) return MemoryFault::kBadKey;
  if (w->pd != pd) return MemoryFault::kWrongPd;
  entries_[w->region].windows_bound--;
  w->bound = false;
  w->length = 0;
  return MemoryFault::kNone;
}

MemoryFault MemoryTable::local(uint32_t lkey, uint32_t pd, uint64_t addr, uint64_t length, bool write,
                               DmaTarget& out) const {
  const Entry* e = find(lkey);
  if (e == nullptr || e->kind != Kind::kRegion) return MemoryFault::kBadKey;
  if (e->pd != pd) return MemoryFault::kWrongPd;
  if (!inside(*e, addr, length)) return MemoryFault::kOutOfRange;
  if (write && (e->access & access::kLocalWrite) == 0) return MemoryFault::kNoAccess;
  out = DmaTarget{e->memory, e->addr + (addr - e->iova)};
  return MemoryFault::kNone;
}

MemoryFault MemoryTable::remote(uint32_t rkey, uint32_t pd, uint32_t qpn, uint64_t addr, uint64_t length,
                                uint32_t needed, DmaTarget& out) const {
  const Entry* e = find(rkey);
  if (e == nullptr || (e->kind == Kind::kWindow && !e->bound)) return MemoryFault::kBadKey;
  if (e->pd != pd) return MemoryFault::kWrongPd;
  if (e->kind == Kind::kWindow && e->window_type == 2 && e->qpn != qpn) return MemoryFault::kWrongQp;
  if ((e->access & needed) != needed) return MemoryFault::kNoAccess;
  if (!inside(*e, addr, length)) return MemoryFault::kOutOfRange;
  out = DmaTarget{e->memory, e->addr + (addr - e->iova)};
  return MemoryFault::kNone;
}

// Checks each piece of [offset, offset + n) of the SGE list through its
// lkey (local write when `write`) and calls move(target, bytes done, piece
// size); kOutOfRange when the list holds fewer bytes.
template <typename Move>
MemoryFault MemoryTable::each_piece(std::span<const Sge> sges, uint32_t pd, uint64_t offset, uint64_t n, bool write,
                                    Move&& move) const {
  uint64_t done = 0;
  for (const Sge& s : sges) {
    if (done == n) break;
    if (offset >= s.length) {
      offset -= s.length;
      continue;
    }
    const uint64_t take = std::min<uint64_t>(n - done, s.length - offset);
    DmaTarget t;
    if (MemoryFault f = local(s.lkey, pd, s.addr + offset, take, write, t); f != MemoryFault::kNone) return f;
    if (!move(t, done, take)) return MemoryFault::kHostFault;
    done += take;
    offset = 0;
  }
  return done == n ? MemoryFault::kNone : MemoryFault::kOutOfRange;
}

MemoryFault MemoryTable::gather(std::span<const Sge> sges, uint32_t pd, uint64_t offset,
                                std::span<uint8_t> out) const {
  return each_piece(sges, pd, offset, out.size(), false, [&](const DmaTarget& t, uint64_t done, uint64_t take) {
    return t.memory->read(t.addr, out.subspan(done, take));
  });
}

MemoryFault MemoryTable::scatter_posted(std::span<const Sge> sges, uint32_t pd, uint64_t offset,
                                        std::span<const uint8_t> in, HostMemory*& posted) const {
  return each_piece(sges, pd, offset, in.size(), true, [&](const DmaTarget& t, uint64_t done, uint64_t take) {
    if (posted != t.memory) {
      if (posted != nullptr && !posted->flush()) return false;
      posted = t.memory;
    }
    return t.memory->write_posted(t.addr, in.subspan(done, take));
  });
}

uint32_t MemoryTable::read_ahead(std::span<const Sge> sges, uint32_t pd) const {
  if (sges.empty()) return 0;
  const Entry* e = find(sges.front().lkey);
  return e != nullptr && e->kind == Kind::kRegion && e->pd == pd ? e->memory->read_ahead() : 0;
}

MemoryFault MemoryTable::scatter(std::span<const Sge> sges, uint32_t pd, uint64_t offset,
                                 std::span<const uint8_t> in) const {
  return each_piece(sges, pd, offset, in.size(), true, [&](const DmaTarget& t, uint64_t done, uint64_t take) {
    return t.memory->write(t.addr, in.subspan(done, take));
  });
}

}  // namespace ibfab::fabric
