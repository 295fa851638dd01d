// libFuzzer target for the scenario reader (seeds: scenarios/). Any input
// either parses or throws ScenarioError with one line "FILE:LINE: problem"
// naming the file; another exception (yaml-cpp's own, std::stoull's), a
// message without the file, or a sanitizer report is a bug. What parses is
// well formed: its actions are in time order, none after the run's end.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "tools/scenario/scenario_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ibfab::scenario::Scenario s;
  try {
    s = ibfab::scenario::parse_scenario(text, "fuzz.yaml");
  } catch (const ibfab::scenario::ScenarioError& e) {
    const std::string what = e.what();
    if (what.rfind("fuzz.yaml:", 0) != 0 || what.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  for (std::size_t i = 0; i < s.actions.size(); ++i) {
    if (s.actions[i].at > s.duration) std::abort();
    if (i > 0 && s.actions[i].at < s.actions[i - 1].at) std::abort();
  }
  return 0;
}
