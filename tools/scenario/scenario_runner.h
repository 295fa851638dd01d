#pragma once
// Runs a scenario: builds the fabric, schedules its actions, runs the
// simulator for the scenario's duration and reports. Every event of the
// run (its binary fields, the packets' bytes, what the hosts observe) is
// folded into the report's fingerprint (sim::RunDigest); the same scenario
// and seed give the same fingerprint under every scheduler. Text is
// formatted only for RunOptions::trace.
#include <cstdio>
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
  std::string trace;           // write the text trace to this file ("" = none)
  std::string dot_dir;         // write one DOT picture per multicast tree here ("" = none)
  // Where to print a progress line (progress_line.h) once a run has taken
  // 3 s of wall time (null: never). The run itself is unaffected.
  std::FILE* progress = nullptr;
  std::optional<uint64_t> seed;  // overrides the scenario's seed
  std::optional<std::string> scheduler;  // overrides the scenario's scheduler
  // A policy name overriding every SM's policy of that kind: a routing
  // engine (minhop, updn), a multicast root (min-max-hop, least-loaded), an
  // MLID allocator (lowest-free, round-robin) or an admission
  // (unlimited, max-groups-per-port:N). For `ibfab run --compare`.
  std::optional<std::string> policy;
};

// Throws ScenarioError (an action naming a node or link the topology does
// not have, with its line), topo::TopologyError, or std::runtime_error for
// files that cannot be written.
Report run_scenario(const Scenario& s, const RunOptions& options);

// Applies a --compare policy name to an SM's settings; false if the name is
// no known policy of any kind.
bool apply_policy(const std::string& name, SmSpec& sm);

}  // namespace ibfab::scenario
