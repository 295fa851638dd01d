#include "tools/scenario/scenario_loader.h"

#include <yaml-cpp/yaml.h>

#include "fabric/topology/text_file.h"
#include "fabric/wire/gid.h"
#include "sim/scheduler.h"
#include "sm/mcast/mcast_policies.h"
#include "sm/partitions/partition_reader.h"
#include "sm/routing/routing_engine.h"
#include "tools/scenario/action_chunks.h"
#include "tools/scenario/yaml_budget.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace ibfab::scenario {
namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& problem) const {
    const int line = at.IsDefined() && at.Mark().line >= 0 ? at.Mark().line + 1 : 0;
    throw ScenarioError(file_ + ":" + std::to_string(line) + ": " + problem);
  }

  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, "'" + key + "' must be a single value");
    return n.Scalar();
  }

  sim::Time time(const YAML::Node& n, const std::string& key) const {
    sim::Time t;
    const std::string s = scalar(n, key);
    if (!sim::parse_time(s, t)) fail(n, "'" + key + "': bad time '" + s + "' (examples: 0, 250ns, 10us, 1.5ms, 2s)");
    return t;
  }

  uint64_t u64(const YAML::Node& n, const std::string& key) const {
    const std::string s = scalar(n, key);
    uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
      fail(n, "'" + key + "': expected an integer from 0 to 2^64-1, got '" + s + "'");
    return v;
  }

  double probability(const YAML::Node& n) const {
    const std::string s = scalar(n, "probability");
    double p = -1;
    if (!parse_probability(s, p)) fail(n, "'probability' must be a number in [0, 1], got '" + s + "'");
    return p;
  }

  // The key of a map entry: a single value, not one this map already has
  // (`seen`: key -> line of its first use).
  std::string key(const YAML::Node& k, std::map<std::string, int>& seen) const {
    if (!k.IsScalar()) fail(k, "a key must be a single word, not a list or a map");
    const auto [first, fresh] = seen.emplace(k.Scalar(), k.Mark().line + 1);
    if (!fresh) fail(k, "duplicate key '" + k.Scalar() + "' (first at line " + std::to_string(first->second) + ")");
    return k.Scalar();
  }

  // "true" or "false", else fails: "'KEY' is true or false".
  bool boolean(const YAML::Node& n, const std::string& key) const {
    const std::string b = scalar(n, key);
    if (b != "true" && b != "false") fail(n, "'" + key + "' is true or false");
    return b == "true";
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

uint8_t join_state(const Reader& r, const YAML::Node& v) {
  const std::string s = r.scalar(v, "join-state");
  if (s == "full") return 0x1;
  if (s == "non-member") return 0x2;
  if (s == "send-only-non-member") return 0x4;
  if (s == "send-only-full") return 0x8;
  const bool hex = s.size() > 2 && s[0] == '0' && s[1] == 'x';
  const char* end = s.data() + s.size();
  uint64_t n = 0;
  if (const auto [stop, ec] = std::from_chars(s.data() + (hex ? 2 : 0), end, n, hex ? 16 : 10);
      ec != std::errc() || stop != end)
    n = 0;
  if (n == 0 || n > 15)
    r.fail(v, "'join-state': full, non-member, send-only-non-member, send-only-full, or bits 0x1..0xf; got '" + s + "'");
  return static_cast<uint8_t>(n);
}

uint64_t number(const Reader& r, const YAML::Node& v, const std::string& key, uint64_t max) {
  const std::string s = r.scalar(v, key);
  uint64_t n = 0;
  try {
    std::size_t used = 0;
    // stoull would take a sign (-1 is 2^64-1) or leading blanks: a digit first
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) throw std::invalid_argument(s);
    n = std::stoull(s, &used, 0);
    if (used != s.size()) throw std::invalid_argument(s);
  } catch (const std::out_of_range&) {
    r.fail(v, "'" + key + "': at most " + std::to_string(max) + ", got " + s);
  } catch (const std::exception&) {
    r.fail(v, "'" + key + "': expected a non-negative number, got '" + s + "'");
  }
  if (n > max) r.fail(v, "'" + key + "': at most " + std::to_string(max) + ", got " + s);
  return n;
}

