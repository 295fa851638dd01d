#pragma once
// The side-by-side comparison of two runs of one scenario's host actions
// (ibfab-passthrough's outcome records, docs/ARCHITECTURE.md): the model's
// and a real device's. Records are matched by step; every field is
// compared but those under `raw` (facts of one run or fabric). A field
// that differs by the nature of the link layer agrees by a written rule
// (kRules, listed in docs/COMPATIBILITY.md), never by being skipped.
#include <cstddef>
#include <istream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibfab::validate {

// A file that is not a run's outcome records: the file and line, and why.
class OutcomeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One record, flattened: "outcome.event.ah.sl" -> "0" (strings quoted,
// null as null, arrays by index: "outcome.messages.3.seq").
using Fields = std::map<std::string, std::string>;
// A field's value as text (a string without its quotes); "?" when absent.
std::string field_of(const Fields& f, const char* key);

struct Run {
  std::vector<Fields> steps;  // in step order
  std::string scenario;       // from the summary line
};

// Reads a run's records from `in` (named `name` in errors). Throws
// OutcomeError: a line that is not a JSON object, steps out of order, no
// summary line or something after it.
Run read_run(std::istream& in, const std::string& name);

struct Rule {
  const char* field;  // the flattened field it applies to
  const char* name;   // what the docs call it
  // Whether model value `m` and real value `r` differ only as the rule says.
  bool (*holds)(const std::string& m, const std::string& r);
};
extern const std::vector<Rule> kRules;

// A step whose outcome differs as a whole by what the device is: every
// field of it agrees by the rule, and the messages it sent are left out of
// the later expect steps on both sides (named by a rule of their own).
struct StepRule {
  const char* name;
  bool (*holds)(const Fields& model, const Fields& real);
};
extern const std::vector<StepRule> kStepRules;
// The rule named for what a step-ruled send's messages change downstream.
extern const char* const kLeftOutMessages;

struct FieldDiff {
  std::string field, model, real;
  const char* rule = nullptr;  // null: a disagreement
};

struct StepDiff {
  std::size_t step = 0;
  std::string line, host, action;
  std::vector<FieldDiff> fields;  // the fields that differ, in field order
  bool agrees() const;
};

struct Comparison {
  std::vector<StepDiff> steps;
  std::size_t agreeing() const;
  bool all_agree() const { return agreeing() == steps.size(); }
};

// Compares the runs step by step. Throws OutcomeError when they are not
// runs of the same steps (another scenario, another step count).
Comparison compare(const Run& model, const Run& real);

// The side-by-side report: one line per step (agree, or each field that
// disagrees with both values; the fields agreeing by rule named), then the
// share of steps that agree.
void print(const Comparison& c, const std::string& scenario, std::ostream& out);

}  // namespace ibfab::validate
