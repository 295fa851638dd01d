// Conversions between enum ibv_rate (the static-rate code of address
// vectors and path records) and link speeds, with rdma-core 44's results:
//   ibv_rate_to_mult: the multiple of 2.5 Gb/s, or -1 for IBV_RATE_MAX, an
//     unknown code, or a rate that is no whole multiple (14, 25, 56, 100,
//     112, 168, 200 and 300 Gb/s, the 64b/66b-encoded FDR/EDR speeds);
//   mult_to_ibv_rate: the inverse, IBV_RATE_MAX for anything else;
//   ibv_rate_to_mbps: the data rate in Mb/s after encoding (FDR's 14 Gb/s is
//     14062, EDR's 100 Gb/s is 103125), or -1 for an unknown code;
//   mbps_to_ibv_rate: the inverse, exact values only, IBV_RATE_MAX otherwise.
#include <infiniband/verbs.h>

#include "api/c_enum_argument.h"
#include "api/verbs/export.h"

namespace ibfab::verbs {
namespace {

constexpr int kNoMultiple = -1;

struct Rate {
  ibv_rate code;
  int mult;  // of 2.5 Gb/s, or kNoMultiple
  int mbps;
};

constexpr Rate kRates[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},
    {IBV_RATE_5_GBPS, 2, 5000},
    {IBV_RATE_10_GBPS, 4, 10000},
    {IBV_RATE_20_GBPS, 8, 20000},
    {IBV_RATE_30_GBPS, 12, 30000},
    {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},
    {IBV_RATE_80_GBPS, 32, 80000},
    {IBV_RATE_120_GBPS, 48, 120000},
    {IBV_RATE_14_GBPS, kNoMultiple, 14062},
    {IBV_RATE_56_GBPS, kNoMultiple, 56250},
    {IBV_RATE_112_GBPS, kNoMultiple, 112500},
    {IBV_RATE_168_GBPS, kNoMultiple, 168750},
    {IBV_RATE_25_GBPS, kNoMultiple, 25781},
    {IBV_RATE_100_GBPS, kNoMultiple, 103125},
    {IBV_RATE_200_GBPS, kNoMultiple, 206250},
    {IBV_RATE_300_GBPS, kNoMultiple, 309375},
    {IBV_RATE_28_GBPS, 11, 28125},
    {IBV_RATE_50_GBPS, 20, 53125},
    {IBV_RATE_400_GBPS, 160, 425000},
    {IBV_RATE_600_GBPS, 240, 637500},
    {IBV_RATE_800_GBPS, 320, 850000},
    {IBV_RATE_1200_GBPS, 480, 1275000},
};

// The entry whose member `field` equals value, or nullptr.
const Rate* find(int Rate::*field, int value) {
  for (const Rate& rate : kRates)
    if (rate.*field == value) return &rate;
  return nullptr;
}

const Rate* find_code(int code) {
  for (const Rate& rate : kRates)
    if (rate.code == code) return &rate;
  return nullptr;
}

}  // namespace
}  // namespace ibfab::verbs

IBFAB_VERBS_EXPORT IBFAB_C_ENUM_ARGUMENT int ibv_rate_to_mult(ibv_rate rate) {
  const auto* entry = ibfab::verbs::find_code(rate);
  return entry != nullptr ? entry->mult : -1;
}

IBFAB_VERBS_EXPORT ibv_rate mult_to_ibv_rate(int mult) {
  using ibfab::verbs::Rate;
  const auto* entry = mult == ibfab::verbs::kNoMultiple ? nullptr : ibfab::verbs::find(&Rate::mult, mult);
  return entry != nullptr ? entry->code : IBV_RATE_MAX;
}

IBFAB_VERBS_EXPORT IBFAB_C_ENUM_ARGUMENT int ibv_rate_to_mbps(ibv_rate rate) {
  const auto* entry = ibfab::verbs::find_code(rate);
  return entry != nullptr ? entry->mbps : -1;
}

IBFAB_VERBS_EXPORT ibv_rate mbps_to_ibv_rate(int mbps) {
  using ibfab::verbs::Rate;
  const auto* entry = ibfab::verbs::find(&Rate::mbps, mbps);
  return entry != nullptr ? entry->code : IBV_RATE_MAX;
}
