#pragma once
// Runs a scenario: builds the fabric, schedules its actions, runs the
// simulator for the scenario's duration and reports. The trace of the run
// is always digested into the report's fingerprint; the same scenario and
// seed give the same fingerprint, byte for byte.
#include <optional>
#include <string>
#include <vector>

#include "tools/scenario/report.h"
#include "tools/scenario/scenario.h"

namespace ibfab::scenario {

struct RunOptions {
  std::string pcap;            // capture to this file ("" = none)
  std::vector<std::string> pcap_links;  // NODE[PORT] of the links to capture; empty = all
  bool pcap_linktype_247 = false;  // LINKTYPE_INFINIBAND instead of ERF
  std::string trace;           // also write the trace to this file ("" = none)
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::optional<std::string> scheduler;  // overrides the scenario's scheduler
};

// Throws ScenarioError (an action naming a node or link the topology does
// not have, with its line), topo::TopologyError, or std::runtime_error for
// files that cannot be written.
Report run_scenario(const Scenario& s, const RunOptions& options);

}  // namespace ibfab::scenario
