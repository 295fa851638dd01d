#include "tools/scenario/yaml_budget.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>

namespace ibfab::scenario {
namespace {

// Counts nodes; stops the walk (by throwing Over) at the first past `max`.
class NodeCounter final : public YAML::EventHandler {
 public:
  struct Over {
    std::size_t line;
  };
  explicit NodeCounter(std::size_t max) : max_(max) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { count(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { count(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { count(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count(m);
  }
  void OnMapEnd() override {}

 private:
  void count(const YAML::Mark& m) {
    if (++nodes_ > max_) throw Over{static_cast<std::size_t>(m.line)};
  }
  std::size_t max_;
  std::size_t nodes_ = 0;
};

}  // namespace

BoundedYaml load_within(const std::string& text, std::size_t max_nodes) {
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    NodeCounter counter(max_nodes);
    try {
      parser.HandleNextDocument(counter);  // the first document, as YAML::Load reads
    } catch (const NodeCounter::Over& o) {
      return {YAML::Node(), YamlOverBudget{o.line}};
    }
  }
  return {YAML::Load(text), std::nullopt};
}

}  // namespace ibfab::scenario
