// The actions on reliable connections between hosts: connect (the two
// QPs made and connected at the action's time, without the CM's MADs),
// post (work requests on one end, reported once all their completions
// are in) and disconnect (both QPs to ERR). A connection or post that does
// not work as it should fails the run; a post flushed because the
// scenario closed its connection is a timeline line.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "tools/scenario/scenario_run.h"

namespace ibfab::scenario {
namespace {

std::pair<std::string, std::string> pair_of(const Action& a) {
  const auto [first, second] = std::minmax(a.node, a.conn.to);
  return {first, second};
}

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%x", v);
  return b;
}

// The receives a post's messages make, as the timeline shows them.
std::string receives_text(const ConnSpec& s, uint32_t receives) {
  std::string t = std::to_string(receives) + " receives (";
  if (s.op == ConnSpec::Op::Send) return t + "recv)";
  t += s.op == ConnSpec::Op::WriteImm ? "recv-rdma-with-imm, imm " : "recv, imm ";
  t += hex(s.imm);
  if (receives > 1) t += ".." + hex(s.imm + receives - 1) + " in order";
  return t + ")";
}

}  // namespace

std::string ScenarioRun::post_text(const Action& a) {
  const ConnSpec& s = a.conn;
  std::string t = a.node + " post " + std::to_string(s.count) + " x " + std::to_string(s.size) + " B " +
                  to_string(s.op) + " to " + s.to;
  if (s.op == ConnSpec::Op::SendImm || s.op == ConnSpec::Op::WriteImm) t += " (imm " + hex(s.imm) + ")";
  return t;
}

std::function<void()> ScenarioRun::bind_connection(const Action& a) {
  hca(a, a.node);
  hca(a, a.conn.to);
  if (a.kind == Action::Kind::Connect) return bind_connect(a);
  if (a.kind == Action::Kind::Post) {
    r_.actions.push_back(a.at.str() + " " + post_text(a));
    return [this, act = &a] {
      const Action& a = *act;
      ++r_.checks;
      ScenarioConnection* c = connection_of_.at(pair_of(a));
      if (!c) {
        r_.failures.push_back(sim_->now().str() + " " + post_text(a) + ": no connection (its connect failed)");
        return;
      }
      const int end = c->hca(0).name() == a.node ? 0 : 1;
      c->post(end, a.conn, [this, act](const PostOutcome& out) { post_done(*act, out); });
    };
  }
  r_.actions.push_back(a.at.str() + " " + a.node + " disconnect from " + a.conn.to);
  return [this, act = &a] {
    const std::string text = act->node + " disconnect from " + act->conn.to;
    ScenarioConnection* c = connection_of_.at(pair_of(*act));
    if (!c) {
      r_.failures.push_back(sim_->now().str() + " " + text + ": no connection (its connect failed)");
      return;
    }
    c->disconnect();
    r_.timeline.push_back(sim_->now().str() + " " + text + " -> both QPs in err");
  };
}

std::function<void()> ScenarioRun::bind_connect(const Action& a) {
  if (connection_sizes_.empty()) size_connections();
  r_.actions.push_back(a.at.str() + " " + a.node + " connect to " + a.conn.to +
                       (a.conn.listen ? "" : " (not listening)"));
  return [this, act = &a] {
    const Action& a = *act;
    ++r_.checks;
    fabric::Hca& from = *fabric_->find_hca(a.node);
    fabric::Hca& to = *fabric_->find_hca(a.conn.to);
    const std::string line = sim_->now().str() + " " + a.node + " connect to " + a.conn.to;
    std::string why = ScenarioConnection::not_ready(from);
    if (why.empty()) why = ScenarioConnection::not_ready(to);
    if (why.empty() && !a.conn.listen) {
      // The REQ finds no listener: REJ "invalid service ID" (8), and the
      // pair keeps whatever connection it had.
      observe_host(from, sim::kind_tag("rrej"), 8, 0, 0);
      r_.timeline.push_back(line + " -> rejected (nobody listens: invalid service ID)");
      return;
    }
    ScenarioConnection*& current = connection_of_[pair_of(a)];
    if (!why.empty()) {
      current = nullptr;
      observe_host(from, sim::kind_tag("rcon"), 0, 0, 0);
      r_.failures.push_back(line + ": " + why);
      return;
    }
    std::array<EndSizes, 2> sizes = connection_sizes_.at(pair_of(a));
    if (a.node != pair_of(a).first) std::swap(sizes[0], sizes[1]);
    connections_.push_back(
        std::make_unique<ScenarioConnection>(from, to, sizes, static_cast<uint32_t>(connections_.size())));
    current = connections_.back().get();
    r_.timeline.push_back(line + " -> qpn " + qpn_text(current->qpn(0)) + " to " + qpn_text(current->qpn(1)) +
                          ", path MTU " + std::to_string(fabric::mtu_bytes(current->path_mtu())));
  };
}

void ScenarioRun::size_connections() {
  // From every post between a pair in the scenario, whichever connection
  // of the pair it lands on: buffers a little larger than needed, never
  // too small. One pass over the actions.
  for (const Action& p : s_.actions) {
    if (p.kind == Action::Kind::Connect) connection_sizes_[pair_of(p)];
    if (p.kind != Action::Kind::Post) continue;
    std::array<EndSizes, 2>& sizes = connection_sizes_[pair_of(p)];
    const bool first = p.node == pair_of(p).first;
    EndSizes& poster = sizes[first ? 0 : 1];
    EndSizes& peer = sizes[first ? 1 : 0];
    const uint32_t n = p.conn.size;
    poster.out = std::max(poster.out, n);
    switch (p.conn.op) {
      case ConnSpec::Op::Send:
      case ConnSpec::Op::SendImm: peer.recv = std::max(peer.recv, n); break;
      case ConnSpec::Op::Write:
      case ConnSpec::Op::WriteImm: peer.write_in = std::max(peer.write_in, n); break;
      case ConnSpec::Op::Read: peer.read_in = std::max(peer.read_in, n); break;
    }
  }
}

void ScenarioRun::post_done(const Action& a, const PostOutcome& out) {
  const ConnSpec& s = a.conn;
  const std::string line = out.posted.str() + " " + post_text(a);
  const bool receives = s.op != ConnSpec::Op::Write && s.op != ConnSpec::Op::Read;
  if (!out.finished) {
    std::string got = std::to_string(out.completions) + " of " + std::to_string(out.count) + " completions";
    if (receives) got += " and " + std::to_string(out.receives) + " receives";
    r_.failures.push_back(line + ": " + got + " came by the end of the run" +
                          (out.problem.empty() ? "" : "; " + out.problem));
    return;
  }
  if (!out.problem.empty()) {
    r_.failures.push_back(line + ": " + out.problem);
    return;
  }
  if (out.flushed == out.count) {
    r_.timeline.push_back(line + " -> flushed (the connection is closed)");
    return;
  }
  std::string got = std::to_string(out.success) + " completions success in " + (out.last - out.posted).str();
  if (out.flushed) got += ", " + std::to_string(out.flushed) + " flushed (the connection is closed)";
  if (receives) got += ", " + receives_text(s, out.receives);
  r_.timeline.push_back(line + " -> " + got + ", data intact");
}

void ScenarioRun::end_connections() {
  for (const auto& c : connections_) c->end_of_run();
}

}  // namespace ibfab::scenario
