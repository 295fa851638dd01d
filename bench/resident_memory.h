#pragma once
// The resident set size of this process (the second field of
// /proc/self/statm, in pages), for the benchmarks' memory counters.
#include <unistd.h>

#include <cstdio>

namespace ibfab::bench {

inline constexpr double kMiB = 1024.0 * 1024.0;

// In bytes; 0 if it cannot be read.
inline double resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  if (n != 2) return 0;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

inline double resident_mb() { return resident_bytes() / kMiB; }

}  // namespace ibfab::bench
