#include "fabric/wire/aeth.h"

#include <array>

namespace ibfab::wire {

void Aeth::pack(Writer& w) const {
  w.u8(syndrome & 0x7f);
  w.u24(msn & kMaxMsn);
}

std::optional<Aeth> Aeth::unpack(Reader& r) {
  Aeth h;
  h.syndrome = r.u8() & 0x7f;
  h.msn = r.u24();
  if (!r.ok()) return std::nullopt;
  return h;
}

uint64_t rnr_timer_ns(uint8_t code) {
  // In units of 10 us (0.01 ms), as the IBTA table lists them.
  static constexpr std::array<uint32_t, 32> kTenMicros = {
      65536, 1,   2,   3,   4,   6,    8,    12,   16,   24,   32,
      48,    64,  96,  128, 192, 256,  384,  512,  768,  1024, 1536,
      2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152};
  return uint64_t{kTenMicros[code & 0x1f]} * 10'000;
}

}  // namespace ibfab::wire
