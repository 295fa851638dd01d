#include "tools/scenario/scenario_host.h"

#include <algorithm>
#include <array>
#include <cerrno>
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

// As the kernel's multicast.c asks ib_sa: 3000 ms in all, spent as
// fabric::SaRetry::kernel spends it (11 tries of 300 ms and up to a tick).
const fabric::SaRetry kSaRetry = fabric::SaRetry::kernel(sim::Time::ms(3000));
constexpr uint8_t kReceivingStates = 0x1 | 0x2;       // Full, NonMember

wire::Gid mgid_of(const McastSpec& s) { return s.mgid == "0" ? wire::Gid{} : *wire::Gid::parse(s.mgid); }

// The SA client's outcome as a scenario reports it.
JoinResult result_of(int status, std::span<const uint8_t> mad, sim::Time sent, sim::Time now) {
  JoinResult r;
  r.sent = sent;
  r.answered = now;
  if (mad.empty()) {
    r.status = status == -ENETUNREACH ? JoinResult::kNoSm : JoinResult::kTimedOut;
    return r;
  }
  mad::ConstSaBuffer m(mad.data(), mad.size());
  r.status = mad::sa_status(m);
  return r;
}

}  // namespace

ScenarioHost::ScenarioHost(fabric::Hca& hca, uint8_t port) : hca_(hca), port_(port), sa_(hca, port) {
  agent_ = hca.register_agent({.port = port,
                                .mgmt_class = mad::kSaClass,
                                .class_version = mad::kSaClassVersion,
                                .methods = {uint64_t{1} << wire::mad_method::kReport, 0}},
                               this);
  qpn_ = hca.create_ud_qp(port, 0, 0, this);
}

ScenarioHost::~ScenarioHost() {
  hca_.destroy_qp(qpn_);
  for (const uint32_t q : lingering_) hca_.destroy_qp(q);
  hca_.unregister_agent(agent_);
}

void ScenarioHost::join(const McastSpec& spec, Done done) {
  request(wire::mad_method::kSet, spec, spec.mask.value_or(mad::mcm_comp::kCreateRequiredMask), std::move(done));
}

void ScenarioHost::leave(const McastSpec& spec, Done done) {
  // As rdma_leave_multicast: the QP is detached at the call, before the SA
  // hears of the leave, once no receiving membership would remain.
  if (auto it = groups_.find(mgid_of(spec)); it != groups_.end()) {
    Group& g = it->second;
    if (g.attached && !(g.state & ~spec.join_state & kReceivingStates)) {
      hca_.detach_mcast(qpn_, it->first.raw, g.mlid);
      g.attached = false;
    }
  }
  request(wire::mad_method::kDelete, spec, spec.mask.value_or(mad::mcm_comp::kJoinRequiredMask), std::move(done));
}

void ScenarioHost::request(uint8_t method, const McastSpec& spec, uint64_t mask, Done done) {
  const fabric::Port& port = hca_.port(port_);
  mad::McMemberRecord rec;
  rec.mgid = mgid_of(spec);
  rec.port_gid = wire::Gid::from(port.gid_prefix, port.guid());
  rec.q_key = spec.qkey;
  rec.p_key = spec.pkey;
  rec.join_state = spec.join_state;
  std::array<uint8_t, mad::McMemberRecord::kSize> packed{};
  rec.pack(packed);
  sim::Simulator& sim = hca_.fabric().sim();
  sa_.send(method, mad::McMemberRecord::kAttributeId, mask, packed, kSaRetry,
           [this, &sim, method, join_state = spec.join_state, qkey = spec.qkey, sent = sim.now(),
            done = std::move(done)](int status, std::span<const uint8_t> mad) {
             JoinResult r = result_of(status, mad, sent, sim.now());
             if (!mad.empty()) {
               mad::ConstSaBuffer m(mad.data(), mad.size());
               const auto got = mad::McMemberRecord::unpack(mad::sa_data(m));
               r.mgid = got.mgid;
               r.mlid = got.mlid;
               r.join_state = got.join_state;
               r.p_key = got.p_key;
             }
             observe(sim::kind_tag("sa"), uint64_t{method} << 16 | mad::McMemberRecord::kAttributeId,
                     uint64_t{r.status} << 48 | uint64_t{r.join_state} << 40 | uint64_t{r.p_key} << 16 | r.mlid,
                     0, mad);
             if (r.status == 0) answered(method, r, join_state, qkey);
             if (done) done(r);
           });
}

