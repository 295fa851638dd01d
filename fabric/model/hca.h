#pragma once
// A channel adapter: 1 or 2 ports, QP0/QP1 with MAD agents registered on
// them (kernel ib_mad semantics), the UD data path (QPs, Q_Key and P_Key
// checks, a multicast attach table per port, local loopback) and the
// connected transports (RC, UC: fabric/model/rc/) with their protection
// domains, memory table and shared receive queues.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "fabric/model/mad_agent.h"
#include "fabric/model/memory_table.h"
#include "fabric/model/node.h"
#include "fabric/model/qp_attr.h"
#include "fabric/model/read_ahead.h"
#include "fabric/model/receive_queue.h"
#include "fabric/model/ud_endpoint.h"

namespace ibfab::fabric::rc {
class ConnectedQp;
}

namespace ibfab::fabric {

class Hca final : public Node {
 public:
  // Device limits (ibv_query_device), chosen to match a ConnectX-class HCA.
  static constexpr uint32_t kMaxMcastGroups = 2048;   // per port
  static constexpr uint32_t kMaxQpsPerMcastGroup = 240;
  static constexpr uint32_t kFirstQpn = 0x48;

  Hca(Fabric& fabric, uint32_t index, const topo::NodeDesc& desc);
  ~Hca() override;

  void receive(Port& in, PacketRef pkt) override;
  void port_event(Port& port, PortEvent event) override;

  // --- MAD agents (QP0 for SMP classes, QP1 for the others) ---
  struct AgentSpec {
    uint8_t port = 1;
    uint8_t mgmt_class = 0;
    uint8_t class_version = 1;
    std::array<uint64_t, 2> methods{};  // unsolicited request methods taken (bit = method)
  };
  // Returns the agent id (> 0; it goes in bits 63:32 of the TIDs of the
  // requests it sends), or 0 if another agent already takes one of these
  // methods for this class and version on the port.
  uint32_t register_agent(const AgentSpec& spec, MadAgent* agent);
  bool unregister_agent(uint32_t id);
  // Sends a 256-byte MAD from the agent's port. Requests (no response bit)
  // get the agent id in TID bits 63:32. Directed-route SMPs are processed
  // by the SMI first. False if the MAD cannot leave (bad agent, SMI discard).
  // keep_tid: the TID goes as given (RMPP ACK/STOP/ABORT of a transfer the
  // agent receives, which the sender keys by its own TID).
  bool send_mad(uint32_t agent_id, const MadAddress& to, std::span<const uint8_t> mad, bool keep_tid = false);

  // Sets or clears CapabilityMask.IsSM (an SM opened the port).
  void set_is_sm(uint8_t port, bool on);

  // --- UD data path ---
  // Creates a UD QP on `port`; returns its QP number.
  uint32_t create_ud_qp(uint8_t port, uint32_t qkey, uint16_t pkey_index, UdEndpoint* endpoint,
                        bool block_self_loopback = false);
  // Destroys a QP (UD: detached from every group; connected: its WQEs and
  // timers are simply gone, as with ibv_destroy_qp).
  void destroy_qp(uint32_t qpn);
  void set_qkey(uint32_t qpn, uint32_t qkey);
  // Moves a QP to `port` with `pkey_index` (RESET -> INIT); its multicast
  // attachments move with it.
  void set_qp_port(uint32_t qpn, uint8_t port, uint16_t pkey_index);
  // Where a QP's accepted messages go (may be set after create_ud_qp).
  void set_endpoint(uint32_t qpn, UdEndpoint* endpoint);
  // A QP's port and P_Key index (port 0: no such QP).
  uint8_t qp_port(uint32_t qpn) const;
  uint16_t qp_pkey_index(uint32_t qpn) const;
  // A port's attach table is keyed by MGID, as mlx4's and mlx5's are: a
  // multicast packet reaches the QPs attached to its GRH's DGID whatever
  // its DLID, and the MLID given here is kept but not matched.
  // 0, or an errno value: EINVAL (no such QP, not a multicast GID), ENOMEM
  // (past the device's limits). Attaching twice is not an error and adds
  // no second copy.
  int attach_mcast(uint32_t qpn, const std::array<uint8_t, 16>& mgid, uint16_t mlid);
  // 0, or EINVAL when the QP is not attached to mgid.
  int detach_mcast(uint32_t qpn, const std::array<uint8_t, 16>& mgid, uint16_t mlid);
  // Whether the QP is attached to any group.
  bool attached(uint32_t qpn) const;
  // Sends one UD message. Returns when it has left the port: the time its
  // last byte is serialised onto the link (a send's completion is written
  // then, as hardware writes it), or now for a message that stays on the
  // HCA (loopback only) or that the port discards. Empty if the QP does not
  // exist or its port is not Active (nothing leaves).
  std::optional<sim::Time> send_ud(uint32_t qpn, const UdSend& send);

