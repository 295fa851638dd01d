#pragma once
// Test helper: the nominal Gb/s an SA rate enum names, written from Linux's
// enum ib_rate (include/rdma/ib_verbs.h) rather than from the SA's code, so
// that rate checks do not ask the code under test what its enum means.
#include <cstdint>
#include <map>

namespace ibfab::sm::testing {

// Tenths of a Gb/s (2.5 stays exact); 0 for a value the enum does not name.
inline int tenths_of_sa_rate(uint8_t r) {
  static const std::map<uint8_t, int> k = {
      {2, 25},    {5, 50},    {3, 100},   {6, 200},   {4, 300},   {7, 400},
      {8, 600},   {9, 800},   {10, 1200}, {11, 140},  {12, 560},  {13, 1120},
      {14, 1680}, {15, 250},  {16, 1000}, {17, 2000}, {18, 3000}, {19, 280},
      {20, 500},  {21, 4000}, {22, 6000}};
  const auto it = k.find(r);
  return it == k.end() ? 0 : it->second;
}

// The data rate left after line coding, in Gb/s: 8b/10b for the SDR, DDR
// and QDR rates (2.5 to 120 Gb/s nominal), 64b/66b for FDR and faster. PathRecord
// selectors order rates by this (OpenSM ranks 100 Gb/s EDR above 120 Gb/s
// QDR for the same reason); 0 for a value the enum does not name.
inline double data_gbps_of_sa_rate(uint8_t r) {
  const int t = tenths_of_sa_rate(r);
  const bool eight_ten = r >= 2 && r <= 10;
  return t * (eight_ten ? 0.8 : 64.0 / 66.0) / 10;
}

}  // namespace ibfab::sm::testing