void ScenarioHost::subscribe(uint16_t trap, Done done) {
  mad::InformInfo info;
  info.gid = wire::Gid{};  // all producers
  info.lid_range_begin = mad::inform_info::kAllLids;
  info.is_generic = 1;
  info.subscribe = mad::inform_info::kSubscribe;
  info.type = mad::inform_info::kAllTypes;
  info.trap_number = trap;
  info.producer_type = mad::inform_info::kAllProducers;
  std::array<uint8_t, mad::InformInfo::kSize> packed{};
  info.pack(packed);
  sim::Simulator& sim = hca_.fabric().sim();
  sa_.send(wire::mad_method::kSet, mad::InformInfo::kAttributeId, 0, packed, kSaRetry,
           [this, &sim, sent = sim.now(), done = std::move(done)](int status, std::span<const uint8_t> mad) {
             const JoinResult r = result_of(status, mad, sent, sim.now());
             observe(sim::kind_tag("sa"), uint64_t{wire::mad_method::kSet} << 16 | mad::InformInfo::kAttributeId,
                     uint64_t{r.status} << 48, 0, mad);
             if (done) done(r);
           });
}

void ScenarioHost::on_mad(fabric::Port&, const fabric::MadAddress& from, std::span<const uint8_t> mad) {
  // A trap Report from the SA (the only method this agent takes): count it
  // by trap number, acknowledge it.
  mad::ConstSaBuffer m(mad.data(), mad.size());
  const auto notice = mad::Notice::unpack(mad::sa_data(m));
  ++reports_[notice.trap_number];
  observe(sim::kind_tag("rprt"), notice.trap_number, 0, 0, mad);
  std::array<uint8_t, 256> resp;
  std::copy(mad.begin(), mad.begin() + 256, resp.begin());
  resp[3] = wire::mad_method::kReportResp;
  hca_.send_mad(agent_, from, resp);
}

void ScenarioHost::answered(uint8_t method, const JoinResult& r, uint8_t join_state, uint32_t qkey) {
  Group& g = groups_[r.mgid];
  if (method == wire::mad_method::kDelete) {
    g.state = static_cast<uint8_t>(g.state & ~join_state);
  } else {
    g.mlid = r.mlid;
    g.qkey = qkey;
    joined_mlid_[r.mgid] = r.mlid;
    g.state |= join_state;
    // The P_Key index of the group's partition, as rdma_cm takes it for a
    // join: the one QP follows the group it last joined, as its Q_Key does.
    const int index = hca_.port(port_).match_pkey(static_cast<uint16_t>(r.p_key | 0x8000));
    if (index >= 0) hca_.set_qp_port(qpn_, port_, static_cast<uint16_t>(index));
  }
  const bool receive = (g.state & kReceivingStates) != 0;
  if (receive && !g.attached) {
    qkey_ = g.qkey;
    hca_.set_qkey(qpn_, qkey_);
    g.attached = hca_.attach_mcast(qpn_, r.mgid.raw, g.mlid) == 0;
  } else if (!receive && g.attached) {
    hca_.detach_mcast(qpn_, r.mgid.raw, g.mlid);
    g.attached = false;
  }
  if (g.state == 0) groups_.erase(r.mgid);
}

ScenarioHost::Posted ScenarioHost::send(const McastSpec& spec) {
  auto it = groups_.find(mgid_of(spec));
  if (it == groups_.end()) return Posted::NotJoined;
  fabric::UdSend s;
  s.dlid = it->second.mlid;
  s.dest_qp = 0xFFFFFF;
  s.qkey = it->second.qkey;
  s.global = true;
  s.dgid = it->first.raw;
  return post(s, spec);
}

ScenarioHost::Posted ScenarioHost::send_to(const ScenarioHost& peer, const McastSpec& spec) {
  const fabric::Port& port = peer.hca_.port(peer.port_);
  fabric::UdSend s;
  s.dlid = port.lid;
  s.dest_qp = peer.qpn_;
  s.qkey = peer.qkey_;
  s.global = spec.grh;
  if (spec.grh) s.dgid = wire::Gid::from(port.gid_prefix, port.guid()).raw;
  return post(s, spec);
}

ScenarioHost::Posted ScenarioHost::post(const fabric::UdSend& wr, const McastSpec& spec) {
  // As the served UD QP takes a post (api/verbs/verbs_post.cpp): refused in
  // RESET, INIT and RTR; taken in ERR and completed as flushed.
  if (state_ != QpStateName::Rts) {
    const bool err = state_ == QpStateName::Err;
    observe(sim::kind_tag("post"), uint64_t{wr.dest_qp} << 32 | static_cast<uint64_t>(state_),
            err ? 0 : EINVAL, spec.count, {});
    return err ? Posted::Flushed : Posted::NotReady;
  }
  if (spec.count == 0) return Posted::Sent;
  uint32_t slot;
  if (free_posts_.empty()) {
    slot = static_cast<uint32_t>(posts_.size());
    posts_.emplace_back();
  } else {
    slot = free_posts_.back();
    free_posts_.pop_back();
  }
  posts_[slot] = Post{wr, spec.size, spec.count, epoch_};
  sim::Simulator& sim = hca_.fabric().sim();
  for (uint32_t i = 0; i < spec.count; ++i) sim.schedule(sim::Time::us(i), [this, slot] { send_one(slot); });
  return Posted::Sent;
}

