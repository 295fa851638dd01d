#pragma once
// The SM's side of QP0 for requests other SMs and nodes send it: SMInfo
// (attribute 0x0020) Get and Set, directed-route (class 0x81) or LID-routed
// (class 0x01), and Traps (method 0x05, LID-routed). It registers two agents
// on the SM's HCA port, taking methods Get, Set and Trap; the SmpSender's
// agent on the same port keeps receiving the responses to the SM's own
// requests (the HCA routes those by TID).
//
// Contract: every SMInfo Get or Set is answered at once with the SMInfo the
// owner reports (a Set first goes to `on_set`, which may change it); other
// Get/Set attributes are answered 0x000C. A Trap goes to `on_trap` and is
// answered with a TrapRepress to its issuer (same attribute, modifier and
// data). Destroying the agent unregisters both registrations, after which
// the HCA itself answers SMInfo with 0x000C, as a host without an SM does.
#include <cstdint>
#include <functional>
#include <span>

#include "fabric/mad/notice.h"
#include "fabric/mad/sm_info.h"
#include "fabric/model/hca.h"

namespace ibfab::sm {

class SmInfoAgent : public fabric::MadAgent {
 public:
  struct Handlers {
    // The SMInfo to answer with (GUID, SM_Key, ActCount, priority, state).
    std::function<mad::SmInfo()> info;
    // A SubnSet(SMInfo): `modifier` is the sm_info_modifier value, `from`
    // the requester's SMInfo as carried in the Set. Returns the MAD status
    // (0, or 0x001C to refuse a modifier the current state does not take).
    std::function<uint16_t(uint32_t modifier, const mad::SmInfo& from)> set;
    // A Trap's Notice, and where it came from.
    std::function<void(const mad::Notice&, const fabric::MadAddress&)> trap;
  };

  // Throws std::runtime_error if another agent takes these methods on the port.
  SmInfoAgent(fabric::Hca& hca, uint8_t port, Handlers handlers);
  ~SmInfoAgent() override;
  SmInfoAgent(const SmInfoAgent&) = delete;
  SmInfoAgent& operator=(const SmInfoAgent&) = delete;

  void on_mad(fabric::Port& port, const fabric::MadAddress& from, std::span<const uint8_t> mad) override;

  uint64_t gets() const { return gets_; }
  uint64_t sets() const { return sets_; }
  uint64_t traps() const { return traps_; }

 private:
  fabric::Hca& hca_;
  Handlers handlers_;
  uint32_t directed_ = 0, lid_routed_ = 0;  // agent ids
  uint64_t gets_ = 0, sets_ = 0, traps_ = 0;
};

}  // namespace ibfab::sm