// {node: H2, mgid: "ff12:601b::1", join-state: full, qkey:, pkey:, expect-status:, count:, size:},
// a unicast send {node: H1, to: H2, grh: true, count:, size:}, or
// attach/detach {node: H2, mgid: ...}.
void parse_mcast(const Reader& r, const YAML::Node& v, const std::string& what, Action& a) {
  if (!v.IsMap()) r.fail(v, "'" + what + "' is a map such as {node: H2, mgid: \"ff12:601b::1\"}");
  const bool membership = what == "join" || what == "leave";
  bool have_node = false, have_mgid = false, have_grh = false;
  std::map<std::string, int> seen;
  for (const auto& kv : v) {
    const std::string key = r.key(kv.first, seen);
    const YAML::Node& x = kv.second;
    if (key == "node") {
      a.node = r.scalar(x, key);
      have_node = true;
    } else if (key == "mgid") {
      a.mcast.mgid = r.scalar(x, key);
      have_mgid = true;
      if (a.mcast.mgid != "0" && !wire::Gid::parse(a.mcast.mgid))
        r.fail(x, "'mgid': not a GID: '" + a.mcast.mgid + "' (example: ff12:601b::1, or 0 for one the SA assigns)");
    } else if (key == "to" && what == "send") {
      a.mcast.to = r.scalar(x, key);
    } else if (key == "grh" && what == "send") {
      a.mcast.grh = r.boolean(x, key);
      have_grh = true;
    } else if (key == "join-state" && membership) {
      a.mcast.join_state = join_state(r, x);
    } else if (key == "qkey" && what == "join") {
      a.mcast.qkey = static_cast<uint32_t>(number(r, x, key, 0xFFFFFFFF));
    } else if (key == "pkey" && what == "join") {
      a.mcast.pkey = static_cast<uint16_t>(number(r, x, key, 0xFFFF));
    } else if (key == "mask" && membership) {
      a.mcast.mask = number(r, x, key, UINT64_MAX);
    } else if (key == "expect-status" && membership) {
      a.mcast.expect_status = static_cast<uint16_t>(number(r, x, key, 0xFFFF));
    } else if (key == "count" && what == "send") {
      a.mcast.count = static_cast<uint32_t>(number(r, x, key, 1'000'000));
    } else if (key == "size" && what == "send") {
      a.mcast.size = static_cast<uint32_t>(number(r, x, key, 4096));
    } else {
      r.fail(kv.first, "unknown key '" + key + "' in '" + what + "'");
    }
  }
  if (!have_node) r.fail(v, "'" + what + "' needs a 'node' (the host)");
  if (what == "send") {
    if (have_mgid == !a.mcast.to.empty())
      r.fail(v, "'send' names a group ('mgid') or a host ('to', a unicast send), one of the two");
    if (have_grh && have_mgid) r.fail(v, "'grh' belongs to a unicast send ('to'): multicast always has a GRH");
    if (a.mcast.to == a.node) r.fail(v, "'send': '" + a.node + "' sends to itself ('to')");
  } else if (!have_mgid) {
    r.fail(v, "'" + what + "' needs an 'mgid'");
  }
  if ((what == "attach" || what == "detach") && a.mcast.mgid == "0")
    r.fail(v, "'" + what + "' names a group by its MGID (not 0)");
}

// {node: H2, state: rts}
void parse_qp_state(const Reader& r, const YAML::Node& v, Action& a) {
  if (!v.IsMap() || !v["node"] || !v["state"] || v.size() != 2)
    r.fail(v, "'qp-state' is a map {node: H2, state: reset|init|rtr|rts|err}");
  a.node = r.scalar(v["node"], "node");
  const std::string state = r.scalar(v["state"], "state");
  for (const QpStateName s : {QpStateName::Reset, QpStateName::Init, QpStateName::Rtr, QpStateName::Rts,
                              QpStateName::Err})
    if (state == to_string(s)) {
      a.qp_state = s;
      return;
    }
  r.fail(v["state"], "'state': reset, init, rtr, rts or err; got '" + state + "'");
}

// {node: H2, block-self-mcast-lb: true}
void parse_create_qp(const Reader& r, const YAML::Node& v, Action& a) {
  if (!v.IsMap() || !v["node"]) r.fail(v, "'create-qp' is a map {node: H2, block-self-mcast-lb: true}");
  std::map<std::string, int> seen;
  for (const auto& kv : v) {
    const std::string key = r.key(kv.first, seen);
    if (key == "node") {
      a.node = r.scalar(kv.second, key);
    } else if (key == "block-self-mcast-lb") {
      a.block_self_mcast_lb = r.boolean(kv.second, key);
    } else {
      r.fail(kv.first, "unknown key '" + key + "' in 'create-qp' (known: node, block-self-mcast-lb)");
    }
  }
}

