#include "sm/smp_sender.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "fabric/mad/dr_smp.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::sm {

SmpSender::SmpSender(fabric::Hca& hca, uint8_t port, Options options) : hca_(hca), port_(port), options_(options) {
  fabric::Hca::AgentSpec spec;
  spec.port = port;
  spec.mgmt_class = mad::dr_smp::kClassDirectedRoute;
  spec.class_version = 1;
  agent_ = hca.register_agent(spec, this);
  if (agent_ == 0) throw std::runtime_error(hca.name() + ": cannot register a directed-route agent");
}

SmpSender::~SmpSender() {
  for (auto& [tid, f] : in_flight_) hca_.fabric().sim().cancel(f.timeout);
  hca_.unregister_agent(agent_);
}

void SmpSender::get(std::span<const uint8_t> path, uint16_t attr, uint32_t modifier, Callback cb) {
  enqueue(mad::dr_smp::kMethodGet, path, attr, modifier, {}, std::move(cb));
}

void SmpSender::set(std::span<const uint8_t> path, uint16_t attr, uint32_t modifier, std::span<const uint8_t> data,
                    Callback cb) {
  enqueue(mad::dr_smp::kMethodSet, path, attr, modifier, data, std::move(cb));
}

void SmpSender::enqueue(uint8_t method, std::span<const uint8_t> path, uint16_t attr, uint32_t modifier,
                        std::span<const uint8_t> data, Callback cb) {
  Request r{};
  r.method = method;
  r.hops = static_cast<uint8_t>(std::min<std::size_t>(path.size(), mad::dr_smp::kMaxHops));
  r.attr = attr;
  r.modifier = modifier;
  std::copy_n(path.begin(), r.hops, r.path);
  std::copy_n(data.begin(), std::min<std::size_t>(data.size(), 64), r.data);
  r.cb = std::move(cb);
  queue_.push_back(std::move(r));
  pump();
}

void SmpSender::when_idle(std::function<void()> fn) {
  idle_waiters_.push_back(std::move(fn));
  pump();
}

void SmpSender::pump() {
  while (in_flight_.size() < options_.window && !queue_.empty()) {
    Request r = std::move(queue_.front());
    queue_.pop_front();
    send(std::move(r));
  }
  while (idle() && !idle_waiters_.empty()) {
    std::vector<std::function<void()>> waiters;
    waiters.swap(idle_waiters_);
    for (auto& w : waiters) w();
  }
}

void SmpSender::send(Request r) {
  std::array<uint8_t, 256> smp{};
  mad::dr_smp::DrRequest q;
  q.method = r.method;
  const uint32_t tid = next_tid_++;
  q.transaction_id = tid;
  q.attribute_id = r.attr;
  q.attribute_modifier = r.modifier;
  mad::dr_smp::init_request(mad::SmpBuffer(smp.data(), 256), q, std::span<const uint8_t>(r.path, r.hops));
  if (r.method == mad::dr_smp::kMethodSet) std::memcpy(&smp[mad::dr_smp::kDataOffset], r.data, 64);
  if (r.tries++ > 0) ++retries_;
  ++sent_;
  const sim::EventHandle h = hca_.fabric().sim().schedule(options_.timeout, [this, tid] { timed_out(tid); });
  in_flight_.emplace(tid, InFlight{std::move(r), h});
  fabric::MadAddress to;
  to.lid = 0xFFFF;
  hca_.send_mad(agent_, to, smp);
}

void SmpSender::timed_out(uint32_t tid) {
  auto it = in_flight_.find(tid);
  if (it == in_flight_.end()) return;
  Request r = std::move(it->second.request);
  in_flight_.erase(it);
  if (r.tries <= options_.retries) {
    queue_.push_front(std::move(r));
  } else {
    ++unanswered_;
    if (r.cb) r.cb({}, 0);
  }
  pump();
}

void SmpSender::on_mad(fabric::Port&, const fabric::MadAddress&, std::span<const uint8_t> mad) {
  const auto tid = static_cast<uint32_t>(wire::load_be64(&mad[8]));
  auto it = in_flight_.find(tid);
  if (it == in_flight_.end()) return;  // a late answer to a request already retried
  hca_.fabric().sim().cancel(it->second.timeout);
  Callback cb = std::move(it->second.request.cb);
  in_flight_.erase(it);
  const uint16_t status = mad::dr_smp::status(mad::ConstSmpBuffer(mad.data(), 256));
  if (cb) cb(mad, status);
  pump();
}

}  // namespace ibfab::sm
