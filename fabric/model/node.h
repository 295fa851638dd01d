#pragma once
// A node of the fabric: an HCA or a switch, with its ports, its SMA and PMA.
//
// Nodes never call into each other: packets leave through Fabric::transmit
// and arrive through receive(), one event per hop.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fabric/model/packet.h"
#include "fabric/model/port.h"
#include "fabric/model/port_event.h"
#include "fabric/topology/topology.h"
#include "sim/time.h"

namespace ibfab::fabric {

class Fabric;
struct MadPacketLayout;

enum class NodeType : uint8_t { Hca = 1, Switch = 2 };

class Node {
 public:
  Node(Fabric& fabric, uint32_t index, const topo::NodeDesc& desc);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  Fabric& fabric() const { return *fabric_; }
  uint32_t index() const { return index_; }
  NodeType type() const { return type_; }
  bool is_switch() const { return type_ == NodeType::Switch; }
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  uint64_t guid() const { return guid_; }
  uint64_t system_guid() const { return system_guid_; }
  uint16_t vendor_id() const { return vendor_id_; }
  uint16_t device_id() const { return device_id_; }

  uint8_t num_ports() const { return static_cast<uint8_t>(ports_.size() - 1); }
  // Switch: 0..num_ports(); HCA: 1..num_ports(). Precondition: valid number.
  Port& port(uint8_t n) { return ports_[n]; }
  const Port& port(uint8_t n) const { return ports_[n]; }
  // The port that holds the node's LID and answers management for it: 0 on
  // a switch, `in` on an HCA.
  Port& management_port(Port& in) { return is_switch() ? ports_[0] : in; }

  bool up() const { return up_; }
  // Power: a node that goes down drops everything in flight to it; when it
  // comes back it has forgotten what the SM configured (a reboot).
  void set_up(bool up);

  // A packet has fully arrived on `in` (called by the fabric in simulated
  // time; the node is up and the link was up when it arrived).
  virtual void receive(Port& in, PacketRef pkt) = 0;

  // Something changed on `port` that software above the HCA is told about.
  virtual void port_event(Port& port, PortEvent event) { (void)port; (void)event; }

 protected:
  // Handles a packet on VL15 or to QP0/QP1 addressed to this node: the
  // SMI/SMA/PMA path shared by HCAs and switches. `mgmt` is the port whose
  // LID and state speak for the node.
  void receive_management(Port& in, PacketRef pkt, const MadPacketLayout& layout);
  // Sends a management packet this node originates or answers: out
  // `out_port` when non-zero, else routed by its LRH DLID (switches) or out
  // `in` (HCAs). `ready` is when it may start on the wire.
  virtual void send_management(Port& in, PacketRef pkt, uint8_t out_port, sim::Time ready) = 0;
  // A MAD the node's own SMA/PMA did not take (SMInfo, traps, responses,
  // other classes). Returns whether an agent took it; the default (a
  // switch) has none. An untaken Get/Set request is answered with status
  // 0x000C, as the kernel's MAD layer does.
  virtual bool deliver_to_agents(Port& in, PacketRef& pkt, const MadPacketLayout& layout);
  // Turns an untaken Get/Set request into its 0x000C response in place
  // (false for other methods: those are dropped).
  static bool answer_unmatched(std::span<uint8_t> mad);
  // Delivers a packet this node sent to itself, at `at`, off the wire.
  void loop_back(Port& port, PacketRef pkt, sim::Time at);
  // Restores power-on state of the SM-configurable fields.
  virtual void reset_configuration();

  std::vector<Port> ports_;  // index = port number; [0] unused on an HCA

 private:
  Fabric* fabric_;
  uint32_t index_;
  NodeType type_;
  std::string name_;
  std::string description_;
  uint64_t guid_;
  uint64_t system_guid_;
  uint16_t vendor_id_;
  uint16_t device_id_;
  bool up_ = true;
};

}  // namespace ibfab::fabric
