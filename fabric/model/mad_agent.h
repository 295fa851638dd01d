#pragma once
// The MAD interface between an HCA's QP0/QP1 and the agents on top of it
// (the SMA and PMA built into every node, the built-in SM/SA, and later the
// umad clients of the API layer).
#include <array>
#include <cstdint>
#include <optional>
#include <span>

namespace ibfab::fabric {

class Port;

// Where a MAD came from, or where it goes: the addressing that ibv_wc /
// ib_user_mad carries.
struct MadAddress {
  uint16_t lid = 0;        // remote LID (0xFFFF = permissive, for DR SMPs)
  uint32_t qpn = 0;        // remote QP (0 for SMPs, 1 for GMPs)
  uint32_t qkey = 0x80010000;
  uint8_t sl = 0;
  uint16_t pkey_index = 0;
  bool has_grh = false;
  std::array<uint8_t, 16> gid{};  // remote GID when has_grh
};

class MadAgent {
 public:
  virtual ~MadAgent() = default;
  // A MAD arrived for this agent on `port`. `mad` is the whole 256-byte MAD
  // (for DR SMPs, as processed by the SMI: the agent replies through
  // Hca::send_mad with the same paths). Called in simulated time.
  virtual void on_mad(Port& port, const MadAddress& from, std::span<const uint8_t> mad) = 0;
};

}  // namespace ibfab::fabric
