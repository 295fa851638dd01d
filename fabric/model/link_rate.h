#pragma once
// Link speed and width, their PortInfo encodings, and exact serialisation
// time for a number of bytes.
//
// Data rate per lane = signalling rate x encoding efficiency:
//   SDR 2.5 Gbaud, DDR 5, QDR 10 (8b/10b);
//   FDR 14.0625, EDR 25.78125 (64b/66b);
//   HDR 53.125, NDR 106.25 Gbaud (PAM4, 2 bits per symbol, 64b/66b after
//   FEC; modelled as 50 and 100 Gb/s per lane, the rates the IBTA quotes).
// serialisation() rounds up to a whole picosecond with integer arithmetic.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/time.h"

namespace ibfab::fabric {

enum class LinkSpeed : uint8_t { SDR, DDR, QDR, FDR, EDR, HDR, NDR };
enum class LinkWidth : uint8_t { X1, X2, X4, X8, X12 };

struct LinkRate {
  LinkSpeed speed = LinkSpeed::QDR;
  LinkWidth width = LinkWidth::X4;

  int lanes() const;
  // Data bits per second (after line coding), exact for every combination.
  uint64_t data_bps() const;
  sim::Time serialisation(uint32_t bytes) const;

  // "4xQDR", as ibnetdiscover prints it.
  std::string str() const;
  // Parses "4xQDR" / "4XQDR" / "12xEDR"; nullopt on anything else.
  static std::optional<LinkRate> parse(std::string_view text);

  // IBTA PortInfo encodings.
  uint8_t width_bits() const;           // LinkWidthActive: 1=1x 2=4x 4=8x 8=12x 16=2x
  uint8_t speed_bits() const;           // LinkSpeedActive: 1=SDR 2=DDR 4=QDR (1 for ext speeds)
  uint8_t speed_ext_bits() const;       // LinkSpeedExtActive: 0, 1=FDR 2=EDR 4=HDR 8=NDR
  // SA/PathRecord rate enum (2=2.5 3=10 4=30 5=5 6=20 ... 21=400 Gb/s).
  uint8_t sa_rate() const;
  // The inverse of width_bits/speed_bits/speed_ext_bits, from PortInfo's
  // active fields (a non-zero ext speed wins); nullopt for a width or speed
  // that names no single value.
  static std::optional<LinkRate> from_port_info(uint8_t width_bits, uint8_t speed_bits, uint8_t speed_ext_bits);

  friend bool operator==(const LinkRate&, const LinkRate&) = default;
};

const char* to_string(LinkSpeed s);

}  // namespace ibfab::fabric
