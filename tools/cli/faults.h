#pragma once
// The link faults `ibfab serve --fault` (and `ibfab launch`) hand the
// engine (api/server/fault_schedule.h): written on the command line, or
// taken from a scenario file's link actions.
#include <string>
#include <vector>

#include "api/server/fault_schedule.h"
#include "tools/scenario/scenario.h"

namespace ibfab::cli {

// Parses one "AT ACTION LINK [PROBABILITY]" (words separated by white
// space): AT a time as scenarios write it (0, 250ns, 1.5ms, 2s) counted
// from the moment serving starts; ACTION link-down, link-up or link-loss;
// LINK as NODE[PORT] or NODE[PORT]-NODE[PORT]; PROBABILITY in [0, 1],
// with link-loss and only with it. Throws std::invalid_argument
// "--fault 'TEXT': cause" (one printable line). Whether the link exists is
// the engine's to check, against its topology (api::Engine's constructor).
api::Fault parse_fault(const std::string& text);
// parse_fault of each, in order.
std::vector<api::Fault> parse_faults(const std::vector<std::string>& texts);

// The faults of `s`'s link-down, link-up and link-loss actions, their `at`
// counted from the moment serving starts, each named "FILE:LINE". Throws
// scenario::ScenarioError "FILE:LINE: problem" for such an action that
// repeats (every/until) and for node-down, node-up and sm-kill (faults the
// engine does not apply); the other actions (what hosts do, expectations)
// are not faults and are left out.
std::vector<api::Fault> faults_from_scenario(const scenario::Scenario& s);

}  // namespace ibfab::cli