// connect {node: H1, to: H2, listen: false}, disconnect {node: H1, to: H2}, or
// post {node: H1, to: H2, op: send|send-imm|write|write-imm|read, count:, size:, imm:}.
void parse_connection(const Reader& r, const YAML::Node& v, const std::string& what, Action& a) {
  const bool post = what == "post";
  if (!v.IsMap())
    r.fail(v, "'" + what + "' is a map such as {node: H1, to: H2" + std::string(post ? ", op: write" : "") + "}");
  bool have_imm = false;
  std::map<std::string, int> seen;
  for (const auto& kv : v) {
    const std::string key = r.key(kv.first, seen);
    const YAML::Node& x = kv.second;
    if (key == "node") {
      a.node = r.scalar(x, key);
    } else if (key == "to") {
      a.conn.to = r.scalar(x, key);
    } else if (key == "op" && post) {
      const std::string op = r.scalar(x, key);
      bool known = false;
      for (const ConnSpec::Op o : {ConnSpec::Op::Send, ConnSpec::Op::SendImm, ConnSpec::Op::Write,
                                   ConnSpec::Op::WriteImm, ConnSpec::Op::Read})
        if (op == to_string(o)) {
          a.conn.op = o;
          known = true;
        }
      if (!known) r.fail(x, "'op': send, send-imm, write, write-imm or read; got '" + op + "'");
    } else if (key == "count" && post) {
      a.conn.count = static_cast<uint32_t>(number(r, x, key, 1'000'000));
      if (a.conn.count == 0) r.fail(x, "'count': at least 1");
    } else if (key == "size" && post) {
      a.conn.size = static_cast<uint32_t>(number(r, x, key, kMaxPostSize));
    } else if (key == "imm" && post) {
      a.conn.imm = static_cast<uint32_t>(number(r, x, key, 0xFFFFFFFF));
      have_imm = true;
    } else if (key == "listen" && what == "connect") {
      a.conn.listen = r.boolean(x, key);
    } else {
      r.fail(kv.first, "unknown key '" + key + "' in '" + what + "' (known: node, to" +
                           (post ? ", op, count, size, imm" : what == "connect" ? ", listen" : "") + ")");
    }
  }
  if (a.node.empty() || a.conn.to.empty()) r.fail(v, "'" + what + "' needs a 'node' and a 'to' (the two hosts)");
  if (a.node == a.conn.to) r.fail(v, "'" + what + "': '" + a.node + "' is both ends ('to')");
  if (have_imm && a.conn.op != ConnSpec::Op::SendImm && a.conn.op != ConnSpec::Op::WriteImm)
    r.fail(v, "'imm' belongs to op send-imm or write-imm");
}

// Connections in time order: a connect between two hosts not connected now
// (one to a host that does not listen connects nothing), a post or a
// disconnect on a connection made before (a post after the disconnect is
// flushed, as on a QP in ERR), connect and disconnect once each.
void check_connections(const std::string& path, const std::vector<Action>& actions) {
  std::map<std::pair<std::string, std::string>, bool> pairs;  // (lower, higher name) -> connected now
  for (const Action& a : actions) {
    if (a.kind != Action::Kind::Connect && a.kind != Action::Kind::Post && a.kind != Action::Kind::Disconnect)
      continue;
    const auto where = path + ":" + std::to_string(a.line) + ": '" + to_string(a.kind) + "' ";
    if (a.kind != Action::Kind::Post && a.every.ps())
      throw ScenarioError(where + "happens once: no 'every'");
    const auto key = std::minmax(a.node, a.conn.to);
    const auto it = pairs.find({key.first, key.second});
    const std::string between = a.node + " and " + a.conn.to;
    if (a.kind == Action::Kind::Connect) {
      if (it != pairs.end() && it->second) throw ScenarioError(where + between + " are connected already");
      if (a.conn.listen) pairs[{key.first, key.second}] = true;
    } else if (it == pairs.end()) {
      throw ScenarioError(where + "needs a connection between " + between + " ('connect' before it)");
    } else if (a.kind == Action::Kind::Disconnect) {
      if (!it->second) throw ScenarioError(where + between + " are disconnected already");
      it->second = false;
    }
  }
}