  // --- Connected transports (RC, UC) ---
  // Protection domains: ids > 0. dealloc_pd: 0, EINVAL (no such PD),
  // EBUSY (a QP or SRQ uses it).
  uint32_t alloc_pd();
  int dealloc_pd(uint32_t pd);
  MemoryTable& memory() { return memory_; }
  // Creates an RC or UC QP in RESET (QP numbers from the UD QPs' space).
  // srqn 0: the QP has its own receive queue of caps.max_recv_wr WQEs.
  // sq_sig_all: every send WQE completes (ibv_qp_init_attr.sq_sig_all).
  // XRC_SEND (an XRC initiator): no receive queue (srqn must be 0); each
  // send WR names its target's XRC SRQ (SendWr::remote_srqn).
  // Returns 0 when `pd` or `srqn` names nothing, or the transport is XRC_RECV.
  uint32_t create_connected_qp(Transport t, uint32_t pd, const QpCaps& caps, uint32_t srqn, QpEndpoint* ep,
                               bool sq_sig_all = false);
  // Applies the attributes `mask` names and acts on the state (the caller
  // checked the transition). 0 or EINVAL.
  int modify_qp(uint32_t qpn, const QpAttr& attr, uint32_t mask);
  // kReset for a QP that does not exist.
  QpState qp_state(uint32_t qpn) const;
  // 0, ENOMEM (queue full), EINVAL (no such QP, too many SGEs, inline too
  // long, an opcode the transport has not, a QP in RESET or INIT). A post
  // to a QP in ERR completes with WR_FLUSH_ERR.
  int post_send(uint32_t qpn, const SendWr& wr);
  int post_recv(uint32_t qpn, const RecvWr& wr);
  // Shared receive queues: ids > 0 (0: no such PD). Their receive
  // completions go to the QP that took the WQE; the limit event to `ep`.
  uint32_t create_srq(uint32_t pd, uint32_t depth, uint32_t max_sge, QpEndpoint* ep);
  int post_srq_recv(uint32_t srqn, const RecvWr& wr);
  int arm_srq_limit(uint32_t srqn, uint32_t limit);
  // 0, EINVAL (no such SRQ), EBUSY (QPs use it).
  int destroy_srq(uint32_t srqn);

  // --- XRC (IBTA Vol 1 Annex A14) ---
  // XRC domains: ids > 0. dealloc_xrcd: 0, EINVAL (no such domain), EBUSY
  // (an XRC SRQ or target QP belongs to it).
  uint32_t alloc_xrcd();
  int dealloc_xrcd(uint32_t xrcd);
  // An XRC SRQ of domain `xrcd`, its WQEs' SGEs in `pd`; its number (the
  // one an initiator puts in XRCETH) is its id. Receive completions of
  // the messages it takes go to `cq` (the SRQ's CQ), whichever target QP
  // took them; the limit event to `ep`. 0: no such PD or domain.
  uint32_t create_xrc_srq(uint32_t xrcd, uint32_t pd, uint32_t depth, uint32_t max_sge, QpEndpoint* ep,
                          QpEndpoint* cq);
  // An XRC target QP (XRC_RECV) of domain `xrcd`, in RESET: a responder
  // only, whose requests name the XRC SRQ (of its domain) that takes them;
  // its events go to `ep`. XRC initiator QPs (XRC_SEND) come from
  // create_connected_qp. 0: no such domain.
  uint32_t create_xrc_target_qp(uint32_t xrcd, QpEndpoint* ep);
  // The XRC SRQ `srqn` if it belongs to `xrcd` (null otherwise).
  struct Srq;
  Srq* xrc_srq(uint32_t srqn, uint32_t xrcd);
  // Sends a connected QP's packet out of `port`, or back to this HCA when
  // it is addressed to the port itself; returns when it has left.
  sim::Time transmit_connected(Port& port, PacketRef pkt);
  // The chunks of host memory read ahead for connected QPs' messages:
  // their requests' payloads, and their READ responses.
  ReadAhead& send_reads() { return send_reads_; }
  ReadAhead& response_reads() { return response_reads_; }

