#pragma once
// Atomic Extended Transport Header (IBTA Vol 1, 9.3): 28 bytes after the
// BTH (and XRCETH) of CmpSwap and FetchAdd requests.
//
//   0..7     Virtual Address (8-byte aligned)
//   8..11    R_Key
//   12..19   Swap Data (CmpSwap) or Add Data (FetchAdd)
//   20..27   Compare Data (CmpSwap; ignored by FetchAdd)
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

struct AtomicEth {
  static constexpr std::size_t kSize = 28;

  uint64_t va = 0;
  uint32_t rkey = 0;
  uint64_t swap_add = 0;
  uint64_t compare = 0;

  void pack(Writer& w) const;
  static std::optional<AtomicEth> unpack(Reader& r);

  friend bool operator==(const AtomicEth&, const AtomicEth&) = default;
};

}  // namespace ibfab::wire
