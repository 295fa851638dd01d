// How each scenario action is applied: ScenarioRun::bind and one method per
// kind. Names are resolved when the action is bound (before the run), so a
// bad name fails at once with the action's line.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <tuple>

#include "fabric/wire/gid.h"
#include "tools/scenario/scenario_loader.h"
#include "tools/scenario/scenario_run.h"

namespace ibfab::scenario {
namespace {

// What came of an SA request, for the timeline.
std::string outcome(const JoinResult& r) {
  if (r.status == JoinResult::kTimedOut) return "no answer";
  if (r.status == JoinResult::kNoSm) return "no SM to ask";
  return "status " + hex16(r.status);
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

std::string label(const Action& a) { return a.at.str() + " " + to_string(a.kind) + " "; }

}  // namespace

void ScenarioRun::fail(const Action& a, const std::string& problem) const {
  throw ScenarioError(s_.file + ":" + std::to_string(a.line) + ": " + problem);
}

fabric::Hca& ScenarioRun::hca(const Action& a, const std::string& node) {
  fabric::Hca* h = fabric_->find_hca(node);
  if (!h) fail(a, "'" + node + "' is " + (fabric_->find(node) ? "a switch, not a host" : "not in the topology"));
  return *h;
}

ScenarioHost& ScenarioRun::host(const Action& a, const std::string& node) {
  fabric::Hca& h = hca(a, node);
  auto& slot = hosts_[node];
  if (!slot) slot = std::make_unique<ScenarioHost>(h);
  return *slot;
}

sm::SubnetManager& ScenarioRun::current_sm() {
  for (auto& m : sms_)
    if (m->master()) return *m;
  return *sms_.front();
}

std::function<void()> ScenarioRun::bind(const Action& a) {
  switch (a.kind) {
    case Action::Kind::LinkDown:
    case Action::Kind::LinkUp:
    case Action::Kind::LinkLoss: return bind_link(a);
    case Action::Kind::NodeDown:
    case Action::Kind::NodeUp: return bind_node(a);
    case Action::Kind::Join:
    case Action::Kind::Leave: return bind_membership(a);
    case Action::Kind::Send: return bind_send(a);
    case Action::Kind::Attach:
    case Action::Kind::Detach: return bind_attachment(a);
    case Action::Kind::QpState: return bind_qp_state(a);
    case Action::Kind::CreateQp: return bind_create_qp(a);
    case Action::Kind::Connect:
    case Action::Kind::Post:
    case Action::Kind::Disconnect: return bind_connection(a);
    case Action::Kind::Subscribe: return bind_subscribe(a);
    case Action::Kind::Expect: return bind_expect(a);
    case Action::Kind::SmKill: return bind_sm_kill(a);
    case Action::Kind::Probe: return bind_probe(a);
  }
  fail(a, "unknown action");
}

std::function<void()> ScenarioRun::bind_link(const Action& a) {
  std::string problem;
  fabric::Link* l = fabric::find_link(*fabric_, a.link, problem);
  if (!l) fail(a, problem);
  fabric::Fabric* f = fabric_.get();
  if (a.kind == Action::Kind::LinkLoss) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " p=%g", a.probability);
    r_.actions.push_back(label(a) + a.link.text + buf);
    return [f, l, p = a.probability] { f->set_link_loss(*l, p); };
  }
  r_.actions.push_back(label(a) + a.link.text);
  return [f, l, up = a.kind == Action::Kind::LinkUp] { f->set_link_up(*l, up); };
}

std::function<void()> ScenarioRun::bind_node(const Action& a) {
  fabric::Node* n = fabric_->find(a.node);
  if (!n) fail(a, "no node '" + a.node + "' in the topology");
  r_.actions.push_back(label(a) + a.node);
  return [f = fabric_.get(), n, up = a.kind == Action::Kind::NodeUp] { f->set_node_up(*n, up); };
}

// Bound closures capture the action by address (the Scenario outlives the
// run) and build their strings when applied, so that an action waiting for
// its time costs its Action and an event, not copies of its text.

