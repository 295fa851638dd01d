#pragma once
// The fabric: owns the nodes and links built from a topology, moves packets
// between ports in simulated time, applies faults and captures packets.
//
// Timing of one hop: a packet may start on the wire at `ready` or when the
// port's previous packet has left, whichever is later (a FIFO output
// queue); it arrives at the peer after serialisation + propagation (store
// and forward). Credit flow control is not modelled; the queue is lossless
// like an IB fabric's except for the IBTA's head-of-queue lifetime: a packet
// that would wait longer than the port's HOQLife (4.096 us x 2^HOQLife,
// PortInfo; 20 and above: forever) is discarded and counted
// (PortXmitDiscards). One event per packet per hop, none per byte.
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "fabric/model/drop_reason.h"
#include "fabric/model/hca.h"
#include "fabric/model/link.h"
#include "fabric/model/node.h"
#include "fabric/model/packet.h"
#include "fabric/model/switch_node.h"
#include "fabric/topology/topology.h"
#include "sim/simulator.h"

namespace ibfab::wire {
class PcapWriter;
}

namespace ibfab::fabric {

struct FabricOptions {
  sim::Time switch_latency = sim::Time::ns(100);    // ingress to egress, per switch
  sim::Time management_delay = sim::Time::us(1);    // an SMA/PMA preparing its answer
  uint16_t multicast_fdb_cap = 4096;                // MLIDs per switch MFT
  uint16_t hca_pkey_entries = 128;                  // PartitionCap of an HCA port
  uint16_t switch_pkey_entries = 32;                // PartitionCap of switch port 0
  bool switch_traps = true;                         // switches send Trap 128 on a link change
  uint64_t seed = 1;                                // link loss streams derive from it
};

// Lifetime: a Fabric uses its Simulator and must be destroyed before it.
// Events pending in the simulator carry the fabric's packets and refer to
// its nodes, so destroying the fabric discards every pending event.
class Fabric {
 public:
  Fabric(sim::Simulator& sim, const topo::Topology& topology, FabricOptions options = {});
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  sim::Simulator& sim() const { return *sim_; }
  const FabricOptions& options() const { return options_; }
  PacketPool& packets() { return pool_; }

  std::size_t node_count() const { return nodes_.size(); }
  Node& node(uint32_t index) const { return *nodes_[index]; }
  // By name, O(1) on average.
  Node* find(std::string_view name) const;
  Hca* find_hca(std::string_view name) const;
  Switch* find_switch(std::string_view name) const;
  std::size_t link_count() const { return links_.size(); }
  Link& link(uint32_t index) const { return *links_[index]; }

  // Queues `pkt` on `out`, to start no earlier than `ready` (>= now).
  // Returns when its last byte has left the port (serialisation done), or
  // `ready` when the port discards it.
  sim::Time transmit(Port& out, PacketRef pkt, sim::Time ready);

  // Hands `pkt` to `in` as if it had just arrived over its link (fault
  // injection and fuzzing: the bytes need not be a valid packet).
  void deliver(Port& in, PacketRef pkt);

  // Faults, effective at the current simulated time.
  void set_link_up(Link& link, bool up);
  void set_node_up(Node& node, bool up);
  void set_link_loss(Link& link, double probability) { link.set_loss(probability); }

  // Writes every packet crossing the chosen links (all when `links` is
  // empty) to `writer`, stamped with its arrival time. Not owned.
  void capture(wire::PcapWriter* writer, std::vector<uint32_t> links = {});

  struct Stats {
    uint64_t transmitted = 0;  // hops started
    uint64_t delivered = 0;    // hops completed
    uint64_t dropped[static_cast<int>(DropReason::kCount)] = {};
    uint64_t drops(DropReason r) const { return dropped[static_cast<int>(r)]; }
    uint64_t total_dropped() const;
  };
  const Stats& stats() const { return stats_; }
  void count_drop(DropReason r) { ++stats_.dropped[static_cast<int>(r)]; }

 private:
  void arrive(Port& in, Link& link, PacketRef pkt);
  void link_changed(Link& link, bool up);

  sim::Simulator* sim_;
  FabricOptions options_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::unordered_map<std::string_view, Node*> by_name_;  // views of the nodes' own names
  std::vector<std::unique_ptr<Link>> links_;
  wire::PcapWriter* pcap_ = nullptr;
  std::vector<bool> captured_;  // by link id
  Stats stats_;
};

}  // namespace ibfab::fabric
