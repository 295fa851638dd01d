#pragma once
// A scenario as written in a YAML file: what fabric to build, what happens
// to it and when, and how the run is checked. Pure data; see
// scenario_loader.h for the file format and scenario_runner.h for the run.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.h"

namespace ibfab::scenario {

// A link named by one of its ends, "S1[3]", or by both, "S1[3]-H1[1]".
struct LinkRef {
  std::string node;
  uint8_t port = 0;
  std::string text;  // as written, for messages
};

struct Action {
  enum class Kind { LinkDown, LinkUp, NodeDown, NodeUp, LinkLoss, Probe };
  Kind kind;
  sim::Time at;
  int line = 0;        // in the scenario file
  LinkRef link;        // LinkDown, LinkUp, LinkLoss
  std::string node;    // NodeDown, NodeUp, Probe (the probing host)
  double probability = 0;  // LinkLoss
};

// A Subnet Manager placed on a host port.
struct SmSpec {
  std::string node;
  uint8_t port = 1;
  std::string routing = "minhop";
  uint8_t priority = 0;
  sim::Time at;  // when it starts its first sweep
  int line = 0;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  std::string topology;     // a topology spec (net-file paths are relative to the file)
  uint64_t seed = 1;
  std::string scheduler = "heap";          // sim::make_scheduler name
  sim::Time duration = sim::Time::ms(1);  // simulated time to run
  std::vector<SmSpec> sms;
  std::vector<Action> actions;            // sorted by time, then file order
  std::optional<std::string> fingerprint;  // golden trace digest, 16 hex digits
  int fingerprint_line = 0;
};

const char* to_string(Action::Kind k);

}  // namespace ibfab::scenario
