#pragma once
// Unicast routing engines: from the subnet the SM discovered (switches,
// their cables, the LIDs it assigned) to a linear forwarding table per
// switch. Engines are chosen by name; each documents what it optimises.
//
// Engines see only this graph, never the fabric: the SM builds it from
// what its SMPs found, and programs the result with SMPs.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ibfab::sm {

inline constexpr uint8_t kNoRoute = 0xFF;       // LFT entry: drop
inline constexpr uint8_t kUnreachable = 0xFF;   // hop count: no path

struct RoutingSwitch {
  uint64_t guid = 0;
  uint16_t lid = 0;     // base LID of port 0
  uint8_t lmc = 0;
  uint8_t num_ports = 0;
  // What each port 1..num_ports is cabled to (index = port number; [0]
  // unused). Only Active (or about to be activated) links appear.
  struct Peer {
    enum class Kind : uint8_t { None, Switch, Endport };
    Kind kind = Kind::None;
    uint32_t sw = 0;     // Switch: index into RoutingInput::switches
    uint8_t port = 0;    // the port at the far end
    uint16_t lid = 0;    // Endport: its base LID
    uint8_t lmc = 0;     // Endport: its LMC (2^lmc LIDs from lid)
  };
  std::vector<Peer> ports;
};

struct RoutingInput {
  std::vector<RoutingSwitch> switches;
  uint16_t max_lid = 0;  // highest LID assigned anywhere (LFTs cover 0..max_lid)
  // Engine-specific hints, e.g. up/down root switches by GUID (empty:
  // the engine chooses).
  std::vector<uint64_t> root_guids;
};

struct RoutingOutput {
  // lft[s][lid] = egress port of switch s for `lid` (0 = the switch itself,
  // kNoRoute = drop). Every vector has max_lid + 1 entries.
  std::vector<std::vector<uint8_t>> lft;
  // hops[a * n + b] = switch-to-switch hop count from a to b along the
  // engine's routes (kUnreachable if none); n = switches.size(). The
  // multicast manager's root selection reads it.
  std::vector<uint8_t> hops;
  uint8_t switch_hops(std::size_t a, std::size_t b, std::size_t n) const { return hops[a * n + b]; }
};

class RoutingEngine {
 public:
  virtual ~RoutingEngine() = default;
  virtual std::string_view name() const = 0;
  // One line: what the engine optimises and what it guarantees.
  virtual std::string_view description() const = 0;
  // Fills `out`; returns false (with `error` set) if the subnet cannot be
  // routed by this engine, e.g. a disconnected switch graph is fine (those
  // LIDs get kNoRoute) but an engine-specific precondition fails.
  virtual bool route(const RoutingInput& in, RoutingOutput& out, std::string& error) = 0;
};

// "minhop", "updn", "ftree"; nullptr for an unknown name.
std::unique_ptr<RoutingEngine> make_routing_engine(std::string_view name);
// The known names, for messages.
std::vector<std::string_view> routing_engine_names();

}  // namespace ibfab::sm
