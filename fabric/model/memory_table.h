#pragma once
// An HCA's memory protection table: the regions (ibv_reg_mr) and windows
// (ibv_alloc_mw) its keys name, and the checks every DMA through a key
// passes, locally (an SGE's lkey) and remotely (an RETH's or AtomicETH's
// rkey). A key is index << 8 | tag: the index names a slot, the tag
// changes when the slot is reused (and, for a type 2 window, is the
// consumer's on each bind), so a stale key faults.
//
// A region's keys address it by its IOVA (ibv_reg_mr: its own address;
// zero based: 0); the bytes are at `addr` in its HostMemory.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "fabric/model/host_memory.h"
#include "fabric/model/work_request.h"

namespace ibfab::fabric {

enum class MemoryFault : uint8_t {
  kNone = 0,
  kBadKey,      // no region or bound window has this key
  kWrongPd,     // the key belongs to another protection domain
  kOutOfRange,  // the access is not inside the region or window
  kNoAccess,    // the region or window does not grant the access
  kWrongQp,     // a type 2 window bound to another QP
  kHostFault,   // the host memory behind it could not be read or written
};
const char* to_string(MemoryFault f);

// Where a checked access lands.
struct DmaTarget {
  HostMemory* memory = nullptr;
  uint64_t addr = 0;  // the host address of the access's first byte
};

class MemoryTable {
 public:
  static constexpr uint32_t kMaxEntries = 1u << 20;  // regions and windows together

  // Registers `length` bytes at `addr` of `memory` for PD `pd` with
  // `access` (access:: bits), addressed by keys from `iova`. Returns the
  // key (lkey == rkey), or 0 when the table is full.
  uint32_t register_region(uint32_t pd, HostMemory& memory, uint64_t addr, uint64_t length, uint64_t iova,
                           uint32_t access);
  // ibv_rereg_mr: changes what is given (nullptr / nullopt-like zeros are
  // not used: the caller passes the region's current values for what stays).
  // 0, EINVAL (no such region), EBUSY (windows are bound to it).
  int reregister(uint32_t key, uint32_t pd, HostMemory& memory, uint64_t addr, uint64_t length, uint64_t iova,
                 uint32_t access);
  // 0, EINVAL (no such region), EBUSY (windows are bound to it).
  int deregister(uint32_t key);

  // ibv_alloc_mw: an unbound window of `type` (1 or 2); returns its rkey,
  // 0 when full.
  uint32_t allocate_window(uint32_t pd, uint8_t type);
  // 0, EINVAL (no such window), EBUSY (a type 2 window still bound).
  int deallocate_window(uint32_t rkey);
  // The current rkey of the window in the slot `key` names, whatever the
  // key's tag (binds change it); 0 when that slot holds no window.
  uint32_t window_key(uint32_t key) const;
  // Binds window `window_rkey` to `length` bytes from IOVA `addr` of region
  // `mr_key` with `access` (remote bits). The window's key becomes
  // `new_rkey` (same index; type 1: the HCA steps the tag as ibv_inc_rkey
  // does, give 0; type 2: the consumer's tag, ibv_inc_rkey's). A type 2
  // window is bound to `qpn`. length 0 unbinds (type 1), which steps the
  // tag too. On success `window_rkey` names it no more and the returned
  // rkey does (through `bound_rkey`).
  MemoryFault bind_window(uint32_t window_rkey, uint32_t new_tag, uint32_t mr_key, uint32_t pd, uint32_t qpn,
                          uint64_t addr, uint64_t length, uint32_t access, uint32_t& bound_rkey);
  // Invalidates a bound type 2 window (IBV_WR_LOCAL_INV, SEND_WITH_INV).
  MemoryFault invalidate(uint32_t rkey, uint32_t pd);

  // An access through an lkey: a region of `pd` holding
  // [addr, addr + length), with local write for `write`.
  MemoryFault local(uint32_t lkey, uint32_t pd, uint64_t addr, uint64_t length, bool write, DmaTarget& out) const;
  // An access through an rkey by QP `qpn` of `pd`: a region, or a window
  // bound (type 2: to that QP), granting every bit of `needed`.
  MemoryFault remote(uint32_t rkey, uint32_t pd, uint32_t qpn, uint64_t addr, uint64_t length, uint32_t needed,
                     DmaTarget& out) const;

  // Reads out.size() bytes of the concatenation of `sges`, from `offset`
  // bytes into it. kOutOfRange when the SGEs hold fewer bytes.
  MemoryFault gather(std::span<const Sge> sges, uint32_t pd, uint64_t offset, std::span<uint8_t> out) const;
  // The read_ahead() of the host memory behind the first SGE (0 when its
  // lkey names no region of `pd`).
  uint32_t read_ahead(std::span<const Sge> sges, uint32_t pd) const;
  // Writes `in` into the concatenation of `sges` from `offset` (local
  // write needed).
  MemoryFault scatter(std::span<const Sge> sges, uint32_t pd, uint64_t offset, std::span<const uint8_t> in) const;
  // scatter() with posted writes (HostMemory::write_posted): `posted` is the
  // memory the caller must flush() when the message ends; a piece in
  // another memory flushes the one before.
  MemoryFault scatter_posted(std::span<const Sge> sges, uint32_t pd, uint64_t offset, std::span<const uint8_t> in,
                             HostMemory*& posted) const;

  std::size_t regions() const { return regions_; }
  std::size_t windows() const { return windows_; }

 private:
  enum class Kind : uint8_t { kFree, kRegion, kWindow };
  struct Entry {
    Kind kind = Kind::kFree;
    uint8_t tag = 0;
    uint8_t window_type = 0;
    bool bound = false;
    uint32_t pd = 0;
    uint32_t access = 0;
    uint32_t qpn = 0;          // type 2 window: the QP it is bound to
    uint32_t region = 0;       // window: the region's index
    uint32_t windows_bound = 0;  // region: windows bound to it
    HostMemory* memory = nullptr;
    uint64_t addr = 0;         // host address of iova
    uint64_t iova = 0;
    uint64_t length = 0;
  };
  const Entry* find(uint32_t key) const;
  Entry* find(uint32_t key) { return const_cast<Entry*>(std::as_const(*this).find(key)); }
  uint32_t take_slot();
  static bool inside(const Entry& e, uint64_t addr, uint64_t length);
  template <typename Move>
  MemoryFault each_piece(std::span<const Sge> sges, uint32_t pd, uint64_t offset, uint64_t n, bool write,
                         Move&& move) const;

  std::vector<Entry> entries_;  // index - 1
  std::vector<uint32_t> free_;
  std::size_t regions_ = 0;
  std::size_t windows_ = 0;
};

}  // namespace ibfab::fabric
