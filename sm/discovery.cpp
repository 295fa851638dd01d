#include "sm/discovery.h"

#include <algorithm>

#include "fabric/mad/dr_smp.h"
#include "fabric/mad/node_description.h"
#include "fabric/mad/node_info.h"
#include "fabric/mad/port_info.h"
#include "fabric/model/fabric.h"

namespace ibfab::sm {
namespace {

constexpr uint32_t kNoParent = UINT32_MAX;

}  // namespace

std::size_t DiscoveryResult::switches() const {
  return static_cast<std::size_t>(std::count_if(nodes.begin(), nodes.end(),
                                                [](const DiscoveredNode& d) { return d.is_switch(); }));
}

void Discovery::start(std::function<void(const DiscoveryResult&)> done) {
  result_ = DiscoveryResult{};
  by_guid_.clear();
  link_seen_.clear();
  done_ = std::move(done);
  running_ = true;
  result_.started = sender_.hca().fabric().sim().now();
  sent_at_start_ = sender_.sent();
  retries_at_start_ = sender_.retries();
  unanswered_at_start_ = sender_.unanswered();
  node_info({}, kNoParent, 0);
  sender_.when_idle([this] {
    running_ = false;
    result_.finished = sender_.hca().fabric().sim().now();
    result_.smps_sent = sender_.sent() - sent_at_start_;
    result_.retries = sender_.retries() - retries_at_start_;
    result_.unanswered = sender_.unanswered() - unanswered_at_start_;
    if (done_) done_(result_);
  });
}

void Discovery::node_info(std::span<const uint8_t> path, uint32_t parent, uint8_t parent_port) {
  if (path.size() > mad::dr_smp::kMaxHops) return;
  sender_.get(path, mad::NodeInfo::kAttributeId, 0, [this, parent, parent_port](std::span<const uint8_t> smp, uint16_t status) {
    if (smp.empty() || status != 0) return;
    // The answer carries the directed route it was sent on.
    on_node_info(DrRoute::of_smp(smp).span(), parent, parent_port, smp_data(smp));
  });
}

void Discovery::on_node_info(std::span<const uint8_t> path, uint32_t parent, uint8_t parent_port,
                             std::span<const uint8_t> data) {
  const auto ni = mad::NodeInfo::unpack(data);
  if (parent != kNoParent) add_link(result_.nodes[parent].guid, parent_port, ni.node_guid, ni.local_port_num);
  auto known = by_guid_.find(ni.node_guid);
  if (known != by_guid_.end()) {
    DiscoveredNode& n = result_.nodes[known->second];
    if (!n.is_switch() && ni.local_port_num < n.port_guids.size()) n.port_guids[ni.local_port_num] = ni.port_guid;
    return;
  }
  const auto index = static_cast<uint32_t>(result_.nodes.size());
  by_guid_.emplace(ni.node_guid, index);
  DiscoveredNode n;
  n.guid = ni.node_guid;
  n.type = ni.node_type;
  n.num_ports = ni.num_ports;
  n.system_guid = ni.system_image_guid;
  n.device_id = ni.device_id;
  n.vendor_id = ni.vendor_id;
  n.partition_cap = ni.partition_cap;
  n.path.assign(path.begin(), path.end());
  n.entry_port = ni.local_port_num;
  n.info = ni;
  n.port_guids.assign(n.num_ports + 1u, 0);
  if (n.is_switch()) n.port_guids[0] = ni.node_guid;
  else if (ni.local_port_num <= n.num_ports) n.port_guids[ni.local_port_num] = ni.port_guid;
  result_.nodes.push_back(std::move(n));

  sender_.get(path, mad::NodeDescription::kAttributeId, 0, [this, index](std::span<const uint8_t> smp, uint16_t st) {
    if (!smp.empty() && st == 0) result_.nodes[index].description = mad::NodeDescription::unpack(smp_data(smp)).text;
  });
  if (ni.node_type == mad::NodeInfo::kTypeSwitch) {
    result_.nodes[index].port_info.assign(ni.num_ports + 1u, mad::PortInfo{});
    result_.nodes[index].port_info_read.assign(ni.num_ports + 1u, false);
    for (uint8_t p = 1; p <= ni.num_ports; ++p) {
      if (p == ni.local_port_num && parent != kNoParent) continue;
      sender_.get(path, mad::PortInfo::kAttributeId, p, [this, index, p](std::span<const uint8_t> smp, uint16_t st) {
        if (smp.empty() || st != 0) return;
        const mad::PortInfo pi = mad::PortInfo::unpack(smp_data(smp));
        result_.nodes[index].port_info[p] = pi;
        result_.nodes[index].port_info_read[p] = true;
        if (pi.port_physical_state != mad::phys_state::kLinkUp) return;
        DrRoute next(result_.nodes[index].path);
        if (next.hops == mad::dr_smp::kMaxHops) return;  // one hop too far
        next.port[next.hops++] = p;
        node_info(next.span(), index, p);
      });
    }
  } else if (parent == kNoParent) {
    // The prober itself: go out of the port we stand on.
    const uint8_t out = sender_.port();
    node_info(std::span<const uint8_t>(&out, 1), index, out);
  }
}

void Discovery::add_link(uint64_t a, uint8_t ap, uint64_t b, uint8_t bp) {
  const auto key = std::min(std::pair{a, ap}, std::pair{b, bp});
  if (!link_seen_.insert(key).second) return;
  result_.links.push_back(DiscoveredLink{a, ap, b, bp});
}

}  // namespace ibfab::sm
