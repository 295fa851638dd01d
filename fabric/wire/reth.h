#pragma once
// RDMA Extended Transport Header (IBTA Vol 1, 9.3): 16 bytes after the BTH
// (and XRCETH) of RDMA WRITE First/Only and RDMA READ Request packets.
//
//   0..7     Virtual Address
//   8..11    R_Key
//   12..15   DMA Length
#include <cstddef>
#include <cstdint>
#include <optional>

#include "fabric/wire/byte_cursor.h"

namespace ibfab::wire {

struct Reth {
  static constexpr std::size_t kSize = 16;

  uint64_t va = 0;
  uint32_t rkey = 0;
  uint32_t dma_length = 0;

  void pack(Writer& w) const;
  static std::optional<Reth> unpack(Reader& r);

  friend bool operator==(const Reth&, const Reth&) = default;
};

}  // namespace ibfab::wire