// {group: MGID, exists: true, members: 3} or {node: H3, received: 10}
void parse_expect(const Reader& r, const YAML::Node& v, Action& a) {
  if (!v.IsMap()) r.fail(v, "'expect' is a map such as {group: \"ff12:601b::1\", members: 2}");
  std::map<std::string, int> seen;
  for (const auto& kv : v) {
    const std::string key = r.key(kv.first, seen);
    const YAML::Node& x = kv.second;
    if (key == "group") {
      a.expect.group = r.scalar(x, key);
      if (!wire::Gid::parse(a.expect.group)) r.fail(x, "'group': not a GID: '" + a.expect.group + "'");
    } else if (key == "exists") {
      a.expect.exists = r.boolean(x, key);
    } else if (key == "members") {
      a.expect.members = static_cast<uint32_t>(number(r, x, key, 1'000'000));
    } else if (key == "node") {
      a.expect.node = r.scalar(x, key);
    } else if (key == "received") {
      a.expect.received = number(r, x, key, UINT64_MAX);
    } else if (key == "trap") {
      a.expect.trap = static_cast<uint16_t>(number(r, x, key, 0xFFFF));
    } else if (key == "reports") {
      a.expect.reports = number(r, x, key, UINT64_MAX);
    } else {
      r.fail(kv.first, "unknown key '" + key + "' in 'expect' (known: group, exists, members, node, received, trap, reports)");
    }
  }
  const bool group = !a.expect.group.empty(), node = !a.expect.node.empty();
  const bool host_check = a.expect.received.has_value() || (a.expect.trap && a.expect.reports);
  if (group == node || (group && !a.expect.exists && !a.expect.members) || (node && !host_check) ||
      a.expect.trap.has_value() != a.expect.reports.has_value())
    r.fail(v, "'expect' checks a group ({group, exists and/or members}) or a host ({node, received} or "
              "{node, trap, reports})");
}

