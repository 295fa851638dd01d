#pragma once
// A switch: forwards by its linear (unicast) and multicast forwarding
// tables, which the SM programs through SMPs, and answers management on
// port 0.
//
// Memory: the LFT grows in 64-entry blocks up to the highest block written
// (one byte per LID); the MFT grows in 32-MLID blocks up to the highest
// block written (one 16-bit mask per MLID per 16 ports). A switch nobody
// programmed costs a few hundred bytes.
#include <cstdint>
#include <span>
#include <vector>

#include "fabric/model/node.h"

namespace ibfab::fabric {

class Switch final : public Node {
 public:
  static constexpr uint16_t kLinearFdbCap = 0xC000;   // every unicast LID
  static constexpr uint8_t kNoRoute = 0xFF;

  Switch(Fabric& fabric, uint32_t index, const topo::NodeDesc& desc);

  void receive(Port& in, PacketRef pkt) override;

  // --- Linear forwarding table ---
  uint8_t lft(uint16_t lid) const { return lid < lft_.size() ? lft_[lid] : kNoRoute; }
  // The LFT as written so far: entry `lid` for lid < size(); beyond, kNoRoute.
  std::span<const uint8_t> lft_entries() const { return lft_; }
  void set_lft(uint16_t lid, uint8_t port);
  // One LFT block, as LinearForwardingTable carries it: entries `first` ..
  // first + 63 (first a multiple of 64, below kLinearFdbCap).
  void set_lft_block(uint16_t first, std::span<const uint8_t, 64> ports);
  void lft_block(uint16_t first, std::span<uint8_t, 64> ports) const;
  uint16_t lft_top = 0;  // SwitchInfo:LinearFDBTop

  // --- Multicast forwarding table ---
  uint16_t multicast_fdb_cap() const { return mft_cap_; }
  uint8_t mft_positions() const { return positions_; }
  // The 16-port mask of `mlid` at `position`; 0 outside what was written.
  uint16_t mft(uint16_t mlid, uint8_t position) const;
  void set_mft(uint16_t mlid, uint8_t position, uint16_t mask);
  uint16_t mft_top = 0xBFFF;  // SwitchInfo:MulticastFDBTop (0xBFFF: empty)

  // --- SwitchInfo state ---
  uint8_t default_port = 0, default_mcast_primary = 0, default_mcast_not_primary = 0;
  uint8_t life_time_value = 18;
  bool port_state_change = false;  // set when a port changes state; Set clears it
  // A port's link went up or down: sets port_state_change and, when it was
  // clear, sends Trap 128 (link state changed) to the SM: a LID-routed SMP
  // Trap from port 0 to PortInfo:MasterSMLID, once the SM has set one and
  // given port 0 a LID (and FabricOptions::switch_traps is on). The trap is
  // not repeated: the SM's TrapRepress is
  // taken and dropped, and a lost trap is caught by the SM's light sweep.
  void note_port_state_change();
  uint64_t traps_sent = 0;

 protected:
  void send_management(Port& in, PacketRef pkt, uint8_t out_port, sim::Time ready) override;
  void reset_configuration() override;

 private:
  void forward_unicast(Port& in, PacketRef pkt, uint16_t dlid, sim::Time ready);
  void forward_multicast(Port& in, const PacketRef& pkt, uint16_t mlid, sim::Time ready);

  std::vector<uint8_t> lft_;
  std::vector<uint16_t> mft_;  // [(mlid - 0xC000) * positions_ + position]
  uint16_t mft_cap_;
  uint8_t positions_;
};

}  // namespace ibfab::fabric
