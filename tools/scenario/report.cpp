#include "tools/scenario/report.h"

#include <algorithm>
#include <cstdio>

namespace ibfab::scenario {
namespace {

// JSON string with the escapes RFC 8259 requires.
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

std::string median_of(const sim::LatencySummary& l) { return l.empty() ? "-" : l.median().str(); }

std::string max_of(const sim::LatencySummary& l) { return l.empty() ? "-" : l.max().str(); }

}  // namespace

bool Report::passed() const {
  if (!fingerprint_matches() || !failures.empty()) return false;
  // Exactly what counts: one master at least, every master up, and no
  // sweep that left broken routes. A standby, or an SM that was killed,
  // configures nothing.
  bool master = false;
  for (const SmReport& sm : sms) {
    if (sm.routes_broken || sm.ports_not_active) return false;
    if (sm.state == "master" && !sm.up) return false;
    master = master || sm.state == "master";
  }
  if (!sms.empty() && !master) return false;
  for (const ProbeReport& p : probes)
    if (!p.complete()) return false;
  return true;
}

void print_text(const Report& r, std::ostream& out) {
  out << "scenario   " << r.name << "  (" << r.file << ")\n";
  out << "topology   " << r.topology << ": " << r.hcas << " HCAs, " << r.switches << " switches, " << r.links
      << " links, diameter " << r.diameter << "\n";
  out << "run        seed " << r.seed << ", " << r.duration.str() << " simulated, " << r.events << " events in ";
  char wall[32];
  std::snprintf(wall, sizeof wall, "%.3f s", r.wall_seconds);
  out << wall << " wall\n";
  out << "packets    " << r.hops_transmitted << " hops sent, " << r.hops_delivered << " delivered";
  for (const auto& [why, n] : r.drops) out << ", " << n << " dropped (" << why << ")";
  out << "\n";
  for (const std::string& a : r.actions) out << "action     " << a << "\n";
  if (r.actions.dropped())
    out << "action     ... and " << r.actions.dropped() << " more (the report keeps the first "
        << ReportLines::kKept << ")\n";
  for (const ProbeReport& p : r.probes) {
    if (!p.finished) {
      out << "probe      from " << p.from << " at " << p.at.str() << ": UNFINISHED when the run ended\n";
      continue;
    }
    out << "probe      from " << p.from << " at " << p.at.str() << ": " << p.nodes << " nodes (" << p.switches
        << " switches), " << p.links << " links in " << p.took.str() << " simulated, " << p.smps << " SMPs";
    if (p.retries) out << ", " << p.retries << " retried";
    if (p.unanswered) out << ", " << p.unanswered << " unanswered";
    out << (p.complete() ? "  [matches the fabric]\n"
                         : "  [MISMATCH: the fabric has " + std::to_string(p.expected_nodes) + " reachable nodes, " +
                               std::to_string(p.expected_links) + " links]\n");
  }
  for (const SmReport& sm : r.sms) {
    out << "sm         " << sm.node << " (" << sm.routing << ") from " << sm.started.str() << ": ";
    if (!sm.up) {
      out << (sm.state == "standby" ? std::string("standby")
              : sm.error.empty()    ? "subnet NOT up when the run ended (" + sm.state + ")"
                                    : "FAILED: " + sm.error)
          << "\n";
      continue;
    }
    char routing_wall[32];
    std::snprintf(routing_wall, sizeof routing_wall, "%.3f s", sm.routing_wall_seconds);
    out << "subnet up in " << sm.took.str() << ", " << sm.smps << " SMPs (discovery " << sm.smps_discovery
        << ", LIDs " << sm.smps_lids << ", routing " << sm.smps_routing << ", activation " << sm.smps_activation
        << ")\n           " << sm.nodes << " nodes, " << sm.end_ports << " LIDs (max " << sm.max_lid << "), "
        << sm.ports_activated << " ports activated, routing computed in " << routing_wall << " wall\n"
        << "           check: " << sm.routes_checked - sm.routes_broken << "/" << sm.routes_checked
        << " routes from host-facing switches deliver";
    if (sm.ports_not_active) out << ", " << sm.ports_not_active << " host ports NOT Active";
    out << (sm.routes_broken || sm.ports_not_active ? "  [BROKEN]\n" : "  [ok]\n");
    out << "           state " << sm.state;
    if (sm.state == "master") out << " since " << sm.master_since.str();
    out << "\n";
  }
  for (const std::string& t : r.timeline) out << "host       " << t << "\n";
  if (r.timeline.dropped())
    out << "host       ... and " << r.timeline.dropped() << " more (the report keeps the first "
        << ReportLines::kKept << ")\n";
  for (const std::string& g : r.groups) out << "group      " << g << "\n";
  if (!r.join_latency.empty() || r.mft_smps)
    out << "mcast      " << r.join_latency.count() << " joins answered (latency median "
        << median_of(r.join_latency) << ", max " << max_of(r.join_latency) << "), "
        << r.mft_latency.count() << " membership changes programmed (median " << median_of(r.mft_latency)
        << ", max " << max_of(r.mft_latency) << ")\n           SA MADs " << r.sa_mads_received
        << " received, " << r.sa_mads_sent << " sent; " << r.mft_smps << " MFT SMPs, " << r.mft_entries
        << " MFT entries (at most " << r.max_mft_entries_per_switch << " on a switch), " << r.trees
        << " trees (depth max " << r.max_tree_depth << "), link load max " << r.max_link_load << "\n";
  if (r.checks) out << "checks     " << r.checks - r.failures.size() << "/" << r.checks << " expectations met\n";
  for (const std::string& f : r.failures) out << "FAILED     " << f << "\n";
  if (!r.pcap.empty()) out << "capture    " << r.pcap << "\n";
  out << "fingerprint " << r.fingerprint;
  if (r.expected) out << (r.fingerprint_matches() ? "  [matches the scenario]" : "  [MISMATCH: scenario says " + *r.expected + "]");
  out << "\n" << (r.passed() ? "PASS" : "FAIL") << "\n";
}

void print_json(const Report& r, std::ostream& out) {
  out << "{\n  \"scenario\": " << quoted(r.name) << ",\n  \"file\": " << quoted(r.file)
      << ",\n  \"topology\": {\"spec\": " << quoted(r.topology) << ", \"hcas\": " << r.hcas
      << ", \"switches\": " << r.switches << ", \"links\": " << r.links << ", \"diameter\": " << r.diameter
      << "},\n  \"seed\": " << r.seed << ",\n  \"simulated_ps\": " << r.duration.ps() << ",\n  \"events\": " << r.events
      << ",\n  \"wall_seconds\": " << r.wall_seconds << ",\n  \"packets\": {\"sent\": " << r.hops_transmitted
      << ", \"delivered\": " << r.hops_delivered << ", \"dropped\": {";
  for (std::size_t i = 0; i < r.drops.size(); ++i)
    out << (i ? ", " : "") << quoted(r.drops[i].first) << ": " << r.drops[i].second;
  out << "}},\n  \"actions\": [";
  for (std::size_t i = 0; i < r.actions.size(); ++i) out << (i ? ", " : "") << quoted(r.actions[i]);
  out << "],\n  \"actions_not_kept\": " << r.actions.dropped() << ",\n  \"probes\": [";
  for (std::size_t i = 0; i < r.probes.size(); ++i) {
    const ProbeReport& p = r.probes[i];
    out << (i ? ", " : "") << "{\"from\": " << quoted(p.from) << ", \"at_ps\": " << p.at.ps()
        << ", \"took_ps\": " << p.took.ps() << ", \"nodes\": " << p.nodes << ", \"switches\": " << p.switches
        << ", \"links\": " << p.links << ", \"expected_nodes\": " << p.expected_nodes
        << ", \"expected_links\": " << p.expected_links << ", \"smps\": " << p.smps << ", \"retries\": " << p.retries
        << ", \"unanswered\": " << p.unanswered << ", \"finished\": " << (p.finished ? "true" : "false") << "}";
  }
  out << "],\n  \"sms\": [";
  for (std::size_t i = 0; i < r.sms.size(); ++i) {
    const SmReport& m = r.sms[i];
    out << (i ? ", " : "") << "{\"node\": " << quoted(m.node) << ", \"routing\": " << quoted(m.routing)
        << ", \"up\": " << (m.up ? "true" : "false") << ", \"error\": " << quoted(m.error)
        << ", \"took_ps\": " << m.took.ps() << ", \"smps\": " << m.smps << ", \"smps_discovery\": " << m.smps_discovery
        << ", \"smps_lids\": " << m.smps_lids << ", \"smps_routing\": " << m.smps_routing
        << ", \"smps_activation\": " << m.smps_activation << ", \"retries\": " << m.retries
        << ", \"nodes\": " << m.nodes << ", \"switches\": " << m.switches << ", \"lids\": " << m.end_ports
        << ", \"max_lid\": " << m.max_lid << ", \"ports_activated\": " << m.ports_activated
        << ", \"routes_checked\": " << m.routes_checked << ", \"routes_broken\": " << m.routes_broken
        << ", \"ports_not_active\": " << m.ports_not_active << ", \"state\": " << quoted(m.state)
        << ", \"master_since_ps\": " << m.master_since.ps() << "}";
  }
  out << "],\n  \"host_actions\": [";
  for (std::size_t i = 0; i < r.timeline.size(); ++i) out << (i ? ", " : "") << quoted(r.timeline[i]);
  out << "],\n  \"host_actions_not_kept\": " << r.timeline.dropped() << ",\n  \"groups\": [";
  for (std::size_t i = 0; i < r.groups.size(); ++i) out << (i ? ", " : "") << quoted(r.groups[i]);
  out << "],\n  \"mcast\": {\"joins_answered\": " << r.join_latency.count()
      << ", \"changes_programmed\": " << r.mft_latency.count() << ", \"sa_mads_received\": " << r.sa_mads_received
      << ", \"sa_mads_sent\": " << r.sa_mads_sent << ", \"mft_smps\": " << r.mft_smps
      << ", \"mft_entries\": " << r.mft_entries
      << ", \"max_mft_entries_per_switch\": " << r.max_mft_entries_per_switch << ", \"trees\": " << r.trees
      << ", \"max_tree_depth\": " << r.max_tree_depth << ", \"max_link_load\": " << r.max_link_load << "}";
  out << ",\n  \"checks\": " << r.checks << ",\n  \"failures\": [";
  for (std::size_t i = 0; i < r.failures.size(); ++i) out << (i ? ", " : "") << quoted(r.failures[i]);
  out << "],\n  \"fingerprint\": " << quoted(r.fingerprint);
  if (r.expected) out << ",\n  \"expected_fingerprint\": " << quoted(*r.expected);
  out << ",\n  \"passed\": " << (r.passed() ? "true" : "false") << "\n}\n";
}

void print_comparison(const Report& a, const Report& b, std::ostream& out) {
  auto sm_field = [](const Report& r, auto get) -> std::string {
    for (const SmReport& s : r.sms)
      if (s.up) return get(s);
    return "-";
  };
  auto fmt = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return std::string(buf);
  };
  struct Row {
    const char* name;
    std::string x, y;
  };
  const Row rows[] = {
      {"subnet up (simulated)", sm_field(a, [](const SmReport& s) { return s.took.str(); }),
       sm_field(b, [](const SmReport& s) { return s.took.str(); })},
      {"SMPs to subnet up", sm_field(a, [](const SmReport& s) { return std::to_string(s.smps); }),
       sm_field(b, [](const SmReport& s) { return std::to_string(s.smps); })},
      {"joins answered", std::to_string(a.join_latency.count()), std::to_string(b.join_latency.count())},
      {"join latency median", median_of(a.join_latency), median_of(b.join_latency)},
      {"join latency max", max_of(a.join_latency), max_of(b.join_latency)},
      {"MFT programmed median", median_of(a.mft_latency), median_of(b.mft_latency)},
      {"MFT programmed max", max_of(a.mft_latency), max_of(b.mft_latency)},
      {"SA MADs received/sent", std::to_string(a.sa_mads_received) + "/" + std::to_string(a.sa_mads_sent),
       std::to_string(b.sa_mads_received) + "/" + std::to_string(b.sa_mads_sent)},
      {"MFT SMPs", std::to_string(a.mft_smps), std::to_string(b.mft_smps)},
      {"MFT entries in use", std::to_string(a.mft_entries), std::to_string(b.mft_entries)},
      {"MFT entries on the busiest switch", std::to_string(a.max_mft_entries_per_switch),
       std::to_string(b.max_mft_entries_per_switch)},
      {"multicast trees", std::to_string(a.trees), std::to_string(b.trees)},
      {"tree depth max", std::to_string(a.max_tree_depth), std::to_string(b.max_tree_depth)},
      {"tree depth mean", fmt(a.mean_tree_depth), fmt(b.mean_tree_depth)},
      {"link load max (trees per cable)", std::to_string(a.max_link_load), std::to_string(b.max_link_load)},
      {"link load mean", fmt(a.mean_link_load), fmt(b.mean_link_load)},
      {"expectations met", std::to_string(a.checks - a.failures.size()) + "/" + std::to_string(a.checks),
       std::to_string(b.checks - b.failures.size()) + "/" + std::to_string(b.checks)},
      {"result", a.passed() ? "PASS" : "FAIL", b.passed() ? "PASS" : "FAIL"},
  };
  char line[160];
  std::snprintf(line, sizeof line, "%-34s %20s %20s\n", ("scenario " + a.name).c_str(), a.policy.c_str(),
                b.policy.c_str());
  out << line;
  for (const Row& row : rows) {
    std::snprintf(line, sizeof line, "%-34s %20s %20s\n", row.name, row.x.c_str(), row.y.c_str());
    out << line;
  }
}

}  // namespace ibfab::scenario