void ScenarioHost::send_one(uint32_t slot) {
  Post& p = posts_[slot];
  if (p.epoch == epoch_) {  // the QP that took it is still in RTS
    if (payload_.size() < p.size) payload_.assign(p.size, 0xA5);  // send_ud copies it into the packet
    p.wr.payload = std::span<const uint8_t>(payload_.data(), p.size);
    if (hca_.send_ud(qpn_, p.wr)) ++sent_;
  } else {
    observe(sim::kind_tag("flsh"), p.wr.dest_qp, p.epoch, epoch_, {});
  }
  if (--p.left == 0) free_posts_.push_back(slot);
}

uint16_t ScenarioHost::mlid_of(const wire::Gid& mgid) const {
  auto it = joined_mlid_.find(mgid);
  return it == joined_mlid_.end() ? 0 : it->second;
}

int ScenarioHost::attach(const wire::Gid& mgid) { return attachment(mgid, true); }

int ScenarioHost::detach(const wire::Gid& mgid) { return attachment(mgid, false); }

int ScenarioHost::attachment(const wire::Gid& mgid, bool attach) {
  const uint16_t mlid = mlid_of(mgid);
  const int e = attach ? hca_.attach_mcast(qpn_, mgid.raw, mlid) : hca_.detach_mcast(qpn_, mgid.raw, mlid);
  if (auto g = groups_.find(mgid); e == 0 && g != groups_.end() && g->second.mlid == mlid) g->second.attached = attach;
  observe(attach ? sim::kind_tag("atch") : sim::kind_tag("dtch"), mlid, static_cast<uint64_t>(e), qpn_, mgid.raw);
  return e;
}

int ScenarioHost::set_qp_state(QpStateName next) {
  using S = QpStateName;
  const bool allowed = next == S::Reset || next == S::Err || (state_ == S::Reset && next == S::Init) ||
                       (state_ == S::Init && (next == S::Init || next == S::Rtr)) ||
                       (state_ == S::Rtr && next == S::Rts) || (state_ == S::Rts && next == S::Rts);
  const int e = allowed ? 0 : EINVAL;
  if (allowed) {
    if (next == S::Reset || next == S::Err) ++epoch_;
    state_ = next;
  }
  observe(sim::kind_tag("qpst"), static_cast<uint64_t>(next), static_cast<uint64_t>(e), qpn_, {});
  return e;
}

void ScenarioHost::recreate_qp(bool block_self_mcast_lb) {
  const uint16_t pkey_index = hca_.qp_pkey_index(qpn_);
  // As uverbs: a QP still attached is not destroyed (EBUSY, which
  // rdma_destroy_qp ignores); it lives on in RTS and keeps receiving.
  if (hca_.attached(qpn_)) lingering_.push_back(qpn_);
  else hca_.destroy_qp(qpn_);
  qpn_ = hca_.create_ud_qp(port_, qkey_, pkey_index, this, block_self_mcast_lb);
  state_ = QpStateName::Rts;
  ++epoch_;
  for (auto& [mgid, g] : groups_) g.attached = false;
  observe(sim::kind_tag("mkqp"), qpn_, block_self_mcast_lb, pkey_index, {});
}

bool ScenarioHost::on_receive(const fabric::UdMessage& msg) {
  // As the served UD QP: a QP not in RTR or RTS takes nothing (the HCA
  // drops and counts the message).
  if (msg.dest_qp == qpn_ && state_ != QpStateName::Rtr && state_ != QpStateName::Rts) return false;
  ++received_;
  // Whether a GRH came (IBV_WC_GRH): multicast always has one, so it is
  // folded for unicast only.
  const uint64_t unicast_grh = !msg.multicast && msg.grh.has_value();
  observe(sim::kind_tag("recv"), uint64_t{msg.src_qp} << 32 | msg.dest_qp,
          uint64_t{msg.slid} << 48 | uint64_t{msg.pkey_index} << 32 | uint64_t{msg.sl} << 24 |
              uint64_t{msg.dlid_path_bits} << 16 | uint64_t{msg.port} << 8 | unicast_grh << 3 | msg.multicast << 2 |
              msg.solicited << 1 | msg.immediate.has_value(),
          msg.immediate.value_or(0), msg.payload);
  return true;
}

void ScenarioHost::observe(uint32_t kind, uint64_t a, uint64_t b, uint64_t c, std::span<const uint8_t> bytes) const {
  observe_host(hca_, kind, a, b, c, bytes);
}

void observe_host(const fabric::Hca& hca, uint32_t kind, uint64_t a, uint64_t b, uint64_t c,
                  std::span<const uint8_t> bytes) {
  sim::Simulator& sim = hca.fabric().sim();
  sim::RunDigest* d = sim.trace().digest();
  if (!d) return;
  d->event(sim.now(), hca.index(), kind);
  d->fold(a);
  d->fold(b);
  d->fold(c);
  d->fold_bytes(bytes);
}

}  // namespace ibfab::scenario
