#include "tools/cli/faults.h"

#include <sstream>
#include <stdexcept>

#include "tools/scenario/scenario_loader.h"

namespace ibfab::cli {

namespace {

constexpr api::Fault::Kind kKinds[] = {api::Fault::Kind::LinkDown, api::Fault::Kind::LinkUp,
                                       api::Fault::Kind::LinkLoss};

}  // namespace

api::Fault parse_fault(const std::string& text) {
  api::Fault f;
  f.origin = "--fault '" + scenario::printable(text) + "'";
  const auto refuse = [&f](const std::string& cause) {
    throw std::invalid_argument(scenario::printable(f.origin + ": " + cause));
  };
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() < 3 || words.size() > 4)
    refuse("expected AT ACTION LINK [PROBABILITY], such as \"2s link-down L5[5]\" or \"1s link-loss S1[3] 0.25\"");
  if (!sim::parse_time(words[0], f.at))
    refuse("bad time '" + words[0] + "' (examples: 0, 250ns, 10us, 1.5ms, 2s)");
  bool known = false;
  for (const api::Fault::Kind k : kKinds)
    if (words[1] == api::to_string(k)) {
      f.kind = k;
      known = true;
    }
  if (!known) refuse("unknown action '" + words[1] + "' (known: link-down, link-up, link-loss)");
  if (!fabric::parse_link_ref(words[2], f.link))
    refuse("expected a link as NODE[PORT] or NODE[PORT]-NODE[PORT], got '" + words[2] + "'");
  const bool loss = f.kind == api::Fault::Kind::LinkLoss;
  if (loss && words.size() < 4) refuse("'link-loss' needs a probability in [0, 1] after the link");
  if (!loss && words.size() > 3)
    refuse("'" + words[3] + "' after the link: a probability belongs to link-loss only");
  if (loss && !scenario::parse_probability(words[3], f.probability))
    refuse("the probability must be a number in [0, 1], got '" + words[3] + "'");
  return f;
}

std::vector<api::Fault> parse_faults(const std::vector<std::string>& texts) {
  std::vector<api::Fault> out;
  out.reserve(texts.size());
  for (const std::string& t : texts) out.push_back(parse_fault(t));
  return out;
}

std::vector<api::Fault> faults_from_scenario(const scenario::Scenario& s) {
  using Kind = scenario::Action::Kind;
  std::vector<api::Fault> out;
  for (const scenario::Action& a : s.actions) {
    const std::string where = s.file + ":" + std::to_string(a.line);
    if (a.kind == Kind::NodeDown || a.kind == Kind::NodeUp || a.kind == Kind::SmKill)
      throw scenario::ScenarioError(where + ": '" + to_string(a.kind) +
                                    "' is not a fault a served fabric applies (link-down, link-up, link-loss are)");
    if (a.kind != Kind::LinkDown && a.kind != Kind::LinkUp && a.kind != Kind::LinkLoss) continue;
    if (a.every.ps())
      throw scenario::ScenarioError(where + ": '" + to_string(a.kind) +
                                    "' repeats (every/until): a served fabric applies each fault once; "
                                    "write one action per time");
    api::Fault f;
    f.at = a.at;
    f.kind = a.kind == Kind::LinkDown ? api::Fault::Kind::LinkDown
             : a.kind == Kind::LinkUp ? api::Fault::Kind::LinkUp
                                      : api::Fault::Kind::LinkLoss;
    f.link = a.link;
    f.probability = a.probability;
    f.origin = where;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ibfab::cli
