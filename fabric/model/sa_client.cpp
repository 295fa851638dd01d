#include "fabric/model/sa_client.h"

#include <algorithm>
#include <cerrno>

#include "fabric/mad/sa/sa_mad.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/byte_cursor.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::fabric {

SaRetry SaRetry::kernel(sim::Time total) {
  constexpr unsigned kRetries = 10;  // sa_query.c's nmbr_sa_query_retries
  const sim::Time per_try = total / kRetries;
  if (per_try < sim::Time::ms(1)) {
    // sa_query.c's small-timeout case: T retries of 1 ms.
    const int64_t ms = total.ps() / sim::Time::ms(1).ps();
    return {sim::Time::ms(1), static_cast<unsigned>(ms > 0 ? ms : 1), kTick};
  }
  return {per_try, kRetries, kTick};
}

sim::Time SaRetry::wait(uint64_t seed, uint64_t port_guid, uint32_t tid, unsigned attempt) const {
  if (spread <= sim::Time::zero()) return per_try;
  const uint64_t draw = sim::mix64(sim::mix64(seed, port_guid), uint64_t{tid} << 8 | (attempt & 0xFF));
  return per_try + sim::Time::ps(static_cast<int64_t>(draw % static_cast<uint64_t>(spread.ps())));
}

SaClient::SaClient(Hca& hca, uint8_t port) : hca_(hca), port_(port) {
  // No unsolicited methods: answers come by TID.
  agent_ = hca.register_agent({.port = port, .mgmt_class = mad::kSaClass, .class_version = mad::kSaClassVersion}, this);
}

SaClient::~SaClient() {
  for (auto& [tid, p] : pending_) hca_.fabric().sim().cancel(p.timer);
  hca_.unregister_agent(agent_);
}

uint64_t SaClient::send(uint8_t method, uint16_t attribute, uint64_t mask, std::span<const uint8_t> record,
                        SaRetry retry, Done done) {
  const uint32_t tid = next_tid_++;
  if (next_tid_ == 0) next_tid_ = 1;
  Pending& p = pending_[tid];
  mad::SaBuffer m(p.mad.data(), 256);
  mad::init_sa_request(m, method, attribute, tid, mask);
  const auto data = mad::mutable_sa_data(m);
  std::copy_n(record.begin(), std::min(record.size(), data.size()), data.begin());
  p.retry = retry;
  p.done = std::move(done);
  transmit(tid);
  return tid;
}

void SaClient::cancel(uint64_t ticket) {
  auto it = pending_.find(static_cast<uint32_t>(ticket));
  if (it == pending_.end()) return;
  hca_.fabric().sim().cancel(it->second.timer);
  pending_.erase(it);
}

void SaClient::transmit(uint32_t tid) {
  Pending& p = pending_.at(tid);
  const Port& port = hca_.port(port_);
  if (port.master_sm_lid == 0) {
    // No SM yet: fail now, as ib_sa does without an SM address handle.
    p.timer = hca_.fabric().sim().schedule(sim::Time::zero(), [this, tid] { finish(tid, -ENETUNREACH, {}); });
    return;
  }
  MadAddress to;
  to.lid = port.master_sm_lid;
  to.sl = port.master_sm_sl;
  to.qpn = 1;
  // The default partition's entry, as sa_query.c's update_sm_ah takes it
  // (index 0 when the table has none).
  to.pkey_index = static_cast<uint16_t>(std::max(0, port.find_pkey(0xFFFF)));
  hca_.send_mad(agent_, to, p.mad);
  ++transmissions_;
  sim::Simulator& sim = hca_.fabric().sim();
  const sim::Time wait = p.retry.wait(sim.rng().seed(), port.guid(), tid, p.attempt++);
  p.timer = sim.schedule(wait, [this, tid] { expire(tid); });
}

void SaClient::expire(uint32_t tid) {
  Pending& p = pending_.at(tid);
  if (p.attempt > p.retry.retries) return finish(tid, -ETIMEDOUT, {});
  transmit(tid);
}

void SaClient::on_mad(Port&, const MadAddress&, std::span<const uint8_t> mad) {
  if (mad.size() < wire::kMadSize || !(mad[3] & wire::mad_method::kResponseBit)) return;
  const auto tid = static_cast<uint32_t>(wire::load_be64(&mad[8]));
  auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  hca_.fabric().sim().cancel(it->second.timer);
  const uint16_t status = wire::load_be16(&mad[4]);
  finish(tid, status == 0 ? 0 : -EINVAL, mad);
}

void SaClient::finish(uint32_t tid, int status, std::span<const uint8_t> mad) {
  auto it = pending_.find(tid);
  if (it == pending_.end()) return;
  Done done = std::move(it->second.done);
  pending_.erase(it);
  if (done) done(status, mad);
}

}  // namespace ibfab::fabric
