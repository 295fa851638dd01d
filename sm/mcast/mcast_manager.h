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
// Batches: membership changes update the trees and the desired MFTs at
// once, and are programmed together by one flush, `batch` of virtual time
// after the first change since the previous flush (zero: at the end of the
// current instant, after the events already due then). A block changed
// many times in a batch is written once. reroute_all() flushes at once.
//
// Incremental: a membership change costs O(tree depth) plus, when the set
// of edge switches changes, O(switches) to keep every candidate root's
// cost (root_cost.h) and choose the root again. A new root rebuilds that
// group's tree; otherwise only the new member's branch is grown, or the
// leaving member's branch pruned (tree_builder.h: the result is the same
// as building the tree from scratch). So the root is chosen again only
// when the edge switches change: a least-loaded root stays while members
// come and go on the switches the tree already reaches.
//
// Views: the manager reads the Subnet (the SM's view, never the fabric).
// When the SM publishes a new subnet (a heavy sweep) it calls
// reroute_all(), which resolves every member anew and rebuilds every tree;
// a call that finds the subnet replaced without it does the same first.
// Members are kept by port GUID, so they survive a sweep that renumbers
// Subnet::ports; a member absent from the subnet is left out of the tree
// until it comes back. MFT state is kept per switch GUID: a switch that has
// never been written to, or that was forgotten (forget_switch: it
// rebooted), is all-zero.
//
// MulticastFDBTop: after a flush, a switch whose highest MLID in use
// changed gets SwitchInfo.MulticastFDBTop set to it (read, modify, write;
// PortStateChange is not written back), as OpenSM does, so that tools such
// as ibroute -M see the table.
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

#include "sim/event_handle.h"
#include "sim/time.h"
#include "sm/mcast/mcast_metrics.h"
#include "sm/mcast/mcast_policies.h"
#include "sm/mcast/mft_shadow.h"
#include "sm/mcast/root_cost.h"
#include "sm/sa/mcast_routing.h"
#include "sm/sa/mft_view.h"
#include "sm/smp_sender.h"
#include "sm/subnet.h"

namespace ibfab::sm {

class McastManager final : public McastRouting, public MftView {
 public:
  McastManager(const Subnet& subnet, SmpSender& sender, McastPolicies policies = McastPolicies::opensm(),
               sim::Time batch = sim::Time::zero());
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
  // entries cleared, as clear_members(mlid) does.
  void free_mlid(uint16_t mlid) override;
  // Whether port `port` (index into Subnet::ports) may become a member of
  // `mlid`, by the join admission policy. False for an unknown index.
  bool admit(uint32_t port, uint16_t mlid) override;

  // --- Routing ---
  // Membership changes of `mlid` (by port GUID); each updates the tree at
  // once and leaves the MFT blocks that changed to the batch's flush. Adding a member twice or
  // removing a non-member changes nothing. An MLID outside mlid_range()
  // (the cap shrank at a sweep) keeps its members but gets no tree. Throw
  // std::out_of_range for a LID that is not multicast (below 0xC000, or
  // 0xFFFF); nothing changes then.
  void add_member(uint16_t mlid, uint64_t port_guid) override;
  void remove_member(uint16_t mlid, uint64_t port_guid) override;
  void clear_members(uint16_t mlid) override;
  // Makes the members of `mlid` exactly `member_ports` (indices into
  // Subnet::ports; order and repeats do not matter) by the adds and
  // removes above, as one call. Also throws
  // std::out_of_range for an index outside Subnet::ports.
  void set_members(uint16_t mlid, const std::vector<uint32_t>& member_ports);
  // Resolves every member against the subnet as it is now, rebuilds every
  // MLID's tree, and sends at once every block (of every switch in the
  // subnet) that differs from what was written, with any batch pending.
  void reroute_all();
  // The switch `guid` lost its MFT (it rebooted): it is treated as all-zero
  // again. Its blocks are rewritten by the next reroute_all() (or, block by
  // block, by changes to an MLID in its tree).
  void forget_switch(uint64_t guid) {
    shadow_.forget(guid);
    tops_.erase(guid);
  }
  // Runs `fn` once every MFT SMP sent so far (and any rewrite they cause)
  // has been answered or given up; at once if none is outstanding. Unlike
  // SmpSender::when_idle it does not wait for the SM's other SMPs.
  void when_programmed(std::function<void()> fn);

