#include "tools/passthrough/step_plan.h"

#include <algorithm>
#include <map>
#include <set>

namespace ibfab::passthrough {
namespace {

using Kind = scenario::Action::Kind;

[[noreturn]] void refuse(const scenario::Scenario& s, const scenario::Action& a, const std::string& why) {
  throw Refusal(s.file + ":" + std::to_string(a.line) + ": '" + scenario::to_string(a.kind) +
                "' cannot pass through to a real device: " + why);
}

// Why this action cannot pass through, or "" when it can.
std::string why_not(const scenario::Action& a) {
  switch (a.kind) {
    case Kind::LinkDown:
    case Kind::LinkUp:
    case Kind::LinkLoss:
    case Kind::NodeDown:
    case Kind::NodeUp:
      return "it is a fault of the fabric, which only the model can inject";
    case Kind::Probe: return "directed-route discovery needs the SM's view of the fabric";
    case Kind::SmKill: return "the real fabric's SM is not the scenario's to stop";
    case Kind::Subscribe: return "trap subscriptions are the SA's, not the verbs API's";
    case Kind::Expect:
      if (!a.expect.group.empty()) return "a group's membership is the SA's view, not the API's";
      if (!a.expect.received) return "trap Reports are the SA's, not the verbs API's";
      return "";
    case Kind::Join:
    case Kind::Leave:
      if (!join_state_name(a.mcast.join_state))
        return "rdma_cm joins as a full member or a send-only full member only (join-state full or send-only-full)";
      if (a.mcast.mask) return "rdma_cm writes its own component mask ('mask')";
      if (a.kind == Kind::Join && (a.mcast.qkey != scenario::McastSpec{}.qkey || a.mcast.pkey != 0xFFFF))
        return "rdma_cm chooses the Q_Key and P_Key of its joins ('qkey', 'pkey')";
      if (a.kind == Kind::Leave && a.mcast.expect_status.value_or(0) != 0)
        return "a leave's SA status does not reach rdma_cm ('expect-status')";
      return "";
    case Kind::Send:
    case Kind::Attach:
    case Kind::Detach:
    case Kind::QpState:
    case Kind::CreateQp:
    case Kind::Connect:
    case Kind::Post:
    case Kind::Disconnect: return "";
  }
  return "unknown action";
}

const std::string& host_of(const scenario::Action& a) { return a.kind == Kind::Expect ? a.expect.node : a.node; }

}  // namespace

const char* join_state_name(uint8_t bits) {
  if (bits == 0x1) return "full";
  if (bits == 0x8) return "send-only-full";
  return nullptr;
}

std::vector<Step> plan_steps(const scenario::Scenario& s, const HostMap& map, Family family,
                             std::vector<std::string>& hosts) {
  std::vector<const scenario::Action*> in_file(s.actions.size());
  std::transform(s.actions.begin(), s.actions.end(), in_file.begin(), [](const auto& a) { return &a; });
  std::stable_sort(in_file.begin(), in_file.end(), [](auto* x, auto* y) { return x->line < y->line; });
  std::set<std::string> used;
  std::map<std::string, std::string> groups;  // address -> the MGID that has it
  std::size_t count = 0;
  for (const scenario::Action* a : in_file) {
    if (const std::string why = why_not(*a); !why.empty()) refuse(s, *a, why);
    const std::string& host = host_of(*a);
    if (host == "*") refuse(s, *a, "node \"*\" means every host of the model's topology: name the hosts");
    if (!map.contains(host))
      throw Refusal(s.file + ":" + std::to_string(a->line) + ": host '" + host + "' has no device in --map");
    used.insert(host);
    for (const std::string& to : {a->mcast.to, a->conn.to}) {
      if (to.empty()) continue;
      if (!map.contains(to))
        throw Refusal(s.file + ":" + std::to_string(a->line) + ": host '" + to + "' has no device in --map");
      used.insert(to);
    }
    if (!a->mcast.mgid.empty()) {
      const std::string address = address_text(group_address(a->mcast.mgid, family));
      const auto [first, fresh] = groups.emplace(address, a->mcast.mgid);
      if (!fresh && first->second != a->mcast.mgid)
        throw Refusal(s.file + ":" + std::to_string(a->line) + ": groups '" + first->second + "' and '" +
                      a->mcast.mgid + "' are both " + address + " with --family " + to_string(family) +
                      " (239. and an MGID's last three bytes)");
    }
    count += a->every.ps() ? static_cast<std::size_t>((a->until - a->at).ps() / a->every.ps()) + 1 : 1;
    if (count > kMaxSteps)
      throw Refusal(s.file + ":" + std::to_string(a->line) + ": more than " + std::to_string(kMaxSteps) +
                    " steps (repetitions included), the most a passthrough run takes");
  }
  hosts.assign(used.begin(), used.end());
  // Time order, file order on ties, repetitions included.
  std::vector<Step> steps;
  steps.reserve(count);
  for (const scenario::Action& a : s.actions) {
    steps.push_back({a.at, &a});
    if (a.every.ps())
      for (sim::Time t = a.at + a.every; t <= a.until; t = t + a.every) steps.push_back({t, &a});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& x, const Step& y) {
    return x.at != y.at ? x.at < y.at : x.action->line < y.action->line;
  });
  return steps;
}

std::vector<std::string> split_hosts(const scenario::Scenario& s, const std::vector<Step>& steps, const HostMap& map,
                                     const std::vector<std::string>& hosts, const std::string& local) {
  std::set<std::string> mine;
  std::size_t from = 0;
  while (from <= local.size()) {
    const std::size_t comma = std::min(local.find(',', from), local.size());
    const std::string name = local.substr(from, comma - from);
    if (!map.contains(name)) throw Refusal("--hosts: '" + name + "' has no device in --map");
    mine.insert(name);
    from = comma + 1;
  }
  for (const Step& st : steps) {
    const scenario::Action& a = *st.action;
    if ((a.kind == Kind::Connect || a.kind == Kind::Post || a.kind == Kind::Disconnect) &&
        mine.count(a.node) != mine.count(a.conn.to))
      refuse(s, a, "a connection between a host of this process and one of the peer's (--hosts) does not pass "
                   "through yet");
  }
  std::vector<std::string> out;
  for (const std::string& h : hosts)
    if (mine.count(h)) out.push_back(h);
  return out;
}

}  // namespace ibfab::passthrough
