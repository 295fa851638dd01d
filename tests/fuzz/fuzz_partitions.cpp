// libFuzzer target for the partitions.conf reader. Any input either reads
// or throws PartitionError with a "SOURCE:LINE: problem" or "SOURCE: problem"
// message; anything else (another exception, a sanitizer report) is a bug.
// What reads must give P_Key tables that hold PartitionCap entries with the
// Default partition (or an indx0 P_Key) at index 0 and no base twice, and
// well-known groups with multicast MGIDs and the full-member bit set.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sm/partitions/partition_reader.h"
#include "sm/partitions/pkey_assignment.h"

using namespace ibfab::sm::partitions;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  PartitionConfig c;
  try {
    c = read_partitions(text, "fuzz.conf");
  } catch (const PartitionError& e) {
    const std::string m = e.what();
    if (m.rfind("fuzz.conf:", 0) != 0 || m.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  if (!c.partitions.count(kDefaultPKey)) std::abort();
  const std::vector<EndPortRef> ports = {{0x10, 1, 128}, {0x11, 1, 3}, {0x2c90300000001, 2, 32}, {0x1, 3, 1}};
  const auto tables = assign_pkeys(c, ports, 0x10);
  if (tables.size() != ports.size()) std::abort();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (tables[i].size() != ports[i].partition_cap) std::abort();
    std::set<uint16_t> bases;
    for (const uint16_t k : tables[i])
      if (k != 0 && !bases.insert(k & 0x7FFF).second) std::abort();
  }
  if ((tables[0][0] & 0x7FFF) == 0) std::abort();  // the SM's port is always a member of something at 0
  for (const auto& g : well_known_groups(c))
    if (!g.mgid.is_multicast() || !(g.p_key & 0x8000) || g.scope > 15) std::abort();
  return 0;
}
