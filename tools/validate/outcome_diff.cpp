#include "tools/validate/outcome_diff.h"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <set>

namespace ibfab::validate {
namespace {

void flatten(const YAML::Node& n, const std::string& at, Fields& out) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      if (key == "raw") continue;  // a fact of one run or one fabric
      flatten(kv.second, at.empty() ? key : at + "." + key, out);
    }
  } else if (n.IsSequence()) {
    out[at + ".count"] = std::to_string(n.size());
    for (std::size_t i = 0; i < n.size(); ++i) flatten(n[i], at + "." + std::to_string(i), out);
  } else if (n.IsNull()) {
    out[at] = "null";
  } else {
    // A quoted scalar is a string (tag "!"), a plain one a number or a bool.
    out[at] = n.Tag() == "!" ? "\"" + n.Scalar() + "\"" : n.Scalar();
  }
}

std::string unquote(const std::string& s) {
  return s.size() >= 2 && s.front() == '"' && s.back() == '"' ? s.substr(1, s.size() - 2) : s;
}

bool gid(const std::string& text, std::array<uint8_t, 16>& out) {
  return ::inet_pton(AF_INET6, unquote(text).c_str(), out.data()) == 1;
}

uint32_t low_word(const std::array<uint8_t, 16>& g) {
  return uint32_t{g[12]} << 24 | uint32_t{g[13]} << 16 | uint32_t{g[14]} << 8 | g[15];
}

// InfiniBand (ip_ib_mc_map: ff1S:401b:PPPP::, the address's low 28 bits)
// and RoCE (the IPv4-mapped address) MGIDs of one IPv4 group.
bool same_ipv4_group(const std::string& m, const std::string& r) {
  std::array<uint8_t, 16> ib{}, roce{};
  if (!gid(m, ib) || !gid(r, roce)) return false;
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  const bool ipv4_mapped = std::memcmp(roce.data(), kMapped, sizeof kMapped) == 0;
  const bool ib_ipv4_form = ib[0] == 0xff && (ib[1] & 0xf0) == 0x10 && ib[2] == 0x40;
  return ipv4_mapped && ib_ipv4_form && (low_word(ib) & 0x0fffffff) == (low_word(roce) & 0x0fffffff);
}

bool lid_only_on_ib(const std::string& m, const std::string& r) { return m == "true" && r == "false"; }

bool numbers(const std::string& m, const std::string& r) {
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  };
  return digits(m) && digits(r);
}

// Two path MTUs of the verbs' set (ibv_query_qp's path_mtu in bytes).
bool mtus(const std::string& m, const std::string& r) {
  static const std::set<std::string> kMtus = {"256", "512", "1024", "2048", "4096"};
  return kMtus.count(m) && kMtus.count(r);
}

bool is(const Fields& f, const char* key, const char* value) { return field_of(f, key) == value; }

bool unicast_without_grh(const Fields& m, const Fields& r) {
  return is(m, "action", "send") && is(m, "grh", "false") && is(r, "grh", "false") &&
         is(m, "outcome.create_ah.errno", "0") && is(r, "outcome.create_ah.errno", "22");
}

bool block_self_loopback_refused(const Fields& m, const Fields& r) {
  return is(m, "action", "create-qp") && is(m, "block_self_mcast_lb", "true") && is(m, "outcome.call.errno", "0") &&
         is(r, "outcome.call.errno", "95") && is(r, "outcome.fallback.rc", "0");
}

// A count field's value: absent is 0; anything but digits is no run's.
std::size_t count_field(const Fields& f, const char* key) {
  const std::string v = field_of(f, key);
  if (v == "?") return 0;
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
    throw OutcomeError("step " + field_of(f, "step") + ": '" + key + "' is not a count: " + v);
  return std::stoull(v);
}

