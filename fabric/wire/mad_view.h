#pragma once
// A decoded view of one MAD (IBTA Vol 1, 13.4): the common header and, by
// class, the SMP or RMPP + SA headers.
//
// parse_mad() copies the small headers out and keeps spans into the buffer,
// which must outlive the view; it never reads outside its span.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/wire/mad_header.h"
#include "fabric/wire/rmpp_header.h"
#include "fabric/wire/sa_header.h"
#include "fabric/wire/smp.h"

namespace ibfab::wire {

enum class MadError : uint8_t {
  kNone = 0,
  kTooShort,        // fewer than kMadSize bytes
  kBadBaseVersion,  // BaseVersion != 1
};
const char* to_string(MadError e);

struct MadView {
  MadError error = MadError::kTooShort;
  MadHeader header;
  std::optional<RmppHeader> rmpp;  // SA and vendor range-2 classes
  std::optional<SaHeader> sa;      // SA class
  std::span<const uint8_t> raw;    // the kMadSize bytes of the MAD
  // The attribute data: SMP 64..127, SA 56..255, vendor range 2 (after the
  // RMPP header) 36..255, otherwise 24..255.
  std::span<const uint8_t> data;

  bool ok() const { return error == MadError::kNone; }
  const char* message() const { return to_string(error); }
  bool is_smp() const {
    return header.mgmt_class == mgmt_class::kSubnLid || header.mgmt_class == mgmt_class::kSubnDirected;
  }
  bool is_sa() const { return header.mgmt_class == mgmt_class::kSubnAdm; }
  // Precondition: ok() && is_smp().
  ConstSmpView smp() const { return ConstSmpView(raw); }
};

// Views the first kMadSize bytes of `bytes` (a UD payload may be longer).
MadView parse_mad(std::span<const uint8_t> bytes);

}  // namespace ibfab::wire
