#pragma once
// Test helper: the nominal Gb/s an SA rate enum names, keyed by rdma-core's
// own enumerators (<infiniband/verbs.h>, enum ibv_rate, whose values are
// the IBTA's rate encoding, as Linux's enum ib_rate), so that rate checks do
// not ask the code under test what its enum means.
#include <infiniband/verbs.h>

#include <cstdint>
#include <map>
#include <set>

namespace ibfab::sm::testing {

// Tenths of a Gb/s (2.5 stays exact); 0 for a value the enum does not name.
inline int tenths_of_sa_rate(uint8_t r) {
  static const std::map<int, int> k = {
      {IBV_RATE_2_5_GBPS, 25},   {IBV_RATE_5_GBPS, 50},     {IBV_RATE_10_GBPS, 100},
      {IBV_RATE_20_GBPS, 200},   {IBV_RATE_30_GBPS, 300},   {IBV_RATE_40_GBPS, 400},
      {IBV_RATE_60_GBPS, 600},   {IBV_RATE_80_GBPS, 800},   {IBV_RATE_120_GBPS, 1200},
      {IBV_RATE_14_GBPS, 140},   {IBV_RATE_56_GBPS, 560},   {IBV_RATE_112_GBPS, 1120},
      {IBV_RATE_168_GBPS, 1680}, {IBV_RATE_25_GBPS, 250},   {IBV_RATE_100_GBPS, 1000},
      {IBV_RATE_200_GBPS, 2000}, {IBV_RATE_300_GBPS, 3000}, {IBV_RATE_28_GBPS, 280},
      {IBV_RATE_50_GBPS, 500},   {IBV_RATE_400_GBPS, 4000}, {IBV_RATE_600_GBPS, 6000}};
  const auto it = k.find(r);
  return it == k.end() ? 0 : it->second;
}

// The data rate left after line coding, in Gb/s: 8b/10b for the SDR, DDR
// and QDR rates (1x to 12x: 2.5 to 120 Gb/s nominal), 64b/66b for FDR and
// faster (14, 25, 28, 50 Gb/s a lane and their multiples). PathRecord
// selectors order rates by this (OpenSM ranks 100 Gb/s EDR above 120 Gb/s
// QDR for the same reason); 0 for a value the enum does not name.
inline double data_gbps_of_sa_rate(uint8_t r) {
  const int t = tenths_of_sa_rate(r);
  static const std::set<int> kEightTen = {25, 50, 100, 200, 300, 400, 600, 800, 1200};
  const bool eight_ten = kEightTen.count(t) != 0;
  return t * (eight_ten ? 0.8 : 64.0 / 66.0) / 10;
}

}  // namespace ibfab::sm::testing