// `f` without the messages of `left_out` steps ("outcome.messages.N.*"
// renumbered, its count and "outcome.received" lowered). Sets `removed`.
Fields without_messages(const Fields& f, const std::set<std::string>& left_out, std::size_t& removed) {
  removed = 0;
  const std::string prefix = "outcome.messages.";
  const std::size_t count = count_field(f, "outcome.messages.count");
  if (left_out.empty() || count == 0) return f;
  Fields out;
  for (const auto& kv : f)
    if (kv.first.rfind(prefix, 0) != 0) out.insert(kv);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string from = prefix + std::to_string(i) + ".";
    if (left_out.count(field_of(f, (from + "step").c_str()))) {
      ++removed;
      continue;
    }
    const std::string to = prefix + std::to_string(kept++) + ".";
    for (auto it = f.lower_bound(from); it != f.end() && it->first.rfind(from, 0) == 0; ++it)
      out[to + it->first.substr(from.size())] = it->second;
  }
  out["outcome.messages.count"] = std::to_string(kept);
  if (const auto it = out.find("outcome.received"); it != out.end() && removed) {
    const std::size_t received = count_field(f, "outcome.received");
    it->second = std::to_string(received - std::min(removed, received));
  }
  return out;
}

}  // namespace

const char* const kPathMtuRule =
    "path MTU: the PathRecord's on InfiniBand, the IP interface's MTU on RoCE (1500 bytes: 1024)";

const char* const kLeftOutMessages = "the messages of a step that differs by rule are not compared";

const std::vector<StepRule> kStepRules = {
    {"a unicast address without a GRH: InfiniBand only (RoCE needs one: ibv_create_ah EINVAL)", unicast_without_grh},
    {"IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: InfiniBand HCAs (mlx4, mlx5) take it, rxe refuses it (EOPNOTSUPP)",
     block_self_loopback_refused},
};

std::string field_of(const Fields& f, const char* key) {
  const auto it = f.find(key);
  return it == f.end() ? "?" : unquote(it->second);
}

const std::vector<Rule> kRules = {
    {"outcome.event.mgid", "MGID: the link layer's mapping of the group's IPv4 address", same_ipv4_group},
    {"outcome.mgid", "MGID: the link layer's mapping of the group's IPv4 address", same_ipv4_group},
    {"outcome.event.ah.dlid_set", "LID: a group's MLID on InfiniBand, no LIDs on RoCE", lid_only_on_ib},
    {"outcome.event.ah.hop_limit", "hop limit: the MCMemberRecord's on InfiniBand, the IP TTL on RoCE", numbers},
    {"outcome.qp.active.path_mtu", kPathMtuRule, mtus},
    {"outcome.qp.passive.path_mtu", kPathMtuRule, mtus},
};

namespace {

// One line of a run: a step's fields appended to `run`, or the summary
// read (true). Throws OutcomeError, or YAML::Exception for a line that is
// no record of fields.
bool read_line(const std::string& line, const std::string& where, Run& run) {
  YAML::Node n;
  try {
    n = YAML::Load(line);
  } catch (const YAML::Exception& e) {
    throw OutcomeError(where + "not a JSON object (" + e.msg + ")");
  }
  if (!n.IsMap()) throw OutcomeError(where + "not a JSON object");
  if (const YAML::Node summary = n["summary"]) {
    const YAML::Node s = summary.IsMap() ? summary["scenario"] : YAML::Node();
    if (!s || !s.IsScalar()) throw OutcomeError(where + "a summary without its scenario");
    run.scenario = s.Scalar();
    return true;
  }
  const YAML::Node step = n["step"];
  if (!step || !step.IsScalar() || step.Scalar() != std::to_string(run.steps.size()))
    throw OutcomeError(where + "expected step " + std::to_string(run.steps.size()));
  Fields f;
  flatten(n, "", f);
  run.steps.push_back(std::move(f));
  return false;
}

}  // namespace

Run read_run(std::istream& in, const std::string& name) {
  Run run;
  std::string line;
  std::size_t number = 0;
  bool summary = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const std::string where = name + ":" + std::to_string(number) + ": ";
    if (summary) throw OutcomeError(where + "a record after the summary line");
    try {
      summary = read_line(line, where, run);
    } catch (const YAML::Exception& e) {  // a key that is no scalar, say
      throw OutcomeError(where + "not a record of fields (" + e.msg + ")");
    }
  }
  if (!summary) throw OutcomeError(name + ": no summary line: not a whole run");
  return run;
}

