#pragma once
// Timed link faults on a served fabric (`ibfab serve --fault`): each is
// applied at its offset from the moment the engine starts serving, on the
// engine's clock (engine.h: virtual time follows wall time from then, never
// more than the lookahead ahead of it), exactly as a scenario's link-down,
// link-up and link-loss actions are: the fabric's link changes state, the
// switches on it send Trap 128, and the built-in SM sweeps and re-routes.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/model/link_ref.h"
#include "sim/time.h"

namespace ibfab::api {

struct Fault {
  enum class Kind : uint8_t { LinkDown, LinkUp, LinkLoss };
  sim::Time at;            // after serving starts; not negative
  Kind kind = Kind::LinkDown;
  fabric::LinkRef link;    // one end, or both (the far end is checked against the cable)
  double probability = 0;  // LinkLoss: of losing each packet, in [0, 1]
  // Names the fault in messages: "--fault '2s link-down L5[5]'", "FILE:LINE".
  std::string origin;
};

// "link-down", "link-up", "link-loss": the scenario actions' names.
const char* to_string(Fault::Kind kind);

// `f` as `serve --fault` reads it: "2s link-down L5[5]", "1500us link-loss
// S1[3] 0.25" (the time in the largest unit that writes it exactly, the
// probability in the fewest digits that read back the same).
std::string fault_text(const Fault& f);
// What the log says of `f` when it applies: "fault at 2s: link-down L5[5]",
// "fault at 1500us: link-loss S1[3] 0.25".
std::string fault_log_line(const Fault& f);

// One engine's faults, bound to its fabric's links.
class FaultSchedule {
 public:
  // Resolves every fault's link in `fabric`; throws std::invalid_argument
  // "ORIGIN: problem" for the first that names no cable of it, or whose
  // time is negative or probability outside [0, 1]. `log` (may be empty)
  // gets fault_log_line() of each as it applies.
  FaultSchedule(fabric::Fabric& fabric, std::vector<Fault> faults, std::function<void(const std::string&)> log);
  FaultSchedule(const FaultSchedule&) = delete;
  FaultSchedule& operator=(const FaultSchedule&) = delete;

  // Schedules every fault on the fabric's simulator at now() + its offset
  // (faults at the same time apply in the order given). The first call
  // only; later ones do nothing. The events refer to this object: the
  // fabric (which discards pending events when destroyed) must not outlive
  // it with any pending.
  void start();
  std::size_t size() const { return faults_.size(); }

 private:
  void apply(std::size_t i);

  struct Bound {
    Fault fault;
    fabric::Link* link;
  };
  fabric::Fabric& fabric_;
  std::vector<Bound> faults_;
  std::function<void(const std::string&)> log_;
  bool started_ = false;
};

}  // namespace ibfab::api
