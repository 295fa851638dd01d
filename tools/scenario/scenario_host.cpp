#include "tools/scenario/scenario_host.h"

#include <algorithm>
#include <vector>

#include "fabric/mad/notice.h"
#include "fabric/mad/sa/inform_info.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::scenario {
namespace {

constexpr sim::Time kSaTimeout = sim::Time::ms(200);  // per try, 3 tries
constexpr unsigned kSaTries = 3;
constexpr uint8_t kReceivingStates = 0x1 | 0x2;       // Full, NonMember

wire::Gid mgid_of(const McastSpec& s) { return s.mgid == "0" ? wire::Gid{} : *wire::Gid::parse(s.mgid); }

}  // namespace

ScenarioHost::ScenarioHost(fabric::Hca& hca, uint8_t port) : hca_(hca), port_(port) {
  fabric::Hca::AgentSpec spec;
  spec.port = port;
  spec.mgmt_class = mad::kSaClass;
  spec.class_version = mad::kSaClassVersion;
  spec.methods[0] = uint64_t{1} << wire::mad_method::kReport;  // Reports from the SA; responses by TID
  agent_ = hca.register_agent(spec, this);
  qpn_ = hca.create_ud_qp(port, 0, 0, this);
}

ScenarioHost::~ScenarioHost() {
  for (auto& [tid, p] : pending_) hca_.fabric().sim().cancel(p.timeout);
  hca_.destroy_qp(qpn_);
  hca_.unregister_agent(agent_);
}

void ScenarioHost::join(const McastSpec& spec, Done done) {
  request(wire::mad_method::kSet, spec, spec.mask.value_or(mad::mcm_comp::kCreateRequiredMask), std::move(done));
}

void ScenarioHost::leave(const McastSpec& spec, Done done) {
  request(wire::mad_method::kDelete, spec, spec.mask.value_or(mad::mcm_comp::kJoinRequiredMask), std::move(done));
}

void ScenarioHost::request(uint8_t method, const McastSpec& spec, uint64_t mask, Done done) {
  const fabric::Port& port = hca_.port(port_);
  const uint32_t tid = next_tid_++;
  Pending p;
  p.mad.fill(0);
  mad::SaBuffer m(p.mad.data(), 256);
  mad::init_sa_request(m, method, mad::McMemberRecord::kAttributeId, tid, mask);
  mad::McMemberRecord rec;
  rec.mgid = mgid_of(spec);
  rec.port_gid = wire::Gid::from(port.gid_prefix, port.guid());
  rec.q_key = spec.qkey;
  rec.p_key = spec.pkey;
  rec.join_state = spec.join_state;
  rec.pack(mad::mutable_sa_data(m));
  send_request(p.mad, tid, std::move(done));
}

void ScenarioHost::send_request(std::array<uint8_t, 256> mad, uint32_t tid, Done done) {
  Pending p;
  p.mad = mad;
  p.done = std::move(done);
  pending_.emplace(tid, std::move(p));
  transmit(tid);
}

void ScenarioHost::subscribe(uint16_t trap, Done done) {
  const uint32_t tid = next_tid_++;
  std::array<uint8_t, 256> mad{};
  mad::SaBuffer m(mad.data(), 256);
  mad::init_sa_request(m, wire::mad_method::kSet, mad::InformInfo::kAttributeId, tid, 0);
  mad::InformInfo info;
  info.gid = wire::Gid{};  // all producers
  info.lid_range_begin = mad::inform_info::kAllLids;
  info.is_generic = 1;
  info.subscribe = mad::inform_info::kSubscribe;
  info.type = mad::inform_info::kAllTypes;
  info.trap_number = trap;
  info.producer_type = mad::inform_info::kAllProducers;
  info.pack(mad::mutable_sa_data(m));
  send_request(mad, tid, std::move(done));
}