bool StepDiff::agrees() const {
  for (const FieldDiff& f : fields)
    if (!f.rule) return false;
  return true;
}

std::size_t Comparison::agreeing() const {
  std::size_t n = 0;
  for (const StepDiff& s : steps) n += s.agrees();
  return n;
}

Comparison compare(const Run& model, const Run& real) {
  if (model.scenario != real.scenario)
    throw OutcomeError("the runs are of two scenarios: '" + model.scenario + "' and '" + real.scenario + "'");
  if (model.steps.size() != real.steps.size())
    throw OutcomeError("the runs have " + std::to_string(model.steps.size()) + " and " +
                       std::to_string(real.steps.size()) + " steps: not runs of the same scenario");
  Comparison c;
  std::set<std::string> left_out;  // steps (as their text) whose messages are not compared
  for (std::size_t i = 0; i < model.steps.size(); ++i) {
    std::size_t removed_m = 0, removed_r = 0;
    const Fields m = without_messages(model.steps[i], left_out, removed_m);
    const Fields r = without_messages(real.steps[i], left_out, removed_r);
    const char* step_rule = nullptr;
    for (const StepRule& rule : kStepRules)
      if (rule.holds(m, r)) step_rule = rule.name;
    if (step_rule) left_out.insert(std::to_string(i));
    const bool lowered = removed_m + removed_r > 0;
    if (field_of(m, "line") != field_of(r, "line") || field_of(m, "action") != field_of(r, "action"))
      throw OutcomeError("step " + std::to_string(i) + " is line " + field_of(m, "line") + " in one run and line " +
                         field_of(r, "line") + " in the other: not runs of the same scenario");
    StepDiff d;
    d.step = i;
    d.line = field_of(m, "line");
    d.host = field_of(m, "host");
    d.action = field_of(m, "action");
    std::set<std::string> keys;
    for (const auto& kv : m) keys.insert(kv.first);
    for (const auto& kv : r) keys.insert(kv.first);
    for (const std::string& k : keys) {
      const auto mi = m.find(k), ri = r.find(k);
      const std::string mv = mi == m.end() ? "(absent)" : mi->second;
      const std::string rv = ri == r.end() ? "(absent)" : ri->second;
      if (mv == rv) continue;
      FieldDiff f{k, mv, rv, step_rule};
      for (const Rule& rule : kRules)
        if (k == rule.field && rule.holds(mv, rv)) f.rule = rule.name;
      // An expect that waited for the left-out messages: its count's check.
      if (lowered && (k == "ok" || k == "outcome.timed_out")) f.rule = kLeftOutMessages;
      d.fields.push_back(std::move(f));
    }
    c.steps.push_back(std::move(d));
  }
  return c;
}

void print(const Comparison& c, const std::string& scenario, std::ostream& out) {
  out << "validate " << scenario << ": the model (ibfab) against the real device, step by step\n";
  for (const StepDiff& s : c.steps) {
    out << "  step " << s.step << " (line " << s.line << ", " << s.host << " " << s.action << "): ";
    // A step whose every field agrees by one rule (a step rule) names it once.
    const char* one_rule = s.fields.size() > 1 ? s.fields.front().rule : nullptr;
    for (const FieldDiff& f : s.fields)
      if (f.rule != one_rule) one_rule = nullptr;
    if (one_rule) out << "agree (by rule: " << one_rule << ")\n";
    else out << (s.agrees() ? "agree" : "DISAGREE") << "\n";
    for (const FieldDiff& f : s.fields) {
      out << "      " << f.field << ": model " << f.model << ", real " << f.real;
      if (f.rule && !one_rule) out << " (by rule: " << f.rule << ")";
      out << "\n";
    }
  }
  const std::size_t n = c.steps.size(), agree = c.agreeing();
  out << "agreement: " << agree << " of " << n << " steps (" << (n ? 100 * agree / n : 100) << "%)\n";
}

}  // namespace ibfab::validate