Action parse_action(const Reader& r, const YAML::Node& item) {
  if (!item.IsMap()) r.fail(item, "an action is a map such as {at: 1ms, link-down: \"S1[3]\"}");
  Action a{};
  a.line = item.Mark().line + 1;
  bool have_at = false, have_kind = false, have_prob = false;
  YAML::Mark prob_mark;
  std::map<std::string, int> seen;
  for (const auto& kv : item) {
    const std::string key = r.key(kv.first, seen);
    const YAML::Node& v = kv.second;
    auto kind = [&](Action::Kind k) {
      if (have_kind) r.fail(kv.first, "one action per list item ('" + key + "' is a second one)");
      have_kind = true;
      a.kind = k;
    };
    if (key == "at") {
      a.at = r.time(v, "at");
      have_at = true;
    } else if (key == "link-down" || key == "link-up" || key == "link-loss") {
      kind(key == "link-down" ? Action::Kind::LinkDown
                              : key == "link-up" ? Action::Kind::LinkUp : Action::Kind::LinkLoss);
      if (!parse_link_ref(r.scalar(v, key), a.link))
        r.fail(v, "'" + key + "': expected a link as NODE[PORT] or NODE[PORT]-NODE[PORT], got '" + v.Scalar() + "'");
    } else if (key == "node-down" || key == "node-up" || key == "probe") {
      kind(key == "node-down" ? Action::Kind::NodeDown
                              : key == "node-up" ? Action::Kind::NodeUp : Action::Kind::Probe);
      a.node = r.scalar(v, key);
    } else if (key == "sm-kill") {
      kind(Action::Kind::SmKill);
      a.node = r.scalar(v, key);
    } else if (key == "join" || key == "leave" || key == "send" || key == "attach" || key == "detach") {
      kind(key == "join"     ? Action::Kind::Join
           : key == "leave"  ? Action::Kind::Leave
           : key == "send"   ? Action::Kind::Send
           : key == "attach" ? Action::Kind::Attach
                             : Action::Kind::Detach);
      parse_mcast(r, v, key, a);
    } else if (key == "qp-state") {
      kind(Action::Kind::QpState);
      parse_qp_state(r, v, a);
    } else if (key == "create-qp") {
      kind(Action::Kind::CreateQp);
      parse_create_qp(r, v, a);
    } else if (key == "connect" || key == "post" || key == "disconnect") {
      kind(key == "connect" ? Action::Kind::Connect : key == "post" ? Action::Kind::Post : Action::Kind::Disconnect);
      parse_connection(r, v, key, a);
    } else if (key == "expect") {
      kind(Action::Kind::Expect);
      parse_expect(r, v, a);
    } else if (key == "subscribe") {
      kind(Action::Kind::Subscribe);
      if (!v.IsMap() || !v["node"] || !v["trap"] || v.size() != 2)
        r.fail(v, "'subscribe' is a map {node: H3, trap: 66}");
      a.node = r.scalar(v["node"], "node");
      a.trap = static_cast<uint16_t>(number(r, v["trap"], "trap", 0xFFFF));
    } else if (key == "every" || key == "until") {
      (key == "every" ? a.every : a.until) = r.time(v, key);
    } else if (key == "probability") {
      have_prob = true;
      prob_mark = v.Mark();
      a.probability = r.probability(v);
    } else {
      r.fail(kv.first, "unknown action key '" + key +
                           "' (known: at, every, until, link-down, link-up, link-loss, probability, node-down, "
                           "node-up, probe, join, leave, send, attach, detach, qp-state, create-qp, connect, post, "
                           "disconnect, expect, sm-kill, subscribe)");
    }
  }
  if (!have_kind)
    r.fail(item, "the action says when but not what (link-down, link-up, link-loss, node-down, node-up, probe, "
                 "join, leave, send, attach, detach, qp-state, create-qp, connect, post, disconnect, expect, "
                 "sm-kill, subscribe)");
  if (!have_at) r.fail(item, "the action has no 'at' time");
  if ((a.every > sim::Time::zero()) != (a.until > sim::Time::zero()) || (a.every.ps() && a.until < a.at))
    r.fail(item, "a repeated action has both 'every' (above 0) and 'until' (not before 'at')");
  if (a.kind == Action::Kind::LinkLoss && !have_prob) r.fail(item, "'link-loss' needs a 'probability'");
  if (a.kind != Action::Kind::LinkLoss && have_prob)
    throw ScenarioError(r.file() + ":" + std::to_string(prob_mark.line + 1) + ": 'probability' belongs to 'link-loss' only");
  return a;
}

SmSpec parse_sm(const Reader& r, const YAML::Node& item) {
  if (!item.IsMap()) r.fail(item, "an SM is a map such as {node: H1, routing: minhop}");
  SmSpec sm;
  sm.line = item.Mark().line + 1;
  bool have_node = false;
  std::map<std::string, int> seen;
  for (const auto& kv : item) {
    const std::string key = r.key(kv.first, seen);
    const YAML::Node& v = kv.second;
    if (key == "node") {
      sm.node = r.scalar(v, key);
      have_node = true;
    } else if (key == "port") {
      const uint64_t p = r.u64(v, key);
      if (p < 1 || p > 2) r.fail(v, "'port' of an SM is an HCA port: 1 or 2");
      sm.port = static_cast<uint8_t>(p);
    } else if (key == "routing") {
      sm.routing = r.scalar(v, key);
      if (!sm::make_routing_engine(sm.routing)) {
        std::string known;
        for (auto n : sm::routing_engine_names()) known += (known.empty() ? "" : ", ") + std::string(n);
        r.fail(v, "'routing': unknown engine '" + sm.routing + "' (known: " + known + ")");
      }
    } else if (key == "mcast-root" || key == "mlid-allocator" || key == "admission") {
      std::string& field = key == "mcast-root" ? sm.mcast_root : key == "mlid-allocator" ? sm.mlid_allocator : sm.admission;
      field = r.scalar(v, key);
      try {
        sm::make_mcast_policies(sm.mcast_root, "shortest-path", sm.mlid_allocator, sm.admission);
      } catch (const std::invalid_argument& e) {
        r.fail(v, "'" + key + "': " + e.what());
      }
    } else if (key == "priority") {
      const uint64_t p = r.u64(v, key);
      if (p > 15) r.fail(v, "'priority' is 0..15");
      sm.priority = static_cast<uint8_t>(p);
    } else if (key == "mcast-batch") {
      sm.mcast_batch = r.time(v, key);
    } else if (key == "at") {
      sm.at = r.time(v, key);
    } else if (key == "partitions") {
      const std::string text = r.scalar(v, key);
      try {
        if (text.find(';') != std::string::npos) {
          sm.partitions = sm::partitions::read_partitions(text, "partitions");
        } else {
          const std::filesystem::path p(text);
          sm.partitions = sm::partitions::load_partitions(
              p.is_relative() ? (std::filesystem::path(r.file()).parent_path() / p).lexically_normal().string() : text);
        }
      } catch (const sm::partitions::PartitionError& e) {
        r.fail(v, e.what());  // "SCENARIO:LINE: CONF:LINE: problem"
      }
    } else {
      r.fail(kv.first, "unknown SM key '" + key +
                           "' (known: node, port, routing, mcast-root, mlid-allocator, admission, mcast-batch, "
                           "priority, partitions, at)");
    }
  }
  if (!have_node) r.fail(item, "the SM has no 'node' (the host it runs on)");
  return sm;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out.push_back(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    }
  }
  return out;
}

