// The SubnetManager's election state machine: start/stop, SMInfo Set
// modifiers, Traps, standby polling and light sweeps (the contract is in
// subnet_manager.h; the heavy sweep is in subnet_manager.cpp).
#include <array>
#include <span>
#include <vector>

#include "fabric/mad/dr_smp.h"
#include "fabric/mad/switch_info.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/mad_header.h"
#include "sm/subnet_manager.h"

namespace ibfab::sm {
namespace {

}  // namespace

// --- state machine ---

void SubnetManager::start() {
  stopped_ = false;
  running_ = true;
  if (!sm_info_agent_) {
    SmInfoAgent::Handlers h;
    h.info = [this] { return sm_info(); };
    h.set = [this](uint32_t modifier, const mad::SmInfo& from) { return on_sm_info_set(modifier, from); };
    h.trap = [this](const mad::Notice& n, const fabric::MadAddress&) { on_trap(n); };
    sm_info_agent_ = std::make_unique<SmInfoAgent>(hca_, port_, std::move(h));
    hca_.set_is_sm(port_, true);
  }
  sweep();
}

void SubnetManager::stop() {
  if (stopped_) return;
  stopped_ = true;
  running_ = false;
  state_ = mad::sm_state::kNotActive;
  up_ = false;
  hca_.fabric().sim().cancel(timer_);
  sm_info_agent_.reset();
  hca_.set_is_sm(port_, false);
  sa_->set_serving(false);
  stamp_report();
}

void SubnetManager::arm_timer(sim::Time delay) {
  sim::Simulator& s = hca_.fabric().sim();
  s.cancel(timer_);
  timer_ = s.schedule(delay, [this] { on_timer(); });
}

void SubnetManager::on_timer() {
  if (stopped_ || sweeping_ || light_sweeping_) return;
  switch (state_) {
    case mad::sm_state::kMaster:
      if (resweep_) {
        resweep_ = false;
        sweep();
      } else {
        light_sweep();
      }
      break;
    case mad::sm_state::kStandby: poll_master(); break;
    case mad::sm_state::kDiscovering: sweep(); break;
    default: break;
  }
}

void SubnetManager::request_heavy_sweep() {
  if (stopped_ || state_ != mad::sm_state::kMaster) return;
  resweep_ = true;
  if (!sweeping_ && !light_sweeping_) arm_timer(sim::Time::zero());
}

void SubnetManager::become_master() {
  if (state_ == mad::sm_state::kMaster) return;
  state_ = mad::sm_state::kMaster;
  master_since_ = hca_.fabric().sim().now();
  reregister_ = true;  // clients rejoin what the new master knows
  // The LIDs ports hold now are the truth: keep them (assign_lids adopts).
  lids_.clear();
  next_lid_ = 1;
}

void SubnetManager::become_standby(const RemoteSm& master) {
  state_ = mad::sm_state::kStandby;
  handing_over_ = false;
  up_ = false;
  sa_->set_serving(false);
  polled_ = master;
  poll_failures_ = 0;
  if (sweeping_) {
    sweeping_ = false;
    report_.ok = true;
  }
  stamp_report();
  if (running_) arm_timer(options_.poll_interval);
}

const SubnetManager::RemoteSm* SubnetManager::remote_by_guid(uint64_t guid) const {
  for (const RemoteSm& r : remotes_)
    if (r.info.guid == guid) return &r;
  if (polled_.info.guid == guid && !polled_.path.empty()) return &polled_;
  return nullptr;
}

void SubnetManager::poll_master() {
  ++polls_;
  sender_.get(polled_.path, mad::SmInfo::kAttributeId, 0, [this](std::span<const uint8_t> smp, uint16_t st) {
    if (stopped_ || state_ != mad::sm_state::kStandby) return;
    const bool alive = !smp.empty() && st == 0 &&
                       mad::SmInfo::unpack(smp_data(smp)).sm_state == mad::sm_state::kMaster;
    if (!alive) return poll_failed();
    poll_failures_ = 0;
    stamp_report();
    if (running_) arm_timer(options_.poll_interval);
  });
}

void SubnetManager::poll_failed() {
  ++failed_polls_;
  stamp_report();
  if (++poll_failures_ < options_.poll_retries) {
    if (running_) arm_timer(options_.poll_interval);
    return;
  }
  // The master is gone: discover again, and take over unless someone
  // better is found.
  poll_failures_ = 0;
  state_ = mad::sm_state::kDiscovering;
  sweep();
}

void SubnetManager::send_sm_info_set(const std::vector<uint8_t>& path, uint32_t modifier) {
  std::array<uint8_t, 64> b{};
  sm_info().pack(b);
  sender_.set(path, mad::SmInfo::kAttributeId, modifier, b, [this, modifier](std::span<const uint8_t> smp, uint16_t st) {
    if (modifier == mad::sm_info_modifier::kHandover && (smp.empty() || st != 0)) handing_over_ = false;
  });
}

void SubnetManager::hand_over_if_outranked() {
  if (!still_master() || handing_over_) return;
  const mad::SmInfo me = sm_info();
  const RemoteSm* best = nullptr;
  for (const RemoteSm& r : remotes_)
    if (r.info.sm_state == mad::sm_state::kStandby && mad::sm_outranks(r.info, me) &&
        (!best || mad::sm_outranks(r.info, best->info)))
      best = &r;
  if (!best) return;
  handing_over_ = true;
  send_sm_info_set(best->path, mad::sm_info_modifier::kHandover);
}

uint16_t SubnetManager::on_sm_info_set(uint32_t modifier, const mad::SmInfo& from) {
  namespace mod = mad::sm_info_modifier;
  switch (modifier) {
    case mod::kHandover: {
      // Only a Standby takes mastership; it acknowledges, then sweeps as master.
      const RemoteSm* old = remote_by_guid(from.guid);
      if (state_ != mad::sm_state::kStandby || !old) return wire::mad_status::kInvalidAttrValue;
      send_sm_info_set(old->path, mod::kAcknowledge);
      become_master();
      request_heavy_sweep();
      stamp_report();
      return 0;
    }
    case mod::kAcknowledge: {
      const RemoteSm* now_master = remote_by_guid(from.guid);
      if (!handing_over_ || !now_master) return wire::mad_status::kInvalidAttrValue;
      RemoteSm m = *now_master;
      m.info.sm_state = mad::sm_state::kMaster;
      become_standby(m);
      return 0;
    }
    case mod::kDisable:
      state_ = mad::sm_state::kNotActive;
      up_ = false;
      sa_->set_serving(false);
      hca_.fabric().sim().cancel(timer_);
      stamp_report();
      return 0;
    case mod::kStandby:
      if (state_ == mad::sm_state::kMaster) return wire::mad_status::kInvalidAttrValue;
      if (const RemoteSm* r = remote_by_guid(from.guid)) {
        become_standby(*r);
      } else {
        state_ = mad::sm_state::kStandby;
        stamp_report();
      }
      return 0;
    case mod::kDiscover:
      if (state_ != mad::sm_state::kNotActive) return wire::mad_status::kInvalidAttrValue;
      state_ = mad::sm_state::kDiscovering;
      sweep();
      return 0;
    default: return wire::mad_status::kInvalidAttrValue;
  }
}

void SubnetManager::on_trap(const mad::Notice& n) {
  // Trap 128 (a switch's link state changed): the master re-sweeps.
  if (n.is_generic && n.trap_number == mad::trap_number::kLinkStateChanged) request_heavy_sweep();
}

// --- light sweep ---

void SubnetManager::light_sweep() {
  if (!still_master() || sweeping_ || light_sweeping_) return;
  light_sweeping_ = true;
  light_change_ = false;
  ++light_sweeps_;
  for (const std::vector<uint8_t>& path : subnet_.switch_paths) {
    sender_.get(path, mad::SwitchInfo::kAttributeId, 0, [this, path](std::span<const uint8_t> smp, uint16_t st) {
      if (smp.empty() || st != 0) {
        light_change_ = true;  // a switch that no longer answers
        return;
      }
      const mad::SwitchInfo si = mad::SwitchInfo::unpack(smp_data(smp));
      if (!si.port_state_change) return;
      light_change_ = true;
      std::array<uint8_t, 64> b{};
      si.pack(b);  // PortStateChange = 1 writes it clear
      sender_.set(path, mad::SwitchInfo::kAttributeId, 0, b, {});
    });
  }
  for (std::size_t i = 0; i < remotes_.size(); ++i) {
    sender_.get(remotes_[i].path, mad::SmInfo::kAttributeId, 0, [this, i](std::span<const uint8_t> smp, uint16_t st) {
      if (i >= remotes_.size()) return;
      remotes_[i].info.sm_state = smp.empty() || st != 0 ? mad::sm_state::kNotActive
                                                         : mad::SmInfo::unpack(smp_data(smp)).sm_state;
    });
  }
  sender_.when_idle([this] {
    light_sweeping_ = false;
    if (!still_master()) return;
    std::erase_if(remotes_, [](const RemoteSm& r) { return r.info.sm_state == mad::sm_state::kNotActive; });
    stamp_report();
    if (light_change_ || resweep_) {
      resweep_ = false;
      return sweep();
    }
    hand_over_if_outranked();
    if (running_) arm_timer(options_.sweep_interval);
  });
}

}  // namespace ibfab::sm
