#pragma once
// The Performance Management Agent of a node (class 0x04 on QP1):
// ClassPortInfo, PortCounters and PortCountersExtended, Get and Set (Set
// clears the counters CounterSelect names). PortSelect 0xFF sums every
// port (AllPortSelect). Rewrites the MAD in place with data and status;
// never throws.
#include <cstdint>
#include <span>

namespace ibfab::fabric {

class Node;
class Port;

class Pma {
 public:
  explicit Pma(Node& node) : node_(node) {}
  // `mad`: the whole 256-byte MAD. `mgmt`: the port it arrived for.
  void answer(Port& mgmt, std::span<uint8_t> mad);

 private:
  uint16_t port_counters(Port& mgmt, bool set, uint8_t* data);
  uint16_t port_counters_ext(Port& mgmt, bool set, uint8_t* data);
  template <class F>
  bool for_selected(Port& mgmt, uint8_t select, F&& f);

  Node& node_;
};

}  // namespace ibfab::fabric
