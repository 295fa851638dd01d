#pragma once
// The multicast manager: one spanning tree per MLID over the switch graph
// the SM routed, programmed into the switches' MFTs by SMP Sets right after
// each membership change, writing only the MFT blocks whose content
// changed since it last wrote them.
//
// Routing follows OpenSM (reference/SA-MULTICAST.md section 5) with the
// default policies: every member port is a receiving leaf, whatever its
// JoinState; fewer than 2 member ports -> no tree and no MFT entry. At a
// member's edge switch the port facing it is set (bit 0 for a switch's own
// port 0); at every tree switch the ports of its tree links are set.
//
// Views: the manager reads the Subnet (the SM's view, never the fabric) at
// every call, so the SM may rewrite it between calls (a heavy sweep) and
// then call reroute_all(). Members are kept by port GUID, so they survive
// a sweep that renumbers Subnet::ports; a member absent from the subnet is
// left out of the tree until it comes back. MFT state is kept per switch
// GUID: a switch that has never been written to, or that was forgotten
// (forget_switch: it rebooted), is all-zero.
//
// Lifetime: `subnet` and `sender` must outlive the manager. Answers to SMPs
// that arrive after the manager is gone are ignored.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sm/mcast/mcast_metrics.h"
#include "sm/mcast/mcast_policies.h"
#include "sm/mcast/mft_shadow.h"
#include "sm/sa/mcast_routing.h"
#include "sm/smp_sender.h"
#include "sm/subnet.h"

namespace ibfab::sm {

class McastManager final : public McastRouting {
 public:
  McastManager(const Subnet& subnet, SmpSender& sender, McastPolicies policies = McastPolicies::opensm());
  McastManager(const McastManager&) = delete;
  McastManager& operator=(const McastManager&) = delete;

  // 0xC000 .. min(0xFFFE, 0xC000 + subnet.mcast_fdb_cap - 1); empty while
  // the cap is 0.
  MlidRange mlid_range() const { return MlidRange::for_cap(subnet_.mcast_fdb_cap); }

  // --- For the SA ---
  // The MLID allocator policy over mlid_range() (requested: the join's
  // MLID field, honoured when in range and free).
  std::optional<uint16_t> allocate_mlid(std::optional<uint16_t> requested) override;
  // Frees `mlid`; if it still has members, they are dropped and its MFT
  // entries cleared, as set_members(mlid, {}) does.
  void free_mlid(uint16_t mlid) override;
  // Whether port `port` (index into Subnet::ports) may become a member of
  // `mlid`, by the join admission policy. False for an unknown index.
  bool admit(uint32_t port, uint16_t mlid) override;

  // --- Routing ---
  // Sets the member ports of `mlid` (indices into Subnet::ports: the union
  // over every group sharing the MLID; order and repeats do not matter),
  // recomputes its tree, and sends at once the MFT blocks that changed.
  // An MLID outside mlid_range() (the cap shrank at a sweep) keeps its
  // members but gets no tree. Throws std::out_of_range for a LID that is
  // not multicast (below 0xC000, or 0xFFFF) or a port index outside
  // Subnet::ports; nothing changes then.
  void set_members(uint16_t mlid, std::vector<uint32_t> member_ports) override;
  // Recomputes every MLID's tree, in ascending MLID order, against the
  // subnet as it is now, and sends every block (of every switch in the
  // subnet) that differs from what was written. MLIDs outside mlid_range()
  // keep their members but get no tree.
  void reroute_all();
  // The switch `guid` lost its MFT (it rebooted): it is treated as all-zero
  // again. Its blocks are rewritten by the next reroute_all() (or, block by
  // block, by set_members of an MLID in its tree).
  void forget_switch(uint64_t guid) { shadow_.forget(guid); }
  // Runs `fn` once every MFT SMP sent so far (and any rewrite they cause)
  // has been answered or given up; at once if none is outstanding. Unlike
  // SmpSender::when_idle it does not wait for the SM's other SMPs.
  void when_programmed(std::function<void()> fn);

  // --- Queries and metrics ---
  std::vector<uint64_t> members(uint16_t mlid) const;  // port GUIDs, ascending
  // The last tree computed for `mlid`; nullptr if it has no members.
  const McastTreeInfo* tree(uint16_t mlid) const;
  std::vector<McastTreeInfo> trees() const;  // ascending MLID
  // The MFT ports the manager wants on switch `guid` for `mlid`, one mask
  // per 16-port position (empty: no entry).
  MftShadow::Masks mft(uint64_t guid, uint16_t mlid) const { return shadow_.desired(guid, mlid); }
  // (switch, MLID) pairs with any port set.
  std::size_t mft_entries() const { return shadow_.entries(); }
  std::map<uint64_t, std::size_t> mft_entries_per_switch() const { return shadow_.entries_per_switch(); }
  McastLinkLoad link_load() const;
  uint64_t mft_smps_sent() const { return smps_sent_; }
  uint64_t mft_smps_failed() const { return smps_failed_; }
  std::size_t outstanding() const { return outstanding_; }
  // One entry per set_members / reroute_all call, in call order.
  const std::vector<McastProgramming>& programming() const { return runs_; }
  const McastPolicies& policies() const { return policies_; }

 private:
  struct End {
    uint64_t guid;
    uint8_t port;
    auto operator<=>(const End&) const = default;
  };
  struct Record {
    McastTreeInfo info;
    std::vector<uint64_t> switches;  // GUIDs of the tree's switches
    std::vector<End> links;          // each tree link by its lower end
  };

  void index_switches();
  // Recomputes the tree of `mlid` and its desired MFT entries; returns the
  // switch GUIDs whose entries changed or are in the tree now.
  std::vector<uint64_t> route(uint16_t mlid);
  void write(uint64_t guid, mad::MftAddress a, std::size_t run);
  void answered(uint64_t guid, mad::MftAddress a, uint64_t seq, std::size_t run, bool ok);
  std::size_t start_run(uint16_t mlid);
  void finish_if_done(std::size_t run);
  uint8_t positions(uint32_t sw) const;

  const Subnet& subnet_;
  SmpSender& sender_;
  McastPolicies policies_;
  MftShadow shadow_;
  std::map<uint16_t, std::vector<uint64_t>> members_;   // MLID -> port GUIDs (ascending)
  std::unordered_map<uint64_t, std::size_t> groups_of_;  // port GUID -> MLIDs it is in
  std::map<uint16_t, Record> trees_;
  std::unordered_map<uint64_t, uint32_t> carried_;       // switch GUID -> trees it is in
  std::unordered_map<uint64_t, uint32_t> index_;         // switch GUID -> Subnet::graph index
  const RoutingSwitch* indexed_data_ = nullptr;          // the switch list index_ was built from
  std::size_t indexed_size_ = 0;
  std::vector<McastProgramming> runs_;
  std::vector<uint32_t> run_pending_;                    // per run: SMPs not yet answered
  std::vector<std::function<void()>> waiters_;
  std::size_t outstanding_ = 0;
  uint64_t smps_sent_ = 0, smps_failed_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // SMP callbacks hold a weak_ptr
};

}  // namespace ibfab::sm