void ScenarioHost::transmit(uint32_t tid) {
  Pending& p = pending_.at(tid);
  sim::Simulator& sim = hca_.fabric().sim();
  if (p.tries == 0) p.sent = sim.now();
  if (p.tries++ == kSaTries) {
    JoinResult r;
    r.status = JoinResult::kTimedOut;
    r.sent = p.sent;
    r.answered = sim.now();
    Done done = std::move(p.done);
    pending_.erase(tid);
    if (done) done(r);
    return;
  }
  p.timeout = sim.schedule(kSaTimeout, [this, tid] { transmit(tid); });
  const fabric::Port& port = hca_.port(port_);
  fabric::MadAddress to;
  to.lid = port.master_sm_lid;
  to.qpn = 1;
  to.qkey = 0x80010000;
  hca_.send_mad(agent_, to, p.mad);
}

void ScenarioHost::on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  mad::ConstSaBuffer m(mad.data(), 256);
  if (mad::sa_method(m) == wire::mad_method::kReport) {
    // A trap Report from the SA: count it by trap number, acknowledge it.
    const auto notice = mad::Notice::unpack(mad::sa_data(m));
    ++reports_[notice.trap_number];
    std::array<uint8_t, 256> resp;
    std::copy(mad.begin(), mad.begin() + 256, resp.begin());
    resp[3] = wire::mad_method::kReportResp;
    hca_.send_mad(agent_, from, resp);
    return;
  }
  const auto tid = static_cast<uint32_t>(mad::sa_tid(m));
  auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  hca_.fabric().sim().cancel(it->second.timeout);
  JoinResult r;
  r.status = mad::sa_status(m);
  r.sent = it->second.sent;
  r.answered = hca_.fabric().sim().now();
  const auto rec = mad::McMemberRecord::unpack(mad::sa_data(m));
  r.mgid = rec.mgid;
  r.mlid = rec.mlid;
  r.join_state = rec.join_state;
  const std::array<uint8_t, 256> request = it->second.mad;
  Done done = std::move(it->second.done);
  pending_.erase(it);
  if (r.status == 0 && wire::load_be16(&request[16]) == mad::McMemberRecord::kAttributeId) answered(request, r);
  if (done) done(r);
}

void ScenarioHost::answered(const std::array<uint8_t, 256>& request, const JoinResult& r) {
  mad::ConstSaBuffer req(request.data(), 256);
  const auto asked = mad::McMemberRecord::unpack(mad::sa_data(req));
  Group& g = groups_[r.mgid];
  if (mad::sa_method(req) == wire::mad_method::kDelete) {
    g.state = static_cast<uint8_t>(g.state & ~asked.join_state);
  } else {
    g.mlid = r.mlid;
    g.qkey = asked.q_key;
    g.state |= asked.join_state;
  }
  const bool receive = (g.state & kReceivingStates) != 0;
  if (receive && !g.attached) {
    hca_.set_qkey(qpn_, g.qkey);
    g.attached = hca_.attach_mcast(qpn_, r.mgid.raw, g.mlid) == 0;
  } else if (!receive && g.attached) {
    hca_.detach_mcast(qpn_, r.mgid.raw, g.mlid);
    g.attached = false;
  }
  if (g.state == 0) groups_.erase(r.mgid);
}

bool ScenarioHost::send(const McastSpec& spec) {
  auto it = groups_.find(mgid_of(spec));
  if (it == groups_.end()) return false;
  const Group g = it->second;
  const wire::Gid mgid = it->first;
  sim::Simulator& sim = hca_.fabric().sim();
  for (uint32_t i = 0; i < spec.count; ++i) {
    sim.schedule(sim::Time::us(i), [this, g, mgid, size = spec.size] {
      if (payload_.size() < size) payload_.assign(size, 0xA5);  // send_ud copies it into the packet
      fabric::UdSend s;
      s.dlid = g.mlid;
      s.dest_qp = 0xFFFFFF;
      s.qkey = g.qkey;
      s.global = true;
      s.dgid = mgid.raw;
      s.payload = std::span<const uint8_t>(payload_.data(), size);
      if (hca_.send_ud(qpn_, s)) ++sent_;
    });
  }
  return true;
}

bool ScenarioHost::on_receive(const fabric::UdMessage& msg) {
  if (msg.multicast) ++received_;
  return true;
}

}  // namespace ibfab::scenario
