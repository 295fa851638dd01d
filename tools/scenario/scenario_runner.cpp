#include "tools/scenario/scenario_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "fabric/topology/topology_spec.h"
#include "fabric/topology/topology_stats.h"
#include "sm/mcast/mcast_policies.h"
#include "tools/scenario/route_check.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/scenario_run.h"
#include "tools/scenario/tree_dot.h"

namespace ibfab::scenario {

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

Report run_scenario(const Scenario& s, const RunOptions& options) { return ScenarioRun(s, options).run(); }

std::string qpn_text(uint32_t qpn) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%06x", qpn);
  return buf;
}

std::string hex16(unsigned v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04x", v);
  return b;
}

std::string join_state_name(uint8_t js) {
  switch (js) {
    case 1: return "full";
    case 2: return "non-member";
    case 4: return "send-only-non-member";
    case 8: return "send-only-full";
  }
  char b[8];
  std::snprintf(b, sizeof b, "0x%x", js);
  return b;
}

namespace {

// The progress line starts before the model is built: that is the first phase.
std::unique_ptr<ProgressLine> start_progress_line(std::FILE* out, const std::string& name, sim::Progress& p) {
  p.begin("model build", "");
  return std::make_unique<ProgressLine>(out, name, p);
}

}  // namespace

ScenarioRun::ScenarioRun(const Scenario& s, const RunOptions& options)
    : s_(s),
      options_(options),
      progress_line_(start_progress_line(options.progress, s.name, progress_)),
      topology_(topo::load_topology(s.topology)) {
  const topo::TopologyStats stats = topo::compute_stats(topology_);
  r_.name = s.name;
  r_.file = s.file;
  r_.topology = s.topology;
  r_.seed = options.seed.value_or(s.seed);
  r_.hcas = stats.hcas;
  r_.switches = stats.switches;
  r_.links = stats.links;
  r_.diameter = stats.diameter;
  r_.duration = s.duration;
  r_.expected = s.fingerprint;
  r_.policy = options.policy.value_or("");
  sim_ = std::make_unique<sim::Simulator>(r_.seed, sim::make_scheduler(options.scheduler.value_or(s.scheduler)));
  sim_->report_progress_to(progress_);
  fabric::FabricOptions fo;
  fo.seed = r_.seed;
  fabric_ = std::make_unique<fabric::Fabric>(*sim_, topology_, fo);
  attach_outputs();
  start_sms();
}

void ScenarioRun::attach_outputs() {
  sim::Simulator& sim = *sim_;
  fabric::Fabric& fabric = *fabric_;
  sim.trace().attach_digest(&digest_);
  if (!options_.trace.empty()) {
    trace_file_.reset(std::fopen(options_.trace.c_str(), "w"));
    if (!trace_file_) throw std::runtime_error(options_.trace + ": cannot write the trace");
    file_sink_ = std::make_unique<sim::FileTraceSink>(trace_file_.get());
    sim.trace().attach(file_sink_.get());
  }
  if (!options_.pcap.empty()) {
    const std::string err = pcap_.open(
        options_.pcap, options_.pcap_linktype_247 ? wire::PcapWriter::Link::kInfiniband : wire::PcapWriter::Link::kErf);
    if (!err.empty()) throw std::runtime_error(err);
    std::vector<uint32_t> chosen;
    for (const std::string& text : options_.pcap_links) {
      LinkRef ref;
      fabric::Node* n = parse_link_ref(text, ref) ? fabric.find(ref.node) : nullptr;
      if (!n || ref.port > n->num_ports() || !n->port(ref.port).link())
        throw ScenarioError("--pcap-link " + text + ": no such cabled port (expected NODE[PORT])");
      if (const std::string e = fabric::far_end_problem(*n->port(ref.port).link(), *n, ref); !e.empty())
        throw ScenarioError("--pcap-link " + e);
      chosen.push_back(n->port(ref.port).link()->id());
    }
    fabric.capture(&pcap_, chosen);
    r_.pcap = options_.pcap;
  }
}

