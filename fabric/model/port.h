#pragma once
// A port of a node: its link, the state an SM configures through PortInfo,
// its P_Key table, its counters and its transmitter.
//
// Numbering: HCA ports are 1..N. Switch port 0 is the management port (it
// owns the switch's LID and P_Key table and has no link); 1..N are external.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fabric/model/port_counters.h"
#include "sim/time.h"

namespace ibfab::fabric {

class Link;
class Node;

enum class PortState : uint8_t { NoChange = 0, Down = 1, Init = 2, Armed = 3, Active = 4 };
enum class PhysState : uint8_t { Sleep = 1, Polling = 2, Disabled = 3, LinkUp = 5 };

const char* to_string(PortState s);

// IBTA MTU enum: 1 = 256 ... 5 = 4096.
inline uint32_t mtu_bytes(uint8_t mtu_enum) { return 128u << mtu_enum; }

class Port {
 public:
  Port(Node* node, uint8_t number, uint64_t guid)
      : node_(node), number_(number), guid_(guid), phys_up_(number == 0) {}

  Node& node() const { return *node_; }
  uint8_t number() const { return number_; }
  uint64_t guid() const { return guid_; }

  Link* link() const { return link_; }
  Port* peer() const;
  void attach(Link* l) {
    link_ = l;
    refresh_phys();
  }

  // Physical state follows the link and the two nodes being up (cached:
  // the fabric calls refresh_phys() whenever one of them changes); the
  // logical state is the SM's (Down whenever the link is not up).
  PhysState phys_state() const { return phys_up_ ? PhysState::LinkUp : PhysState::Polling; }
  bool link_up() const { return phys_up_; }
  void refresh_phys();
  PortState state() const { return link_up() || number_ == 0 ? state_ : PortState::Down; }
  void set_state(PortState s) { state_ = s; }
  // The state the SM last set, whatever the link does now.
  PortState logical_state() const { return state_; }

  // --- PortInfo configuration (written by the SMA on Set) ---
  uint16_t lid = 0;
  uint8_t lmc = 0;
  uint16_t master_sm_lid = 0;
  uint8_t master_sm_sl = 0;
  uint64_t gid_prefix = 0xfe80000000000000ull;
  uint64_t m_key = 0;
  uint16_t m_key_lease_period = 0;
  uint8_t m_key_protect_bits = 0;
  uint32_t capability_mask = 0;
  uint16_t capability_mask2 = 0;
  bool client_reregister = false;
  uint8_t neighbor_mtu = 5;    // enum, 5 = 4096
  uint8_t mtu_cap = 5;
  uint8_t vl_cap = 4;          // VL0-VL7
  uint8_t operational_vls = 4;
  uint8_t subnet_timeout = 0;
  uint8_t resp_time_value = 8;
  uint8_t hoq_life = 19;
  uint8_t vl_high_limit = 0;
  uint8_t link_down_default_state = 2;  // Polling
  uint8_t local_phy_errors = 15, overrun_errors = 15;
  uint16_t m_key_violations = 0, p_key_violations = 0, q_key_violations = 0;
  bool partition_enforcement_in = false, partition_enforcement_out = false;

  // P_Key table (HCA ports and switch port 0). Entry 0 defaults to the
  // default partition, full member.
  std::vector<uint16_t> pkeys;
  // GUIDInfo: entry 0 stands for the port GUID (read-only); the others are
  // alias GUIDs an SM may assign, all zero until the first Set (null till
  // then: most ports never get one). GUIDCap = kGuidCap.
  static constexpr std::size_t kGuidCap = 8;
  std::unique_ptr<std::array<uint64_t, kGuidCap>> guid_table;
  // SLtoVLMappingTable (8 bytes as the SMP carries it) by input port: a
  // switch port's, for each port packets come in by; a CA port's at [0].
  // Entries not set yet map every SL to VL0 (all zero).
  std::vector<std::array<uint8_t, 8>> sl_to_vl;
  // VLArbitrationTable blocks 1..4 (low priority 0-31, 32-63, high
  // priority 0-31, 32-63), as the SMP carries them; all zero until the
  // first Set (null till then).
  std::unique_ptr<std::array<std::array<uint8_t, 64>, 4>> vl_arbitration;

  PortCounters counters;

  // Transmitter: the time the wire is free again (FIFO output queue).
  sim::Time busy_until = sim::Time::zero();

  // How long a packet may wait to leave this port: 4.096 us x 2^HOQLife,
  // unbounded for HOQLife 20..31 (IBTA 14.2.5.6).
  sim::Time hoq_lifetime() const {
    return hoq_life >= 20 ? sim::Time::max() : sim::Time::ns(4096) * (int64_t{1} << hoq_life);
  }

  // True if `lid` addresses this port given its LMC.
  bool owns_lid(uint16_t dlid) const {
    return lid != 0 && (dlid >> lmc) == (lid >> lmc);
  }
  // Index of a P_Key entry matching `pkey` under the IBTA rule (same low 15
  // bits, and not both limited members); -1 if none.
  int match_pkey(uint16_t pkey) const;
  // The index of `pkey`'s base, a full member's entry first, else a limited
  // one's, as the kernel's ib_find_pkey; -1 if the table has neither.
  int find_pkey(uint16_t pkey) const;

 private:
  Node* node_;
  uint8_t number_;
  uint64_t guid_;
  Link* link_ = nullptr;
  bool phys_up_ = false;
  PortState state_ = PortState::Init;
};

}  // namespace ibfab::fabric