bool parse_probability(const std::string& text, double& out) {
  std::istringstream in(text);
  double p = -1;
  in >> p;
  if (!in || !in.eof() || p < 0 || p > 1) return false;
  out = p;
  return true;
}

ScenarioError::ScenarioError(const std::string& message) : std::runtime_error(printable(message)) {}

const char* to_string(Action::Kind k) {
  switch (k) {
    case Action::Kind::LinkDown: return "link-down";
    case Action::Kind::LinkUp: return "link-up";
    case Action::Kind::NodeDown: return "node-down";
    case Action::Kind::NodeUp: return "node-up";
    case Action::Kind::LinkLoss: return "link-loss";
    case Action::Kind::Probe: return "probe";
    case Action::Kind::Join: return "join";
    case Action::Kind::Leave: return "leave";
    case Action::Kind::Send: return "send";
    case Action::Kind::Expect: return "expect";
    case Action::Kind::Subscribe: return "subscribe";
    case Action::Kind::SmKill: return "sm-kill";
    case Action::Kind::Attach: return "attach";
    case Action::Kind::Detach: return "detach";
    case Action::Kind::QpState: return "qp-state";
    case Action::Kind::CreateQp: return "create-qp";
    case Action::Kind::Connect: return "connect";
    case Action::Kind::Post: return "post";
    case Action::Kind::Disconnect: return "disconnect";
  }
  return "?";
}

const char* to_string(ConnSpec::Op op) {
  switch (op) {
    case ConnSpec::Op::Send: return "send";
    case ConnSpec::Op::SendImm: return "send-imm";
    case ConnSpec::Op::Write: return "write";
    case ConnSpec::Op::WriteImm: return "write-imm";
    case ConnSpec::Op::Read: return "read";
  }
  return "?";
}

const char* to_string(QpStateName s) {
  switch (s) {
    case QpStateName::Reset: return "reset";
    case QpStateName::Init: return "init";
    case QpStateName::Rtr: return "rtr";
    case QpStateName::Rts: return "rts";
    case QpStateName::Err: return "err";
  }
  return "?";
}

