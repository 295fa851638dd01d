#pragma once
// Directed-route discovery, as ibnetdiscover and OpenSM's first sweep do
// it, through SMPs from one HCA port and nothing else:
//   - NodeInfo (and NodeDescription) of every node reached;
//   - PortInfo of every port of every switch, to find the LinkUp ones;
//   - NodeInfo one hop further out of each LinkUp port.
// A node is known by its GUID; each link is recorded once.
//
// At most `window` SMPs are outstanding; an unanswered one is resent after
// `timeout`, up to `retries` times, then given up (counted). Timeouts are
// simulator events cancelled in O(1) when the answer arrives. Order is
// breadth-first and deterministic.
#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/model/hca.h"
#include "sim/event_handle.h"
#include "sim/time.h"

namespace ibfab::sm {

struct DiscoveredNode {
  uint64_t guid = 0;
  uint8_t type = 0;  // NodeInfo NodeType: 1 CA, 2 switch
  uint8_t num_ports = 0;
  uint64_t port_guid = 0;  // of the port it was reached through
  std::string description;
  std::vector<uint8_t> path;  // directed route from the probing port
};

struct DiscoveredLink {
  uint64_t a_guid;
  uint8_t a_port;
  uint64_t b_guid;
  uint8_t b_port;
};

struct DiscoveryResult {
  std::vector<DiscoveredNode> nodes;  // in discovery order; [0] is the prober
  std::vector<DiscoveredLink> links;
  uint64_t smps_sent = 0;
  uint64_t retries = 0;
  uint64_t unanswered = 0;  // given up after every retry
  sim::Time started, finished;
  std::size_t switches() const;
};

class Discovery : public fabric::MadAgent {
 public:
  struct Options {
    unsigned window = 16;
    sim::Time timeout = sim::Time::ms(200);
    unsigned retries = 3;
  };

  // Registers a directed-route agent on hca:port. Throws std::runtime_error
  // if the port has one already.
  Discovery(fabric::Hca& hca, uint8_t port, Options options);
  ~Discovery() override;
  Discovery(const Discovery&) = delete;
  Discovery& operator=(const Discovery&) = delete;

  // Starts a sweep; `done` runs (in simulated time) when it is complete.
  void start(std::function<void(const DiscoveryResult&)> done);
  bool running() const { return running_; }
  const DiscoveryResult& result() const { return result_; }

  void on_mad(fabric::Port& port, const fabric::MadAddress& from, std::span<const uint8_t> mad) override;

 private:
  enum class Ask : uint8_t { NodeInfo, NodeDescription, PortInfo };
  struct Request {
    Ask ask;
    std::vector<uint8_t> path;
    uint32_t node = 0;  // index into result_.nodes (NodeDescription, PortInfo)
    uint8_t port = 0;   // PortInfo: which port; NodeInfo: the parent's exit port
    uint32_t parent = 0;
    unsigned tries = 0;
  };

  void enqueue(Request r) { queue_.push_back(std::move(r)); }
  void pump();
  void send(uint32_t tid, Request& r);
  void timed_out(uint32_t tid);
  void finish_one();
  void on_node_info(const Request& r, std::span<const uint8_t> data);
  void add_link(uint64_t a, uint8_t ap, uint64_t b, uint8_t bp);

  fabric::Hca& hca_;
  uint8_t port_;
  Options options_;
  uint32_t agent_ = 0;
  bool running_ = false;
  uint32_t next_tid_ = 1;
  std::deque<Request> queue_;
  struct InFlight {
    Request request;
    sim::EventHandle timeout;
  };
  std::unordered_map<uint32_t, InFlight> in_flight_;
  std::unordered_map<uint64_t, uint32_t> by_guid_;
  std::set<std::pair<uint64_t, uint8_t>> link_seen_;  // the lower (guid, port) end of each link
  DiscoveryResult result_;
  std::function<void(const DiscoveryResult&)> done_;
};

}  // namespace ibfab::sm
