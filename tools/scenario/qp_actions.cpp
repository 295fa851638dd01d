// The actions on a host's UD QP, as a verbs user takes them: send
// (multicast to a joined group, or unicast to another host's QP), attach
// and detach (ibv_attach_mcast, ibv_detach_mcast), qp-state
// (ibv_modify_qp) and create-qp (the QP destroyed and made again). A call
// that returns an errno is a timeline line with it, not a failure of the
// run; a send that cannot be posted (no group joined, a QP not in RTS) is.
#include <cerrno>
#include <cstdio>
#include <string>

#include "fabric/wire/gid.h"
#include "tools/scenario/scenario_run.h"

namespace ibfab::scenario {
namespace {

// A verbs call's result as the timeline shows it: 0 or the errno's name.
std::string call_result(int e) {
  switch (e) {
    case 0: return "0";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    default: return "errno " + std::to_string(e);
  }
}

}  // namespace

std::string ScenarioRun::send_text(const Action& a) {
  const McastSpec& m = a.mcast;
  const std::string what = a.node + " send " + std::to_string(m.count) + " x " + std::to_string(m.size) + " B to ";
  if (m.to.empty()) return what + m.mgid;
  return what + m.to + (m.grh ? " (grh)" : "");
}

std::function<void()> ScenarioRun::bind_send(const Action& a) {
  host(a, a.node);
  if (!a.mcast.to.empty()) host(a, a.mcast.to);
  r_.actions.push_back(a.at.str() + " " + send_text(a));
  return [this, act = &a] { apply_send(*act); };
}

void ScenarioRun::apply_send(const Action& a) {
  ++r_.checks;
  const std::string line = sim_->now().str() + " " + send_text(a);
  ScenarioHost& h = *hosts_.at(a.node);
  switch (a.mcast.to.empty() ? h.send(a.mcast) : h.send_to(*hosts_.at(a.mcast.to), a.mcast)) {
    case ScenarioHost::Posted::Sent: r_.timeline.push_back(line); break;
    case ScenarioHost::Posted::Flushed: r_.timeline.push_back(line + " -> flushed (the QP is in err)"); break;
    case ScenarioHost::Posted::NotReady:
      r_.failures.push_back(line + ": the QP is in " + to_string(h.qp_state()) + ", not rts (ibv_post_send: EINVAL)");
      break;
    case ScenarioHost::Posted::NotJoined: r_.failures.push_back(line + ": the host has not joined the group"); break;
  }
}

std::function<void()> ScenarioRun::bind_attachment(const Action& a) {
  host(a, a.node);
  r_.actions.push_back(a.at.str() + " " + a.node + " " + to_string(a.kind) + " " + a.mcast.mgid);
  return [this, act = &a] {
    const Action& a = *act;
    ScenarioHost& h = *hosts_.at(a.node);
    const wire::Gid mgid = *wire::Gid::parse(a.mcast.mgid);  // the loader checked it
    const uint16_t mlid = h.mlid_of(mgid);
    const int e = a.kind == Action::Kind::Attach ? h.attach(mgid) : h.detach(mgid);
    r_.timeline.push_back(sim_->now().str() + " " + a.node + " " + to_string(a.kind) + " " + a.mcast.mgid + " mlid " +
                          hex16(mlid) + " -> " + call_result(e));
  };
}

std::function<void()> ScenarioRun::bind_qp_state(const Action& a) {
  host(a, a.node);
  r_.actions.push_back(a.at.str() + " " + a.node + " qp-state " + to_string(a.qp_state));
  return [this, act = &a] {
    const Action& a = *act;
    ScenarioHost& h = *hosts_.at(a.node);
    const QpStateName from = h.qp_state();
    const int e = h.set_qp_state(a.qp_state);
    std::string line =
        sim_->now().str() + " " + a.node + " qp-state " + to_string(a.qp_state) + " -> " + call_result(e);
    if (e != 0) line += std::string(" (the QP is in ") + to_string(from) + ")";
    r_.timeline.push_back(line);
  };
}

std::function<void()> ScenarioRun::bind_create_qp(const Action& a) {
  host(a, a.node);
  const char* flag = a.block_self_mcast_lb ? " block-self-mcast-lb" : "";
  r_.actions.push_back(a.at.str() + " " + a.node + " create-qp" + flag);
  return [this, act = &a, flag] {
    ScenarioHost& h = *hosts_.at(act->node);
    h.recreate_qp(act->block_self_mcast_lb);
    r_.timeline.push_back(sim_->now().str() + " " + act->node + " create-qp" + flag + " -> qpn " + qpn_text(h.qpn()));
  };
}

}  // namespace ibfab::scenario