  // --- Queries and metrics ---
  std::vector<uint64_t> members(uint16_t mlid) const;  // port GUIDs, ascending
  // The tree of `mlid` as it stands; nullopt if it has no members.
  std::optional<McastTreeInfo> tree(uint16_t mlid) const;
  std::vector<McastTreeInfo> trees() const;  // ascending MLID
  // The MFT ports the manager wants on switch `guid` for `mlid` (empty: no
  // entry).
  PortMask mft(uint64_t guid, uint16_t mlid) const { return shadow_.desired(guid, mlid); }
  // The wanted MFT of switch `guid`, for the SA (MftView).
  uint16_t mft_top(uint64_t guid) const override { return shadow_.top(guid); }
  mad::MulticastForwardingTable mft_block(uint64_t guid, mad::MftAddress a) const override {
    return shadow_.desired_block(guid, a);
  }
  // (switch, MLID) pairs with any port set.
  std::size_t mft_entries() const { return shadow_.entries(); }
  std::map<uint64_t, std::size_t> mft_entries_per_switch() const { return shadow_.entries_per_switch(); }
  McastLinkLoad link_load() const;
  uint64_t mft_smps_sent() const { return smps_sent_; }  // MFT block Sets
  uint64_t top_smps_sent() const { return top_smps_; }   // SwitchInfo Get/Set for MulticastFDBTop
  uint64_t mft_smps_failed() const { return smps_failed_; }
  std::size_t outstanding() const { return outstanding_; }
  // Every membership call (add/remove/clear/set_members) and reroute_all
  // once its batch is programmed, in bounded memory (McastProgrammingStats:
  // aggregates, a latency histogram and a ring of the last records). Calls
  // flushed together share their batch's MFT SMP counts and programmed time
  // (which waits for MulticastFDBTop too). Calls whose batch is still out
  // are not in it yet.
  const McastProgrammingStats& programming() const { return stats_; }
  // What the manager holds, for soak tests: members, tree nodes, groups,
  // batch slots and the calls waiting in them. Flat under churn.
  struct Footprint {
    std::size_t groups = 0, members = 0, tree_nodes = 0, ports_in_groups = 0;
    std::size_t batch_slots = 0, calls_waiting = 0, latency_bins = 0;
  };
  Footprint footprint() const;
  const McastPolicies& policies() const { return policies_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  // Where a member meets the switch graph of the current subnet.
  struct Member {
    uint32_t sw = kNone;  // edge switch index; kNone: not in the subnet
    uint8_t port = 0;     // the edge switch's port facing it (0: the switch itself)
    bool is_switch = false;
  };
  struct Node {
    uint32_t parent = 0;  // == the node's own switch for the root
    uint8_t up_port = 0, down_port = 0, depth = 0;
    uint32_t refs = 0;    // children + 1 if members hang off it
    PortMask mask;        // the MFT entry it gets
  };
  struct Group {
    std::unordered_map<uint64_t, Member> members;  // by port GUID
    std::size_t attached = 0;                      // members with sw != kNone
    EdgeMap edges;                                 // edge switch -> members on it
    std::unique_ptr<RootCost> cost;                // over `edges`, while there are any
    uint32_t root = kNone;                         // kNone: no tree
    std::unordered_map<uint32_t, Node> nodes;      // switch index -> tree node
  };

  // How a membership change moved a group's edge switches.
  enum class EdgeChange { None, Cost, Added, Removed };

  Member locate(uint64_t guid) const;
  void join(uint16_t mlid, Group& g, uint64_t guid);
  void leave(uint16_t mlid, Group& g, uint64_t guid);
  EdgeChange attach(Group& g, const Member& m);
  EdgeChange detach(Group& g, const Member& m);
  // Brings the tree up to date after member `m` joined or left.
  void update(uint16_t mlid, Group& g, const Member& m, bool joined, EdgeChange c);
  // Chooses the root again; returns true if the tree was rebuilt (a new
  // root) or torn down (none), false if the root stays.
  bool reroot(uint16_t mlid, Group& g);
  bool wants_tree(uint16_t mlid, const Group& g) const;
  void build(uint16_t mlid, Group& g, uint32_t root);
  void tear_down(uint16_t mlid, Group& g);
  // Grows the branch from edge switch `sw` up to the tree; false if it
  // cannot reach the root.
  bool grow(uint16_t mlid, Group& g, uint32_t sw);
  void prune(uint16_t mlid, Group& g, uint32_t sw);
  void member_bit(uint16_t mlid, Group& g, const Member& m, bool on);
  // The desired entry of `mlid` on switch `sw` is now `mask`.
  void publish(uint16_t mlid, uint32_t sw, const PortMask& mask);
  void drop_if_empty(uint16_t mlid);

  // Whether the subnet was replaced since the trees were built.
  bool subnet_changed() const;
  void resync();
  // Records a membership call and makes sure a flush is coming.
  void start_run(uint16_t mlid);
  // Sends the stale blocks of every switch (all) or of the switches and
  // blocks marked dirty, for the calls since the previous flush.
  void flush(bool all);
  void write(uint32_t sw, mad::MftAddress a, uint32_t batch);
  void answered(uint64_t guid, mad::MftAddress a, uint64_t seq, uint32_t batch, bool ok);
  // Sets MulticastFDBTop on switch `sw` if its top changed.
  void update_top(uint32_t sw, uint32_t batch);
  // One SMP of `batch` was answered or given up.
  void smp_done(uint32_t batch);
  // Once nothing of `batch` is outstanding: its calls go to stats_ and
  // its slot is freed.
  void finish_if_done(uint32_t batch);
  uint8_t positions(uint32_t sw) const;

  const Subnet& subnet_;
  SmpSender& sender_;
  McastPolicies policies_;
  MftShadow shadow_;
  std::map<uint16_t, Group> groups_;                     // by MLID
  std::unordered_map<uint64_t, std::size_t> groups_of_;  // port GUID -> MLIDs it is in
  std::vector<uint32_t> carried_;                        // switch index -> trees it is in
  std::vector<uint64_t> dirty_;                          // switch index << 16 | MFT block
  std::unordered_map<uint64_t, uint32_t> index_;         // switch GUID -> index (answers, rewrites)
  std::unordered_map<uint64_t, uint16_t> tops_;          // switch GUID -> MulticastFDBTop last set
  const RoutingSwitch* synced_data_ = nullptr;           // the switch list the trees were built on
  std::size_t synced_size_ = 0;
  struct Call {
    uint16_t mlid = 0;  // 0: reroute_all
    sim::Time called;
  };
  // A flush's calls until its SMPs are answered. Slots are reused (their
  // vectors keep their capacity), so a steady churn allocates nothing.
  struct Batch {
    std::vector<Call> calls;
    uint32_t pending = 0;  // SMPs not yet answered
    uint32_t smps = 0, failed = 0;
  };
  sim::Time batch_;
  std::vector<Call> unflushed_;          // calls waiting for a flush
  std::vector<Batch> batches_;           // by slot
  std::vector<uint32_t> free_batches_;   // slots of finished batches
  McastProgrammingStats stats_;
  sim::EventHandle flush_event_;
  std::vector<std::function<void()>> waiters_;
  std::size_t outstanding_ = 0;
  uint64_t smps_sent_ = 0, smps_failed_ = 0, top_smps_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // SMP callbacks hold a weak_ptr
};

}  // namespace ibfab::sm