void ScenarioRun::start_sms() {
  fabric::Fabric& fabric = *fabric_;
  for (const SmSpec& spec : s_.sms) {
    fabric::Hca* h = fabric.find_hca(spec.node);
    if (!h) {
      throw ScenarioError(s_.file + ":" + std::to_string(spec.line) + ": an SM runs on a host; '" + spec.node + "' is " +
                          (fabric.find(spec.node) ? "a switch" : "not in the topology"));
    }
    if (spec.port > h->num_ports())
      throw ScenarioError(s_.file + ":" + std::to_string(spec.line) + ": " + spec.node + " has no port " +
                          std::to_string(spec.port));
    SmSpec effective = spec;
    if (options_.policy && !apply_policy(*options_.policy, effective))
      throw ScenarioError("--compare: '" + *options_.policy + "' is no routing engine or multicast policy");
    sm::SmOptions o;
    o.routing = effective.routing;
    o.mcast_root = effective.mcast_root;
    o.mlid_allocator = effective.mlid_allocator;
    o.admission = effective.admission;
    o.mcast_batch = effective.mcast_batch;
    o.priority = spec.priority;
    o.partition_config = spec.partitions;
    sms_.push_back(std::make_unique<sm::SubnetManager>(*h, spec.port, o));
    sm::SubnetManager* m = sms_.back().get();
    const std::size_t slot = r_.sms.size();
    SmReport rep;
    rep.node = spec.node;
    rep.routing = spec.routing;
    rep.started = spec.at;
    r_.sms.push_back(rep);
    m->on_subnet_up = [this, slot, h](const sm::SweepReport& w) {
      SmReport& out = r_.sms[slot];
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
      const RouteCheck c = check_unicast_routes(*fabric_);
      progress_.begin("running the scenario", "");
      out.routes_checked = c.checked;
      out.routes_broken = c.broken;
      out.ports_not_active = c.ports_not_active;
      sim::Trace& tr = sim_->trace();
      if (sim::RunDigest* d = tr.digest()) {
        d->event(sim_->now(), h->index(), sim::kind_tag("up"));
        d->fold(w.smps);
        d->fold(w.max_lid);
      }
      tr.emit(sim_->now(), h->name(), "subnet up smps=%llu max_lid=%u", static_cast<unsigned long long>(w.smps),
              w.max_lid);
    };
    sim_->schedule_at(spec.at, [m] { m->start(); });
  }

}

Report ScenarioRun::run() {
  for (const Action& a : s_.actions) {
    std::function<void()> apply = bind(a);
    if (a.every == sim::Time::zero()) {
      sim_->schedule_at(a.at, std::move(apply));
      continue;
    }
    if (a.kind == Action::Kind::Probe) fail(a, "a probe cannot repeat ('every')");
    if (std::string* line = r_.actions.last_pushed()) *line += " every " + a.every.str() + " until " + a.until.str();
    repeats_.push_back({std::move(apply), a.every, a.until});
    sim_->schedule_at(a.at, [this, i = repeats_.size() - 1] { repeat(i); });
  }
  const auto t0 = std::chrono::steady_clock::now();
  advance();
  collect();
  r_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!options_.pcap.empty()) {
    const std::string err = pcap_.close();
    if (!err.empty()) throw std::runtime_error(err);
  }
  if (file_sink_)
    if (const int e = file_sink_->flush())
      throw std::runtime_error(options_.trace + ": the trace could not be written: " + std::strerror(e));
  return std::move(r_);
}

void ScenarioRun::repeat(std::size_t i) {
  const Repeat& r = repeats_[i];
  r.apply();
  if (sim_->now() + r.every <= r.until) sim_->schedule(r.every, [this, i] { repeat(i); });
}

void ScenarioRun::advance() {
  if (s_.sms.empty()) progress_.begin("running the scenario", "");
  sim_->run_until(s_.duration);
  progress_line_.reset();  // the run is done: no more lines
}