std::function<void()> ScenarioRun::bind_membership(const Action& a) {
  // "*" stands for every host, in node order; the hosts are made now, so
  // that a bad name fails before the run.
  if (a.node == "*") {
    for (uint32_t i = 0; i < fabric_->node_count(); ++i)
      if (!fabric_->node(i).is_switch()) host(a, fabric_->node(i).name());
  } else {
    host(a, a.node);
  }
  r_.actions.push_back(a.at.str() + " " + membership_text(a, a.node));
  return [this, act = &a] { apply_membership(*act); };
}

std::string ScenarioRun::membership_text(const Action& a, const std::string& node) {
  return node + (a.kind == Action::Kind::Join ? " join " : " leave ") + a.mcast.mgid + " (" +
         join_state_name(a.mcast.join_state) + ")";
}

void ScenarioRun::apply_membership(const Action& a) {
  std::vector<ScenarioHost*> targets;
  if (a.node == "*") {
    for (uint32_t i = 0; i < fabric_->node_count(); ++i)
      if (!fabric_->node(i).is_switch()) targets.push_back(hosts_.at(fabric_->node(i).name()).get());
  } else {
    targets.push_back(hosts_.at(a.node).get());
  }
  // Every host's answer is checked; a many-host action is reported as one
  // line (answers, statuses, latency) when its last answer is in.
  std::shared_ptr<Tally> tally = targets.size() > 1 ? std::make_shared<Tally>() : nullptr;
  const sim::Time at = sim_->now();
  for (ScenarioHost* hs : targets) {
    ++r_.sa_waiting;
    auto done = [this, act = &a, hs, tally, at, n = targets.size()](const JoinResult& res) {
      membership_answered(*act, *hs, res, tally.get(), n, at);
    };
    if (a.kind == Action::Kind::Join) hs->join(a.mcast, done);
    else hs->leave(a.mcast, done);
  }
}

void ScenarioRun::membership_answered(const Action& a, const ScenarioHost& hs, const JoinResult& res, Tally* tally,
                                      std::size_t hosts, sim::Time at) {
  --r_.sa_waiting;
  std::string line = res.sent.str() + " " + membership_text(a, hs.name()) + " -> " + outcome(res);
  if (res.status == 0 && a.kind == Action::Kind::Join) {
    line += " mlid " + hex16(res.mlid) + " mgid " + res.mgid.str();
    r_.join_latency.add(res.answered - res.sent);
  }
  if (res.answered_by_sa()) line += " in " + (res.answered - res.sent).str();
  const uint16_t want = a.mcast.expect_status.value_or(0);
  ++r_.checks;
  if (res.status != want) r_.failures.push_back(line + " (expected status " + hex16(want) + ")");
  if (!tally) {
    r_.timeline.push_back(line);
    return;
  }
  ++tally->answers;
  tally->ok += res.status == want;
  tally->latency.add(res.answered - res.sent);
  if (tally->answers < hosts) return;
  r_.timeline.push_back(at.str() + " " + membership_text(a, a.node) + ": " + std::to_string(tally->ok) + "/" +
                        std::to_string(tally->answers) + " answered " + hex16(want) + ", latency median " +
                        tally->latency.median().str() + ", max " + tally->latency.max().str());
}

std::function<void()> ScenarioRun::bind_subscribe(const Action& a) {
  host(a, a.node);
  r_.actions.push_back(a.at.str() + " " + a.node + " subscribe to trap " + std::to_string(a.trap));
  return [this, act = &a] {
    const Action& a = *act;
    ++r_.sa_waiting;
    hosts_.at(a.node)->subscribe(a.trap, [this, act, at = sim_->now()](const JoinResult& res) {
      --r_.sa_waiting;
      ++r_.checks;
      const std::string line =
          at.str() + " " + act->node + " subscribe to trap " + std::to_string(act->trap) + " -> " + outcome(res);
      r_.timeline.push_back(line);
      if (res.status != 0) r_.failures.push_back(line);
    });
  };
}

