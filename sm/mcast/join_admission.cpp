#include "sm/mcast/join_admission.h"

namespace ibfab::sm {

std::string_view UnlimitedJoins::description() const {
  return "OpenSM's rule: every join is admitted (no cap on MFT entries or HCA attach tables)";
}

MaxGroupsPerPort::MaxGroupsPerPort(std::size_t limit)
    : limit_(limit), name_("max-groups-per-port:" + std::to_string(limit)) {}

std::string_view MaxGroupsPerPort::description() const {
  return "caps the groups a port may join (bounds MFT entries and per-port fan-in)";
}

std::unique_ptr<JoinAdmission> make_join_admission(std::string_view name) {
  if (name == "unlimited") return std::make_unique<UnlimitedJoins>();
  constexpr std::string_view kPrefix = "max-groups-per-port:";
  if (!name.starts_with(kPrefix)) return nullptr;
  const std::string_view digits = name.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 9) return nullptr;
  std::size_t n = 0;
  for (const char c : digits) {
    if (c < '0' || c > '9') return nullptr;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return std::make_unique<MaxGroupsPerPort>(n);
}

std::vector<std::string_view> join_admission_names() { return {"unlimited", "max-groups-per-port:N"}; }

}  // namespace ibfab::sm
