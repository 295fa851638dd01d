#pragma once
// Test helpers: lines of a scenario run's report.
#include <string>

#include "tools/scenario/report.h"

namespace ibfab::scenario::testing {

// The report's timeline line that starts with `prefix` (time included), or
// "(none)".
inline std::string line_of(const Report& r, const std::string& prefix) {
  for (const std::string& l : r.timeline)
    if (l.rfind(prefix, 0) == 0) return l;
  return "(none)";
}

inline std::string first_failure(const Report& r) { return r.failures.empty() ? "(none)" : r.failures.front(); }

}  // namespace ibfab::scenario::testing
