#include "tools/scenario/report.h"

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

}  // namespace

bool Report::passed() const {
  if (!fingerprint_matches()) return false;
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
  out << "],\n  \"probes\": [";
  for (std::size_t i = 0; i < r.probes.size(); ++i) {
    const ProbeReport& p = r.probes[i];
    out << (i ? ", " : "") << "{\"from\": " << quoted(p.from) << ", \"at_ps\": " << p.at.ps()
        << ", \"took_ps\": " << p.took.ps() << ", \"nodes\": " << p.nodes << ", \"switches\": " << p.switches
        << ", \"links\": " << p.links << ", \"expected_nodes\": " << p.expected_nodes
        << ", \"expected_links\": " << p.expected_links << ", \"smps\": " << p.smps << ", \"retries\": " << p.retries
        << ", \"unanswered\": " << p.unanswered << ", \"finished\": " << (p.finished ? "true" : "false") << "}";
  }
  out << "],\n  \"fingerprint\": " << quoted(r.fingerprint);
  if (r.expected) out << ",\n  \"expected_fingerprint\": " << quoted(*r.expected);
  out << ",\n  \"passed\": " << (r.passed() ? "true" : "false") << "\n}\n";
}

}  // namespace ibfab::scenario