namespace {

// The YAML nodes one load may hold (docs/SCENARIOS.md, "Long scenarios"):
// about 470 MB of yaml-cpp's tree at most. Every action is at least one
// node, so a file that must be read whole (anchors) holds fewer actions;
// one read a chunk at a time holds as many as its 16 MiB can spell.
constexpr std::size_t kMaxYamlNodes = 1'000'000;

Scenario parse_yaml(const std::string& text, const std::string& path) {
  const Reader r(path);
  const auto load = [&path](const std::string& yaml) {
    try {
      BoundedYaml loaded = load_within(yaml, kMaxYamlNodes);
      if (loaded.over)
        throw ScenarioError(path + ":" + std::to_string(loaded.over->line + 1) + ": more than " +
                            std::to_string(kMaxYamlNodes) +
                            " YAML nodes to hold at once, the limit (write the actions without anchors and "
                            "aliases, which are read a few hundred at a time, or repeat one with every/until)");
      return loaded.root;
    } catch (const YAML::ParserException& e) {
      throw ScenarioError(path + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
    }
  };

  const ActionChunks chunks = ActionChunks::split(text);  // actions a chunk at a time: bounded YAML trees
  const YAML::Node root = load(chunks.rest());
  if (!root.IsMap()) throw ScenarioError(path + ":1: a scenario is a YAML map (topology:, actions:, ...)");
  Scenario s;
  s.file = path;
  s.name = std::filesystem::path(path).stem().string();
  bool have_topology = false;
  std::map<std::string, int> seen;
  for (const auto& kv : root) {
    const std::string key = r.key(kv.first, seen);
    const YAML::Node& v = kv.second;
    if (key == "name") {
      s.name = r.scalar(v, key);
    } else if (key == "description") {
      s.description = r.scalar(v, key);
    } else if (key == "topology") {
      s.topology = r.scalar(v, key);
      have_topology = true;
      // A relative net-file path is relative to the scenario file.
      std::error_code no_such_file;  // a name too long for a file, say: not one
      const bool generator = s.topology.find(':') != std::string::npos &&
                             std::isalpha(static_cast<unsigned char>(s.topology[0])) &&
                             !std::filesystem::exists(s.topology, no_such_file);
      if (!generator && std::filesystem::path(s.topology).is_relative())
        s.topology = (std::filesystem::path(path).parent_path() / s.topology).lexically_normal().string();
    } else if (key == "seed") {
      s.seed = r.u64(v, key);
    } else if (key == "scheduler") {
      s.scheduler = r.scalar(v, key);
      if (!sim::make_scheduler(s.scheduler))
        r.fail(v, "'scheduler': unknown '" + s.scheduler + "' (known: heap, heap4, heap8, ladder)");
    } else if (key == "duration") {
      s.duration = r.time(v, key);
    } else if (key == "fingerprint") {
      const std::string fp = r.scalar(v, key);
      if (fp.size() != 16 || !std::all_of(fp.begin(), fp.end(), ::isxdigit))
        r.fail(v, "'fingerprint' must be 16 hex digits (write it with: ibfab run --update)");
      s.fingerprint = fp;
      s.fingerprint_line = v.Mark().line + 1;
    } else if (key == "sms") {
      if (!v.IsSequence()) r.fail(v, "'sms' must be a list such as [{node: H1, routing: minhop}]");
      for (const auto& item : v) s.sms.push_back(parse_sm(r, item));
    } else if (key == "actions") {
      if (!v.IsSequence()) r.fail(v, "'actions' must be a list");
      s.actions.reserve(v.size() + chunks.items());
      for (const auto& item : v) s.actions.push_back(parse_action(r, item));
      for (std::size_t c = 0; c < chunks.chunks(); ++c)
        for (const auto& item : load(chunks.chunk(c))) s.actions.push_back(parse_action(r, item));
    } else {
      r.fail(kv.first, "unknown key '" + key +
                           "' (known: name, description, topology, seed, scheduler, duration, sms, actions, fingerprint)");
    }
  }
  if (!have_topology) throw ScenarioError(path + ":1: the scenario has no 'topology'");
  for (const Action& a : s.actions)
    if (a.at > s.duration)
      throw ScenarioError(path + ":" + std::to_string(a.line) + ": action at " + a.at.str() +
                          " is after the end of the run (duration " + s.duration.str() + ")");
  sort_by_time(s.actions);
  check_connections(path, s.actions);
  return s;
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& path) {
  try {
    return parse_yaml(text, path);
  } catch (const YAML::Exception& e) {  // whatever yaml-cpp still throws: with the file and line, as ours
    throw ScenarioError(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

Scenario load_scenario(const std::string& path) {
  std::string text;
  try {
    text = topo::read_text_file(path, kMaxScenarioBytes, "scenario files");
  } catch (const topo::TextFileError& e) {
    throw ScenarioError(e.what());
  }
  return parse_scenario(text, path);
}

void write_fingerprint(const std::string& path, const std::string& hex) {
  std::ifstream in(path);
  if (!in) throw ScenarioError(path + ": cannot open: " + std::strerror(errno));
  std::vector<std::string> lines;
  bool replaced = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("fingerprint:", 0) == 0) {
      line = "fingerprint: " + hex;
      replaced = true;
    }
    lines.push_back(line);
  }
  in.close();
  if (!replaced) lines.push_back("fingerprint: " + hex);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    for (const std::string& l : lines) out << l << '\n';
    if (!out) throw ScenarioError(tmp + ": cannot write");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace ibfab::scenario