std::string ScenarioRun::expect_text(const Expectation& e) {
  std::string what = !e.group.empty() ? "group " + e.group
                     : e.trap ? e.node + " got " + std::to_string(*e.reports) + " trap " + std::to_string(*e.trap) +
                                    " reports"
                              : e.node + " received " + std::to_string(*e.received);
  if (e.exists) what += *e.exists ? " exists" : " does not exist";
  if (e.members) what += " with " + std::to_string(*e.members) + " members";
  return what;
}

std::function<void()> ScenarioRun::bind_expect(const Action& a) {
  const Expectation& e = a.expect;
  if (!e.node.empty()) host(a, e.node);
  if (!e.group.empty() && sms_.empty()) fail(a, "'expect' on a group needs an SM (sms:) to ask");
  r_.actions.push_back(label(a) + expect_text(e));
  return [this, act = &a] {
    const Expectation& e = act->expect;
    ScenarioHost* hs = e.node.empty() ? nullptr : hosts_.at(e.node).get();
    ++r_.checks;
    std::string got;
    if (hs && e.trap) {
      const uint64_t n = hs->reports(*e.trap);
      if (n != *e.reports) got = "got " + std::to_string(n);
    } else if (hs) {
      const uint64_t n = hs->received();
      if (n != *e.received) got = "received " + std::to_string(n);
    } else {
      const sm::McastGroup* g = current_sm().groups()->find(*wire::Gid::parse(e.group));
      if (e.exists && (g != nullptr) != *e.exists) got = g ? "it exists" : "it does not exist";
      else if (e.members && (!g || g->members.size() != *e.members))
        got = g ? "it has " + std::to_string(g->members.size()) + " members" : "it does not exist";
    }
    if (!got.empty()) r_.failures.push_back(sim_->now().str() + " expect " + expect_text(e) + ": " + got);
  };
}

std::function<void()> ScenarioRun::bind_sm_kill(const Action& a) {
  sm::SubnetManager* m = nullptr;
  for (std::size_t i = 0; i < s_.sms.size(); ++i)
    if (s_.sms[i].node == a.node) m = sms_[i].get();
  if (!m) fail(a, "'sm-kill': no SM runs on '" + a.node + "'");
  r_.actions.push_back(label(a) + a.node);
  return [m] { m->stop(); };
}

std::function<void()> ScenarioRun::bind_probe(const Action& a) {
  fabric::Hca* h = fabric_->find_hca(a.node);
  if (!h) fail(a, "'probe' needs a host (an HCA); '" + a.node + "' is " +
                      (fabric_->find(a.node) ? "a switch" : "not in the topology"));
  probes_.push_back(std::make_unique<Probe>(*h));
  sm::Discovery* d = &probes_.back()->discovery;
  const std::size_t slot = r_.probes.size();
  ProbeReport pr;
  pr.from = a.node;
  pr.at = a.at;
  r_.probes.push_back(pr);
  r_.actions.push_back(label(a) + a.node);
  return [this, d, h, slot] {
    d->start([this, h, slot](const sm::DiscoveryResult& res) {
      ProbeReport& p = r_.probes[slot];
      p.finished = true;
      p.took = res.finished - res.started;
      p.nodes = res.nodes.size();
      p.switches = res.switches();
      p.links = res.links.size();
      p.smps = res.smps_sent;
      p.retries = res.retries;
      p.unanswered = res.unanswered;
      std::tie(p.expected_nodes, p.expected_links) = reachable(*fabric_, *h);
      sim::Trace& tr = sim_->trace();
      if (sim::RunDigest* d = tr.digest()) {
        d->event(sim_->now(), h->index(), sim::kind_tag("prob"));
        d->fold(p.nodes);
        d->fold(p.links);
        d->fold(p.smps);
      }
      tr.emit(sim_->now(), h->name(), "probe done nodes=%zu links=%zu smps=%llu", p.nodes, p.links,
              static_cast<unsigned long long>(p.smps));
    });
  };
}

}  // namespace ibfab::scenario