void ScenarioRun::collect() {
  end_connections();
  for (std::size_t i = 0; i < sms_.size(); ++i) {
    if (!r_.sms[i].up) r_.sms[i].error = sms_[i]->last_sweep().error;
    static constexpr const char* kStates[] = {"not-active", "discovering", "standby", "master"};
    r_.sms[i].state = kStates[sms_[i]->state() & 3];
    if (sms_[i]->master()) r_.sms[i].master_since = sms_[i]->last_sweep().master_since;
  }
  if (!sms_.empty() && current_sm().groups()) collect_groups();
  if (r_.sa_waiting)
    r_.failures.push_back(std::to_string(r_.sa_waiting) +
                          " SA request(s) still waiting for an answer or their timeout when the run ended (a join's "
                          "tries take up to 3.344s)");
  r_.events = sim_->events_run();
  const auto& fs = fabric_->stats();
  r_.hops_transmitted = fs.transmitted;
  r_.hops_delivered = fs.delivered;
  for (int i = 1; i < static_cast<int>(fabric::DropReason::kCount); ++i) {
    const auto why = static_cast<fabric::DropReason>(i);
    if (fs.drops(why)) r_.drops.emplace_back(fabric::to_string(why), fs.drops(why));
  }
  r_.fingerprint = digest_.hex();
}

void ScenarioRun::collect_groups() {
  sm::SubnetManager& m = current_sm();
  std::map<uint64_t, std::string> names;               // node GUID -> name, for tree roots
  std::map<uint64_t, const fabric::Port*> host_ports;  // port GUID -> port, for --dot
  for (uint32_t i = 0; i < fabric_->node_count(); ++i) {
    const fabric::Node& n = fabric_->node(i);
    names.emplace(n.guid(), n.name());
    for (uint8_t p = 1; !n.is_switch() && p <= n.num_ports(); ++p) host_ports.emplace(n.port(p).guid(), &n.port(p));
  }
  r_.mft_smps = m.mcast()->mft_smps_sent();
  r_.mft_latency = m.mcast()->programming().latency;
  r_.sa_mads_received = m.sa()->metrics().mads_received;
  r_.sa_mads_sent = m.sa()->metrics().mads_sent;
  r_.mft_entries = m.mcast()->mft_entries();
  for (const auto& [guid, n] : m.mcast()->mft_entries_per_switch())
    r_.max_mft_entries_per_switch = std::max(r_.max_mft_entries_per_switch, n);
  const sm::McastLinkLoad load = m.mcast()->link_load();
  r_.max_link_load = load.max;
  r_.mean_link_load = load.mean;
  unsigned depth_sum = 0;
  for (const sm::McastTreeInfo& t : m.mcast()->trees()) {
    if (!t.routed) continue;
    ++r_.trees;
    depth_sum += t.depth;
    r_.max_tree_depth = std::max(r_.max_tree_depth, t.depth);
  }
  r_.mean_tree_depth = r_.trees ? static_cast<double>(depth_sum) / static_cast<double>(r_.trees) : 0;
  for (const auto& [mgid, g] : m.groups()->groups()) {
    std::string line = mgid.str() + " mlid " + hex16(g.rec.mlid) + ": " + std::to_string(g.members.size()) + " members";
    const std::optional<sm::McastTreeInfo> t = m.mcast()->tree(g.rec.mlid);
    if (t && t->routed) {
      line += ", tree rooted at " + names[t->root_guid] + ", depth " + std::to_string(t->depth) + ", " +
              std::to_string(t->switches) + " switches";
    } else {
      line += ", no tree";
    }
    r_.groups.push_back(line);
    if (!options_.dot_dir.empty() && t && t->routed) {
      std::vector<const fabric::Port*> ports;
      for (const auto& [guid, member] : g.members)
        if (auto it = host_ports.find(guid); it != host_ports.end()) ports.push_back(it->second);
      char name[32];
      std::snprintf(name, sizeof name, "/mlid-%04x.dot", g.rec.mlid);
      std::ofstream dot(options_.dot_dir + name);
      if (!dot) throw std::runtime_error(options_.dot_dir + name + ": cannot write");
      write_tree_dot(dot, *fabric_, g.rec.mlid, mgid.str() + " (" + line.substr(line.find("mlid")) + ")", ports);
    }
  }
}

}  // namespace ibfab::scenario