  struct ConnectedStats {
    uint64_t no_qp = 0;  // to a connected QP that does not exist (or of another transport)
  };
  const ConnectedStats& connected_stats() const { return connected_stats_; }

  void add_listener(PortEventListener* l) { listeners_.push_back(l); }
  void remove_listener(PortEventListener* l);

  // What is attached now: QPs, and groups with a QP attached on `port`.
  std::size_t qp_count() const { return qps_.size() + connected_.size(); }
  std::size_t mcast_groups(uint8_t port) const { return groups_[port - 1u].size(); }

  struct UdStats {
    uint64_t delivered = 0;
    uint64_t no_qp = 0;         // unicast to a QP that does not exist
    uint64_t no_receive = 0;    // the QP had no receive posted
    uint64_t not_attached = 0;  // multicast with no QP attached on the port
  };
  const UdStats& ud_stats() const { return ud_stats_; }

 protected:
  void send_management(Port& in, PacketRef pkt, uint8_t out_port, sim::Time ready) override;
  bool deliver_to_agents(Port& in, PacketRef& pkt, const MadPacketLayout& layout) override;

 public:
  // A shared receive queue (ordinary or XRC).
  struct Srq {
    uint32_t pd;
    ReceiveQueue rq;
    QpEndpoint* ep;        // its events (the limit)
    uint32_t users = 0;    // QPs attached (ordinary SRQs)
    uint32_t xrcd = 0;     // XRC: its domain (0: an ordinary SRQ)
    QpEndpoint* cq = nullptr;  // XRC: where its receive completions go
  };

 private:
  struct Agent {
    AgentSpec spec;
    MadAgent* agent = nullptr;
  };
  struct Qp {
    uint8_t port;
    uint32_t qkey;
    uint16_t pkey_index;
    bool block_self_loopback;
    UdEndpoint* endpoint;
  };
  struct McastGroup {
    std::array<uint8_t, 16> mgid;
    uint16_t mlid;  // as first attached; not matched
    std::vector<uint32_t> qpns;
  };

  void receive_ud(Port& in, const PacketRef& pkt, bool loopback, uint32_t sender_qpn);
  void receive_connected(Port& in, const PacketRef& pkt);
  // Delivers to one UD QP if the packet's P_Key matches the entry at the
  // QP's P_Key index (IBTA 9.6.1.1: a QP other than QP1 checks its own
  // partition) and its Q_Key the QP's; else counts the violation.
  bool deliver(const Qp& qp, uint32_t qpn, uint16_t pkey, uint32_t qkey, UdMessage& msg);
  std::vector<McastGroup>& groups(uint8_t port) { return groups_[port - 1u]; }

  std::unordered_map<uint32_t, Agent> agents_;
  uint32_t next_agent_ = 1;
  std::unordered_map<uint32_t, Qp> qps_;
  uint32_t next_qpn_ = kFirstQpn;
  std::array<std::vector<McastGroup>, 2> groups_;
  std::vector<uint32_t> mcast_scratch_;  // receive_ud's copy of a group's QPs
  std::vector<PortEventListener*> listeners_;
  UdStats ud_stats_;

  MemoryTable memory_;
  std::vector<uint32_t> pds_;  // allocated PD ids
  uint32_t next_pd_ = 1;
  std::unordered_map<uint32_t, std::unique_ptr<rc::ConnectedQp>> connected_;
  std::unordered_map<uint32_t, std::unique_ptr<ReceiveQueue>> own_rqs_;  // by QP number
  std::unordered_map<uint32_t, uint32_t> qp_srq_;                       // QP number -> its SRQ
  std::unordered_map<uint32_t, std::unique_ptr<Srq>> srqs_;
  uint32_t next_srqn_ = 1;
  std::vector<uint32_t> xrcds_;  // allocated XRC domain ids
  uint32_t next_xrcd_ = 1;
  ReadAhead send_reads_;
  ReadAhead response_reads_;
  ConnectedStats connected_stats_;
};

}  // namespace ibfab::fabric
