#include "sm/discovery.h"

#include <algorithm>
#include <stdexcept>

#include "fabric/mad/dr_smp.h"
#include "fabric/mad/node_description.h"
#include "fabric/mad/node_info.h"
#include "fabric/mad/port_info.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::sm {

std::size_t DiscoveryResult::switches() const {
  std::size_t n = 0;
  for (const DiscoveredNode& d : nodes) n += d.type == mad::NodeInfo::kTypeSwitch;
  return n;
}

Discovery::Discovery(fabric::Hca& hca, uint8_t port, Options options)
    : hca_(hca), port_(port), options_(options) {
  fabric::Hca::AgentSpec spec;
  spec.port = port;
  spec.mgmt_class = mad::dr_smp::kClassDirectedRoute;
  spec.class_version = 1;
  agent_ = hca.register_agent(spec, this);
  if (agent_ == 0) throw std::runtime_error(hca.name() + ": cannot register a directed-route agent");
}

Discovery::~Discovery() {
  for (auto& [tid, f] : in_flight_) hca_.fabric().sim().cancel(f.timeout);
  hca_.unregister_agent(agent_);
}

void Discovery::start(std::function<void(const DiscoveryResult&)> done) {
  result_ = DiscoveryResult{};
  by_guid_.clear();
  link_seen_.clear();
  queue_.clear();
  done_ = std::move(done);
  running_ = true;
  result_.started = hca_.fabric().sim().now();
  enqueue(Request{Ask::NodeInfo, {}, 0, 0, UINT32_MAX, 0});
  pump();
}

void Discovery::pump() {
  while (in_flight_.size() < options_.window && !queue_.empty()) {
    Request r = std::move(queue_.front());
    queue_.pop_front();
    send(next_tid_++, r);
  }
  if (running_ && in_flight_.empty() && queue_.empty()) {
    running_ = false;
    result_.finished = hca_.fabric().sim().now();
    if (done_) done_(result_);
  }
}

void Discovery::send(uint32_t tid, Request& r) {
  std::array<uint8_t, 256> mad{};
  mad::dr_smp::DrRequest q;
  q.method = mad::dr_smp::kMethodGet;
  q.transaction_id = tid;
  q.attribute_id = r.ask == Ask::NodeInfo          ? mad::NodeInfo::kAttributeId
                   : r.ask == Ask::NodeDescription ? mad::NodeDescription::kAttributeId
                                                   : mad::PortInfo::kAttributeId;
  q.attribute_modifier = r.ask == Ask::PortInfo ? r.port : 0;
  mad::dr_smp::init_request(mad::SmpBuffer(mad.data(), 256), q, r.path);
  ++r.tries;
  ++result_.smps_sent;
  if (r.tries > 1) ++result_.retries;
  sim::Simulator& sim = hca_.fabric().sim();
  const sim::EventHandle h = sim.schedule(options_.timeout, [this, tid] { timed_out(tid); });
  in_flight_.insert_or_assign(tid, InFlight{r, h});
  fabric::MadAddress to;
  to.lid = 0xFFFF;
  hca_.send_mad(agent_, to, mad);
}

void Discovery::timed_out(uint32_t tid) {
  auto it = in_flight_.find(tid);
  if (it == in_flight_.end()) return;
  Request r = std::move(it->second.request);
  in_flight_.erase(it);
  if (r.tries <= options_.retries) send(next_tid_++, r);
  else ++result_.unanswered;
  pump();
}

void Discovery::on_mad(fabric::Port&, const fabric::MadAddress&, std::span<const uint8_t> mad) {
  const auto tid = static_cast<uint32_t>(wire::load_be64(&mad[8]));
  auto it = in_flight_.find(tid);
  if (it == in_flight_.end()) return;  // late answer to a retried request
  hca_.fabric().sim().cancel(it->second.timeout);
  const Request r = std::move(it->second.request);
  in_flight_.erase(it);
  const uint16_t status = mad::dr_smp::status(mad::ConstSmpBuffer(mad.data(), 256));
  const std::span<const uint8_t> data = mad.subspan(mad::dr_smp::kDataOffset, mad::dr_smp::kDataSize);
  if (status == 0) {
    switch (r.ask) {
      case Ask::NodeInfo: on_node_info(r, data); break;
      case Ask::NodeDescription:
        result_.nodes[r.node].description = mad::NodeDescription::unpack(data).text;
        break;
      case Ask::PortInfo: {
        const auto pi = mad::PortInfo::unpack(data);
        if (pi.port_physical_state == mad::phys_state::kLinkUp) {
          std::vector<uint8_t> path = result_.nodes[r.node].path;
          path.push_back(r.port);
          if (path.size() <= mad::dr_smp::kMaxHops) enqueue(Request{Ask::NodeInfo, std::move(path), 0, r.port, r.node, 0});
        }
        break;
      }
    }
  }
  pump();
}

void Discovery::on_node_info(const Request& r, std::span<const uint8_t> data) {
  const auto ni = mad::NodeInfo::unpack(data);
  const auto known = by_guid_.find(ni.node_guid);
  if (r.parent != UINT32_MAX)
    add_link(result_.nodes[r.parent].guid, r.port, ni.node_guid, ni.local_port_num);
  if (known != by_guid_.end()) return;
  const auto index = static_cast<uint32_t>(result_.nodes.size());
  by_guid_.emplace(ni.node_guid, index);
  result_.nodes.push_back(DiscoveredNode{ni.node_guid, ni.node_type, ni.num_ports, ni.port_guid, {}, r.path});
  enqueue(Request{Ask::NodeDescription, r.path, index, 0, 0, 0});
  if (ni.node_type == mad::NodeInfo::kTypeSwitch) {
    for (uint8_t p = 1; p <= ni.num_ports; ++p)
      if (p != ni.local_port_num || r.parent == UINT32_MAX) enqueue(Request{Ask::PortInfo, r.path, index, p, 0, 0});
  } else if (r.parent == UINT32_MAX) {
    // The prober itself: go out of the port we stand on.
    enqueue(Request{Ask::NodeInfo, {port_}, 0, port_, index, 0});
  }
}

void Discovery::add_link(uint64_t a, uint8_t ap, uint64_t b, uint8_t bp) {
  const auto key = std::min(std::pair{a, ap}, std::pair{b, bp});
  if (!link_seen_.insert(key).second) return;
  result_.links.push_back(DiscoveredLink{a, ap, b, bp});
}

}  // namespace ibfab::sm
