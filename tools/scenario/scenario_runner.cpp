#include "tools/scenario/scenario_runner.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <algorithm>
#include <tuple>
#include <memory>
#include <stdexcept>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/topology/topology_stats.h"
#include "fabric/wire/pcap_writer.h"
#include "sim/simulator.h"
#include "sm/discovery.h"
#include "sm/subnet_manager.h"
#include "tools/scenario/route_check.h"
#include "tools/scenario/scenario_host.h"
#include "tools/scenario/tree_dot.h"
#include "tools/scenario/scenario_loader.h"

namespace ibfab::scenario {
namespace {

[[noreturn]] void fail(const Scenario& s, const Action& a, const std::string& problem) {
  throw ScenarioError(s.file + ":" + std::to_string(a.line) + ": " + problem);
}

fabric::Link& resolve_link(const Scenario& s, const Action& a, fabric::Fabric& f) {
  fabric::Node* n = f.find(a.link.node);
  if (!n) fail(s, a, "no node '" + a.link.node + "' in the topology");
  if (a.link.port < 1 || a.link.port > n->num_ports())
    fail(s, a, a.link.node + " has ports 1.." + std::to_string(n->num_ports()) + ", not " + std::to_string(a.link.port));
  fabric::Link* l = n->port(a.link.port).link();
  if (!l) fail(s, a, "no cable on " + a.link.text);
  return *l;
}

// Nodes and links a directed-route probe from `from` can reach now: through
// up links and nodes, and through switches only (CAs do not forward SMPs).
std::pair<std::size_t, std::size_t> reachable(fabric::Fabric& f, fabric::Hca& from) {
  std::vector<bool> seen(f.node_count(), false);
  std::vector<bool> link_seen(f.link_count(), false);
  std::deque<fabric::Node*> q{&from};
  seen[from.index()] = true;
  std::size_t nodes = 1, links = 0;
  while (!q.empty()) {
    fabric::Node* n = q.front();
    q.pop_front();
    if (n != &from && !n->is_switch()) continue;
    for (uint8_t p = 1; p <= n->num_ports(); ++p) {
      if (n == &from && p != 1) continue;
      fabric::Port& port = n->port(p);
      if (!port.link_up()) continue;
      if (!link_seen[port.link()->id()]) {
        link_seen[port.link()->id()] = true;
        ++links;
      }
      fabric::Node& peer = port.peer()->node();
      if (!seen[peer.index()]) {
        seen[peer.index()] = true;
        ++nodes;
        q.push_back(&peer);
      }
    }
  }
  return {nodes, links};
}

}  // namespace

bool apply_policy(const std::string& name, SmSpec& sm) {
  for (auto engine : sm::routing_engine_names())
    if (name == engine) return sm.routing = name, true;
  auto is = [&](const std::string& root, const std::string& mlids, const std::string& admission) {
    try {
      sm::make_mcast_policies(root, "shortest-path", mlids, admission);
      return true;
    } catch (const std::invalid_argument&) {
      return false;
    }
  };
  if (is(name, "lowest-free", "unlimited")) return sm.mcast_root = name, true;
  if (is("min-max-hop", name, "unlimited")) return sm.mlid_allocator = name, true;
  if (is("min-max-hop", "lowest-free", name)) return sm.admission = name, true;
  return false;
}

Report run_scenario(const Scenario& s, const RunOptions& options) {
  const topo::Topology topology = topo::load_topology(s.topology);
  const topo::TopologyStats stats = topo::compute_stats(topology);
  Report r;
  r.name = s.name;
  r.file = s.file;
  r.topology = s.topology;
  r.seed = options.seed.value_or(s.seed);
  r.hcas = stats.hcas;
  r.switches = stats.switches;
  r.links = stats.links;
  r.diameter = stats.diameter;
  r.duration = s.duration;
  r.expected = s.fingerprint;
  r.policy = options.policy.value_or("");

  sim::Simulator sim(r.seed, sim::make_scheduler(options.scheduler.value_or(s.scheduler)));
  fabric::FabricOptions fo;
  fo.seed = r.seed;
  fabric::Fabric fabric(sim, topology, fo);

  sim::DigestTraceSink digest;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> trace_file(nullptr, &std::fclose);
  std::unique_ptr<sim::FileTraceSink> file_sink;
  std::unique_ptr<sim::TeeTraceSink> tee;
  sim.trace().attach(&digest);
  if (!options.trace.empty()) {
    trace_file.reset(std::fopen(options.trace.c_str(), "w"));
    if (!trace_file) throw std::runtime_error(options.trace + ": cannot write the trace");
    file_sink = std::make_unique<sim::FileTraceSink>(trace_file.get());
    tee = std::make_unique<sim::TeeTraceSink>(&digest, file_sink.get());
    sim.trace().attach(tee.get());
  }
  wire::PcapWriter pcap;
  if (!options.pcap.empty()) {
    const std::string err =
        pcap.open(options.pcap, options.pcap_linktype_247 ? wire::PcapWriter::Link::kInfiniband : wire::PcapWriter::Link::kErf);
    if (!err.empty()) throw std::runtime_error(err);
    std::vector<uint32_t> chosen;
    for (const std::string& text : options.pcap_links) {
      LinkRef ref;
      fabric::Node* n = parse_link_ref(text, ref) ? fabric.find(ref.node) : nullptr;
      if (!n || ref.port > n->num_ports() || !n->port(ref.port).link())
        throw ScenarioError("--pcap-link " + text + ": no such cabled port (expected NODE[PORT])");
      chosen.push_back(n->port(ref.port).link()->id());
    }
    fabric.capture(&pcap, chosen);
    r.pcap = options.pcap;
  }

  std::vector<std::unique_ptr<sm::SubnetManager>> sms;
  for (const SmSpec& spec : s.sms) {
    fabric::Hca* h = fabric.find_hca(spec.node);
    if (!h) {
      throw ScenarioError(s.file + ":" + std::to_string(spec.line) + ": an SM runs on a host; '" + spec.node + "' is " +
                          (fabric.find(spec.node) ? "a switch" : "not in the topology"));
    }
    if (spec.port > h->num_ports())
      throw ScenarioError(s.file + ":" + std::to_string(spec.line) + ": " + spec.node + " has no port " +
                          std::to_string(spec.port));
    SmSpec effective = spec;
    if (options.policy && !apply_policy(*options.policy, effective))
      throw ScenarioError("--compare: '" + *options.policy + "' is no routing engine or multicast policy");
    sm::SmOptions o;
    o.routing = effective.routing;
    o.mcast_root = effective.mcast_root;
    o.mlid_allocator = effective.mlid_allocator;
    o.admission = effective.admission;
    o.priority = spec.priority;
    sms.push_back(std::make_unique<sm::SubnetManager>(*h, spec.port, o));
    sm::SubnetManager* m = sms.back().get();
    const std::size_t slot = r.sms.size();
    SmReport rep;
    rep.node = spec.node;
    rep.routing = spec.routing;
    rep.started = spec.at;
    r.sms.push_back(rep);
    m->on_subnet_up = [&r, &fabric, &sim, slot, h](const sm::SweepReport& w) {
      SmReport& out = r.sms[slot];
      out.up = true;
      out.took = w.up - w.started;
      out.smps = w.smps;
      out.smps_discovery = w.smps_discovery;
      out.smps_lids = w.smps_lids;
      out.smps_routing = w.smps_routing;
      out.smps_activation = w.smps_activation;
      out.retries = w.retries;
      out.nodes = w.nodes;
      out.switches = w.switches;
      out.end_ports = w.end_ports;
      out.ports_activated = w.ports_activated;
      out.max_lid = w.max_lid;
      out.routing_wall_seconds = w.routing_wall_seconds;
      const RouteCheck c = check_unicast_routes(fabric);
      out.routes_checked = c.checked;
      out.routes_broken = c.broken;
      out.ports_not_active = c.ports_not_active;
      sim.trace().emit(sim.now(), h->name(), "subnet up smps=%llu max_lid=%u",
                       static_cast<unsigned long long>(w.smps), w.max_lid);
    };
    sim.schedule_at(spec.at, [m] { m->start(); });
  }

  // The SM whose SA answers: the master, else the first.
  auto current_sm = [&sms]() -> sm::SubnetManager& {
    for (auto& m : sms)
      if (m->master()) return *m;
    return *sms.front();
  };

  std::map<std::string, std::unique_ptr<ScenarioHost>> hosts;
  auto host = [&](const Action& a, const std::string& node) -> ScenarioHost& {
    fabric::Hca* h = fabric.find_hca(node);
    if (!h) fail(s, a, "'" + node + "' is " + (fabric.find(node) ? "a switch, not a host" : "not in the topology"));
    auto& slot = hosts[node];
    if (!slot) slot = std::make_unique<ScenarioHost>(*h);
    return *slot;
  };
  auto state_name = [](uint8_t js) {
    switch (js) {
      case 1: return std::string("full");
      case 2: return std::string("non-member");
      case 4: return std::string("send-only-non-member");
      case 8: return std::string("send-only-full");
    }
    char b[8];
    std::snprintf(b, sizeof b, "0x%x", js);
    return std::string(b);
  };
  auto hex16 = [](unsigned v) {
    char b[8];
    std::snprintf(b, sizeof b, "0x%04x", v);
    return std::string(b);
  };

  // Resolve every action against the fabric before anything runs.
  struct Probe {
    sm::SmpSender sender;
    sm::Discovery discovery;
    explicit Probe(fabric::Hca& h) : sender(h, 1, sm::SmpSender::Options{}), discovery(sender) {}
  };
  std::vector<std::unique_ptr<Probe>> probes;
  for (const Action& a : s.actions) {
    std::function<void()> apply;
    const std::string label = a.at.str() + " " + to_string(a.kind) + " ";
    switch (a.kind) {
      case Action::Kind::LinkDown:
      case Action::Kind::LinkUp: {
        fabric::Link& l = resolve_link(s, a, fabric);
        const bool up = a.kind == Action::Kind::LinkUp;
        apply = [&fabric, &l, up] { fabric.set_link_up(l, up); };
        r.actions.push_back(label + a.link.text);
        break;
      }
      case Action::Kind::LinkLoss: {
        fabric::Link& l = resolve_link(s, a, fabric);
        const double p = a.probability;
        apply = [&fabric, &l, p] { fabric.set_link_loss(l, p); };
        char buf[32];
        std::snprintf(buf, sizeof buf, " p=%g", p);
        r.actions.push_back(label + a.link.text + buf);
        break;
      }
      case Action::Kind::NodeDown:
      case Action::Kind::NodeUp: {
        fabric::Node* n = fabric.find(a.node);
        if (!n) fail(s, a, "no node '" + a.node + "' in the topology");
        const bool up = a.kind == Action::Kind::NodeUp;
        apply = [&fabric, n, up] { fabric.set_node_up(*n, up); };
        r.actions.push_back(label + a.node);
        break;
      }
      case Action::Kind::Join:
      case Action::Kind::Leave: {
        // "*" stands for every host, in node order.
        std::vector<ScenarioHost*> targets;
        if (a.node == "*") {
          for (uint32_t i = 0; i < fabric.node_count(); ++i)
            if (!fabric.node(i).is_switch()) {
              Action one = a;
              one.node = fabric.node(i).name();
              targets.push_back(&host(one, one.node));
            }
        } else {
          targets.push_back(&host(a, a.node));
        }
        const bool join = a.kind == Action::Kind::Join;
        const McastSpec spec = a.mcast;
        const std::string verb = join ? " join " : " leave ";
        const std::string what = a.node + verb + spec.mgid + " (" + state_name(spec.join_state) + ")";
        // Every host's answer is checked; a many-host action is reported as
        // one line (answers, statuses, latency) when its last answer is in.
        struct Tally {
          std::size_t answers = 0, ok = 0;
          std::vector<int64_t> latencies_ps;
        };
        auto tally = std::make_shared<Tally>();
        const std::size_t expected_answers = targets.size();
        apply = [&r, hex16, state_name, targets, join, spec, verb, what, tally, expected_answers, at = a.at] {
          for (ScenarioHost* hs : targets) {
            const std::string one = hs->name() + verb + spec.mgid + " (" + state_name(spec.join_state) + ")";
            auto done = [&r, hex16, spec, one, join, what, tally, expected_answers, at](const JoinResult& res) {
              std::string line = res.sent.str() + " " + one + " -> ";
              if (res.status == JoinResult::kTimedOut) line += "no answer";
              else line += "status " + hex16(res.status);
              if (res.status == 0 && join) {
                line += " mlid " + hex16(res.mlid) + " mgid " + res.mgid.str();
                r.join_latencies_ps.push_back((res.answered - res.sent).ps());
              }
              if (res.status != JoinResult::kTimedOut) line += " in " + (res.answered - res.sent).str();
              const uint16_t want = spec.expect_status.value_or(0);
              ++r.checks;
              if (res.status != want) r.failures.push_back(line + " (expected status " + hex16(want) + ")");
              if (expected_answers == 1) {
                r.timeline.push_back(line);
                return;
              }
              ++tally->answers;
              tally->ok += res.status == want;
              tally->latencies_ps.push_back((res.answered - res.sent).ps());
              if (tally->answers < expected_answers) return;
              std::sort(tally->latencies_ps.begin(), tally->latencies_ps.end());
              r.timeline.push_back(at.str() + " " + what + ": " + std::to_string(tally->ok) + "/" +
                                   std::to_string(tally->answers) + " answered " + hex16(want) + ", latency median " +
                                   sim::Time::ps(tally->latencies_ps[tally->latencies_ps.size() / 2]).str() +
                                   ", max " + sim::Time::ps(tally->latencies_ps.back()).str());
            };
            if (join) hs->join(spec, done);
            else hs->leave(spec, done);
          }
        };
        r.actions.push_back(a.at.str() + " " + what);
        break;
      }
      case Action::Kind::Send: {
        ScenarioHost& hs = host(a, a.node);
        const McastSpec spec = a.mcast;
        const std::string what = a.node + " send " + std::to_string(spec.count) + " x " + std::to_string(spec.size) +
                                 " B to " + spec.mgid;
        apply = [&, hs = &hs, spec, what, at = a.at] {
          ++r.checks;
          if (hs->send(spec)) r.timeline.push_back(at.str() + " " + what);
          else r.failures.push_back(at.str() + " " + what + ": the host has not joined the group");
        };
        r.actions.push_back(a.at.str() + " " + what);
        break;
      }
      case Action::Kind::Subscribe: {
        ScenarioHost& hs = host(a, a.node);
        const std::string what = a.node + " subscribe to trap " + std::to_string(a.trap);
        apply = [&r, hex16, hs = &hs, trap = a.trap, what, at = a.at] {
          hs->subscribe(trap, [&r, hex16, what, at](const JoinResult& res) {
            ++r.checks;
            const std::string line = at.str() + " " + what + " -> " +
                                     (res.status == JoinResult::kTimedOut ? "no answer" : "status " + hex16(res.status));
            r.timeline.push_back(line);
            if (res.status != 0) r.failures.push_back(line);
          });
        };
        r.actions.push_back(a.at.str() + " " + what);
        break;
      }
      case Action::Kind::Expect: {
        const Expectation e = a.expect;
        if (!e.node.empty()) host(a, e.node);
        if (!e.group.empty() && sms.empty()) fail(s, a, "'expect' on a group needs an SM (sms:) to ask");
        std::string what = !e.group.empty() ? "group " + e.group
                           : e.trap ? e.node + " got " + std::to_string(*e.reports) + " trap " + std::to_string(*e.trap) +
                                          " reports"
                                    : e.node + " received " + std::to_string(*e.received);
        if (e.exists) what += *e.exists ? " exists" : " does not exist";
        if (e.members) what += " with " + std::to_string(*e.members) + " members";
        apply = [&, e, what, at = a.at] {
          ++r.checks;
          std::string got;
          if (!e.node.empty() && e.trap) {
            const uint64_t n = hosts.at(e.node)->reports(*e.trap);
            if (n != *e.reports) got = "got " + std::to_string(n);
          } else if (!e.node.empty()) {
            const uint64_t n = hosts.at(e.node)->received();
            if (n != *e.received) got = "received " + std::to_string(n);
          } else {
            const sm::McastGroup* g = current_sm().groups()->find(*wire::Gid::parse(e.group));
            if (e.exists && (g != nullptr) != *e.exists) got = g ? "it exists" : "it does not exist";
            else if (e.members && (!g || g->members.size() != *e.members))
              got = g ? "it has " + std::to_string(g->members.size()) + " members" : "it does not exist";
          }
          if (!got.empty()) r.failures.push_back(at.str() + " expect " + what + ": " + got);
        };
        r.actions.push_back(label + what);
        break;
      }
      case Action::Kind::SmKill: {
        sm::SubnetManager* m = nullptr;
        for (std::size_t i = 0; i < s.sms.size(); ++i)
          if (s.sms[i].node == a.node) m = sms[i].get();
        if (!m) fail(s, a, "'sm-kill': no SM runs on '" + a.node + "'");
        apply = [m] { m->stop(); };
        r.actions.push_back(label + a.node);
        break;
      }
      case Action::Kind::Probe: {
        fabric::Hca* h = fabric.find_hca(a.node);
        if (!h) fail(s, a, "'probe' needs a host (an HCA); '" + a.node + "' is " +
                               (fabric.find(a.node) ? "a switch" : "not in the topology"));
        probes.push_back(std::make_unique<Probe>(*h));
        sm::Discovery* d = &probes.back()->discovery;
        const std::size_t slot = r.probes.size();
        ProbeReport pr;
        pr.from = a.node;
        pr.at = a.at;
        r.probes.push_back(pr);
        apply = [&, d, h, slot] {
          d->start([&, h, slot](const sm::DiscoveryResult& res) {
            ProbeReport& p = r.probes[slot];
            p.finished = true;
            p.took = res.finished - res.started;
            p.nodes = res.nodes.size();
            p.switches = res.switches();
            p.links = res.links.size();
            p.smps = res.smps_sent;
            p.retries = res.retries;
            p.unanswered = res.unanswered;
            std::tie(p.expected_nodes, p.expected_links) = reachable(fabric, *h);
            sim.trace().emit(sim.now(), h->name(), "probe done nodes=%zu links=%zu smps=%llu", p.nodes, p.links,
                             static_cast<unsigned long long>(p.smps));
          });
        };
        r.actions.push_back(label + a.node);
        break;
      }
    }
    sim.schedule_at(a.at, std::move(apply));
  }

  const auto t0 = std::chrono::steady_clock::now();
  // In 200 slices of simulated time, so that a long run can say how far it
  // is; slicing run_until changes no event's time or order.
  auto last_print = t0;
  for (int slice = 1; slice <= 200; ++slice) {
    sim.run_until(slice == 200 ? s.duration : s.duration / 200 * slice);
    if (!options.progress) continue;
    const auto now = std::chrono::steady_clock::now();
    if (now - t0 < std::chrono::seconds(3) || now - last_print < std::chrono::seconds(1)) continue;
    last_print = now;
    std::fprintf(options.progress, "ibfab: %s: %s of %s simulated, %llu events, %.0f s\n", s.name.c_str(),
                 sim.now().str().c_str(), s.duration.str().c_str(), static_cast<unsigned long long>(sim.events_run()),
                 std::chrono::duration<double>(now - t0).count());
    std::fflush(options.progress);
  }
  for (std::size_t i = 0; i < sms.size(); ++i) {
    if (!r.sms[i].up) r.sms[i].error = sms[i]->last_sweep().error;
    static constexpr const char* kStates[] = {"not-active", "discovering", "standby", "master"};
    r.sms[i].state = kStates[sms[i]->state() & 3];
    if (sms[i]->master()) r.sms[i].master_since = sms[i]->last_sweep().master_since;
  }
  if (!sms.empty() && current_sm().groups()) {
    sm::SubnetManager& m = current_sm();
    std::map<uint64_t, std::string> names;
    for (uint32_t i = 0; i < fabric.node_count(); ++i) names.emplace(fabric.node(i).guid(), fabric.node(i).name());
    r.mft_smps = m.mcast()->mft_smps_sent();
    r.mft_entries = m.mcast()->mft_entries();
    const sm::McastLinkLoad load = m.mcast()->link_load();
    r.max_link_load = load.max;
    r.mean_link_load = load.mean;
    unsigned depth_sum = 0;
    for (const sm::McastTreeInfo& t : m.mcast()->trees()) {
      if (!t.routed) continue;
      ++r.trees;
      depth_sum += t.depth;
      r.max_tree_depth = std::max(r.max_tree_depth, t.depth);
    }
    r.mean_tree_depth = r.trees ? static_cast<double>(depth_sum) / static_cast<double>(r.trees) : 0;
    for (const auto& [mgid, g] : m.groups()->groups()) {
      std::string line = mgid.str() + " mlid " + hex16(g.rec.mlid) + ": " + std::to_string(g.members.size()) + " members";
      const sm::McastTreeInfo* t = m.mcast()->tree(g.rec.mlid);
      if (t && t->routed) {
        line += ", tree rooted at " + names[t->root_guid] + ", depth " + std::to_string(t->depth) + ", " +
                std::to_string(t->switches) + " switches";
      } else {
        line += ", no tree";
      }
      r.groups.push_back(line);
      if (!options.dot_dir.empty() && t && t->routed) {
        std::vector<const fabric::Port*> ports;
        for (const auto& [guid, member] : g.members) {
          (void)member;
          for (uint32_t i = 0; i < fabric.node_count(); ++i) {
            const fabric::Node& n = fabric.node(i);
            for (uint8_t p = 1; !n.is_switch() && p <= n.num_ports(); ++p)
              if (n.port(p).guid() == guid) ports.push_back(&n.port(p));
          }
        }
        char name[32];
        std::snprintf(name, sizeof name, "/mlid-%04x.dot", g.rec.mlid);
        std::ofstream dot(options.dot_dir + name);
        if (!dot) throw std::runtime_error(options.dot_dir + name + ": cannot write");
        write_tree_dot(dot, fabric, g.rec.mlid, mgid.str() + " (" + line.substr(line.find("mlid")) + ")", ports);
      }
    }
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.events = sim.events_run();
  const auto& fs = fabric.stats();
  r.hops_transmitted = fs.transmitted;
  r.hops_delivered = fs.delivered;
  for (int i = 1; i < static_cast<int>(fabric::DropReason::kCount); ++i) {
    const auto why = static_cast<fabric::DropReason>(i);
    if (fs.drops(why)) r.drops.emplace_back(fabric::to_string(why), fs.drops(why));
  }
  r.fingerprint = digest.hex();
  if (!options.pcap.empty()) {
    const std::string err = pcap.close();
    if (!err.empty()) throw std::runtime_error(err);
  }
  return r;
}

}  // namespace ibfab::scenario
