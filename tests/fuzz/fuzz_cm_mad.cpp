// The CM message codecs (fabric/mad/cm_*.h) on arbitrary bytes read as a
// MAD: whatever cm_message accepts must pack back into a MAD that only
// clears bits of the input's message (reserved bits, never a field moved
// elsewhere) and that unpacks to the same message; a buffer shorter than a
// MAD, or a message shorter than 232 bytes, is refused.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "fabric/mad/cm_dreq.h"
#include "fabric/mad/cm_lap.h"
#include "fabric/mad/cm_mad.h"
#include "fabric/mad/cm_mra.h"
#include "fabric/mad/cm_rej.h"
#include "fabric/mad/cm_rep.h"
#include "fabric/mad/cm_req.h"
#include "fabric/mad/cm_rtu.h"
#include "fabric/mad/cm_sidr.h"

namespace {

using namespace ibfab::mad;

void require(bool cond) {
  if (!cond) __builtin_trap();
}

template <class Message>
void check(std::span<const uint8_t> in, const std::optional<ibfab::wire::MadHeader>& h) {
  const std::optional<Message> m = cm_message<Message>(in);
  require(m.has_value() == (h && h->attr_id == Message::kAttributeId));
  if (!m) return;
  const CmMad out = make_cm_mad(h->tid, *m, h->attr_mod);
  for (std::size_t i = kCmDataOffset; i < out.size(); ++i) require((out[i] & ~in[i]) == 0);
  const std::optional<Message> again = cm_message<Message>(out);
  require(again.has_value() && *again == *m);
}

// The messages whose unpack takes any span refuse a short one.
template <class Message>
void check_short(std::span<const uint8_t> in) {
  require(!Message::unpack(in.first(std::min(in.size(), kCmDataSize - 1))).has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::span<const uint8_t> in(data, size);
  const std::optional<ibfab::wire::MadHeader> h = cm_header(in);
  require(!h || size >= ibfab::wire::kMadSize);
  check<CmReq>(in, h);
  check<CmRep>(in, h);
  check<CmRtu>(in, h);
  check<CmRej>(in, h);
  check<CmMra>(in, h);
  check<CmDreq>(in, h);
  check<CmDrep>(in, h);
  check<CmLap>(in, h);
  check<CmApr>(in, h);
  check<SidrReq>(in, h);
  check<SidrRep>(in, h);
  check_short<CmReq>(in);
  check_short<CmRep>(in);
  check_short<CmRtu>(in);
  check_short<CmRej>(in);
  check_short<CmMra>(in);
  check_short<CmDreq>(in);
  check_short<CmLap>(in);
  check_short<CmApr>(in);
  return 0;
}
