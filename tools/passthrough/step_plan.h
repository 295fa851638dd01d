#pragma once
// Which of a scenario's actions pass through to real devices, in the order
// they run. A scenario's times become order only: actions run in time
// order (file order on ties), each repetition of an `every` action as a
// step of its own. Everything that cannot pass through is refused before
// anything runs.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/time.h"
#include "tools/passthrough/group_address.h"
#include "tools/passthrough/host_map.h"
#include "tools/scenario/scenario.h"

namespace ibfab::passthrough {

// "FILE:LINE: ACTION cannot pass through to a real device: WHY" (or a host
// with no device in the map): one line.
class Refusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Step {
  sim::Time at;
  const scenario::Action* action;
};

// The most steps one run takes (repetitions included).
inline constexpr std::size_t kMaxSteps = 100'000;

// Throws Refusal for the first action (in file order) that cannot pass
// through, or that names a group whose address under `family` is another
// group's. `hosts` gets the hosts the steps use, in name order.
std::vector<Step> plan_steps(const scenario::Scenario& s, const HostMap& map, Family family,
                             std::vector<std::string>& hosts);

// The hosts of `hosts` named in `local` ("H1,H3"), for a process that
// shares the run with a peer: throws Refusal for a name `map` does not
// map, or a connection step between a local host and the peer's. (A
// mapped host the run does not use has nothing to do.)
std::vector<std::string> split_hosts(const scenario::Scenario& s, const std::vector<Step>& steps, const HostMap& map,
                                     const std::vector<std::string>& hosts, const std::string& local);

// The join-state bit as rdma_cm's join flag names it ("full",
// "send-only-full"); other states do not pass through.
const char* join_state_name(uint8_t bits);

}  // namespace ibfab::passthrough
