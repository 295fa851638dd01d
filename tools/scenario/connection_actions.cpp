// The actions on a host's reliable connections: connect, post, disconnect.
#include "tools/scenario/scenario_run.h"

namespace ibfab::scenario {

std::function<void()> ScenarioRun::bind_connection(const Action& a) {
  fail(a, std::string("'") + to_string(a.kind) + "' does not run on the model yet");
}

}  // namespace ibfab::scenario
