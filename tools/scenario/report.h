#pragma once
// What a scenario run produced: the figures `ibfab run` prints as text or
// JSON. Everything but the wall-clock figures is a deterministic function of
// the scenario and its seed.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/latency_summary.h"
#include "sim/time.h"

namespace ibfab::scenario {

// Report lines kept up to a cap, the rest only counted: a scenario of a
// million actions reports them in bounded memory. The first kKept lines are
// kept (a run's story starts there); dropped() says how many followed.
class ReportLines {
 public:
  static constexpr std::size_t kKept = 1000;
  void push_back(std::string line) {
    if (lines_.size() < kKept) lines_.push_back(std::move(line));
    else ++dropped_;
  }
  // The last line pushed, if it was kept (else null).
  std::string* last_pushed() { return dropped_ == 0 && !lines_.empty() ? &lines_.back() : nullptr; }
  std::size_t size() const { return lines_.size(); }
  bool empty() const { return lines_.empty(); }
  const std::string& operator[](std::size_t i) const { return lines_[i]; }
  std::vector<std::string>::const_iterator begin() const { return lines_.begin(); }
  std::vector<std::string>::const_iterator end() const { return lines_.end(); }
  uint64_t dropped() const { return dropped_; }

 private:
  std::vector<std::string> lines_;
  uint64_t dropped_ = 0;
};

struct ProbeReport {
  std::string from;
  sim::Time at, took;
  std::size_t nodes = 0, switches = 0, links = 0;
  std::size_t expected_nodes = 0, expected_links = 0;  // reachable in the model
  uint64_t smps = 0, retries = 0, unanswered = 0;
  bool finished = false;  // false: the run ended before the probe did
  bool complete() const { return finished && nodes == expected_nodes && links == expected_links; }
};

struct SmReport {
  std::string node, routing;
  sim::Time started;
  bool up = false;
  std::string error;
  sim::Time took;  // start of the sweep to every port Active
  uint64_t smps = 0, smps_discovery = 0, smps_lids = 0, smps_routing = 0, smps_activation = 0;
  uint64_t retries = 0;
  std::size_t nodes = 0, switches = 0, end_ports = 0, ports_activated = 0;
  uint16_t max_lid = 0;
  double routing_wall_seconds = 0;
  // Checked against the fabric when the subnet came up: end ports Active
  // with their LIDs, and LFT walks from every switch to every end port.
  std::size_t routes_checked = 0, routes_broken = 0, ports_not_active = 0;
  // SM election: the state when the run ended (master, standby, discovering,
  // not-active), and when a master became master.
  std::string state;
  sim::Time master_since;
};

struct Report {
  std::string name, file, topology;
  uint64_t seed = 0;
  std::size_t hcas = 0, switches = 0, links = 0;
  unsigned diameter = 0;
  sim::Time duration;
  uint64_t events = 0;
  double wall_seconds = 0;
  uint64_t hops_transmitted = 0, hops_delivered = 0;
  std::vector<std::pair<std::string, uint64_t>> drops;  // by reason, non-zero only
  ReportLines actions;                                  // "1.000ms link-down S1[3]"
  std::vector<ProbeReport> probes;
  std::vector<SmReport> sms;
  // What the hosts did, with its outcome: joins, leaves, sends, verbs calls, connections and posts.
  ReportLines timeline;
  std::vector<std::string> groups;    // the SA's groups when the run ended, with their trees
  std::vector<std::string> failures;  // unmet expectations, in time order
  // SA requests (join, leave, subscribe) sent and not yet answered or
  // timed out; a run that ends with any fails.
  uint64_t sa_waiting = 0;
  std::string fingerprint;                  // of this run
  std::optional<std::string> expected;      // from the scenario file
  std::string pcap;

  bool fingerprint_matches() const { return !expected || *expected == fingerprint; }
  std::size_t checks = 0;  // expectations evaluated
  // Policy figures, from the master SM at the end of the run.
  // Bounded summaries (count, median and maximum exact at the printed
  // precision; sim::LatencySummary), whatever the number of actions.
  sim::LatencySummary join_latency;  // every successful join, request to answer
  // Every membership change the SA made, from the change to the last MFT
  // SMP it needed answered (McastManager::programming, reroutes excluded).
  sim::LatencySummary mft_latency;
  uint64_t sa_mads_received = 0, sa_mads_sent = 0;
  uint64_t mft_smps = 0;
  std::size_t mft_entries = 0, trees = 0;
  std::size_t max_mft_entries_per_switch = 0;
  unsigned max_tree_depth = 0;
  double mean_tree_depth = 0;
  uint32_t max_link_load = 0;
  double mean_link_load = 0;
  std::string policy;  // what --compare applied ("" otherwise)
  bool passed() const;
};

void print_text(const Report& r, std::ostream& out);
void print_json(const Report& r, std::ostream& out);
// Side by side: the figures of the same scenario under two policies.
void print_comparison(const Report& a, const Report& b, std::ostream& out);

}  // namespace ibfab::scenario
