// libFuzzer target for `ibfab validate`'s reader of outcome records
// (tools/validate/outcome_diff.h). Any input either reads as a run or
// throws OutcomeError with a one-line "fuzz.jsonl:..." message; anything
// else (another exception, a sanitizer report) is a bug. A run that reads
// agrees with itself in every step, and so does its report.
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "tools/validate/outcome_diff.h"

using namespace ibfab::validate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  Run run;
  try {
    run = read_run(in, "fuzz.jsonl");
  } catch (const OutcomeError& e) {
    const std::string m = e.what();
    if (m.rfind("fuzz.jsonl", 0) != 0 || m.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  try {
    const Comparison c = compare(run, run);
    if (!c.all_agree() || c.steps.size() != run.steps.size()) std::abort();
    std::ostringstream out;
    print(c, run.scenario, out);
    if (out.str().find("agreement: " + std::to_string(run.steps.size()) + " of ") == std::string::npos) std::abort();
  } catch (const OutcomeError& e) {
    // A field a run must hold as a count holds something else: said in one line.
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
