#include "sm/smp_sender.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

#include "fabric/mad/dr_smp.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/byte_cursor.h"

namespace ibfab::sm {

SmpSender::SmpSender(fabric::Hca& hca, uint8_t port, Options options)
    : hca_(hca), port_(port), options_(options) {
  options_.window = std::max(options_.window, 1u);
  slots_.resize(options_.window);
  slot_tid_.assign(options_.window, kFree);
  fabric::Hca::AgentSpec spec;
  spec.port = port;
  spec.mgmt_class = mad::dr_smp::kClassDirectedRoute;
  spec.class_version = 1;
  agent_ = hca.register_agent(spec, this);
  if (agent_ == 0) throw std::runtime_error(hca.name() + ": cannot register a directed-route agent");
}

SmpSender::~SmpSender() {
  hca_.fabric().sim().cancel(timer_);
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
  Queued& q = queue_.emplace_back();
  Request& r = q.pending.request;
  r.method = method;
  r.attr = attr;
  r.modifier = modifier;
  r.path = DrRoute(path);
  std::copy_n(data.begin(), std::min<std::size_t>(data.size(), 64), r.data);
  r.cb = std::move(cb);
  pump();
}

void SmpSender::generate(std::size_t count, Generator make) {
  if (count == 0) return;
  Queued& q = queue_.emplace_back();
  q.make = std::move(make);
  q.count = count;
  pump();
}

void SmpSender::when_idle(std::function<void()> fn) {
  idle_waiters_.push_back(std::move(fn));
  pump();
}

void SmpSender::pump() {
  while (in_flight_ < options_.window && !queue_.empty()) {
    Queued& q = queue_.front();
    if (q.make) {
      Pending p;
      q.make(q.next++, p.request);
      if (q.next == q.count) queue_.pop_front();
      send(std::move(p));
      continue;
    }
    Pending p = std::move(q.pending);
    queue_.pop_front();
    send(std::move(p));
  }
  while (idle() && !idle_waiters_.empty()) {
    std::vector<std::function<void()>> waiters;
    waiters.swap(idle_waiters_);
    for (auto& w : waiters) w();
  }
}

void SmpSender::send(Pending p) {
  const Request& r = p.request;
  std::array<uint8_t, 256> smp{};
  mad::dr_smp::DrRequest q;
  q.method = r.method;
  uint32_t tid = next_tid_++;
  if (tid == kFree) tid = next_tid_++;  // after 2^32 requests
  q.transaction_id = tid;
  q.attribute_id = r.attr;
  q.attribute_modifier = r.modifier;
  mad::dr_smp::init_request(mad::SmpBuffer(smp.data(), 256), q, r.path.span());
  if (r.method == mad::dr_smp::kMethodSet) std::memcpy(&smp[mad::dr_smp::kDataOffset], r.data, 64);
  if (p.tries++ > 0) ++retries_;
  ++sent_;
  hca_.fabric().sim().progress().advance();
  const auto free_slot = static_cast<unsigned>(std::find(slot_tid_.begin(), slot_tid_.end(), kFree) - slot_tid_.begin());
  Slot& s = slots_[free_slot];
  s.pending = std::move(p);
  s.deadline = hca_.fabric().sim().now() + options_.timeout;
  slot_tid_[free_slot] = tid;
  ++in_flight_;
  if (!timer_armed_) arm_timer(s.deadline);
  fabric::MadAddress to;
  to.lid = 0xFFFF;
  hca_.send_mad(agent_, to, smp);
}

int SmpSender::oldest() const {
  int best = -1;
  for (unsigned i = 0; i < slots_.size(); ++i) {
    if (slot_tid_[i] == kFree) continue;
    // Deadlines grow with the send order; TIDs break the ties.
    if (best < 0 || slots_[i].deadline < slots_[best].deadline ||
        (slots_[i].deadline == slots_[best].deadline && slot_tid_[i] < slot_tid_[best]))
      best = static_cast<int>(i);
  }
  return best;
}

void SmpSender::arm_timer(sim::Time deadline) {
  timer_ = hca_.fabric().sim().schedule_at(deadline, [this] { on_timer(); });
  timer_armed_ = true;
}

void SmpSender::on_timer() {
  // Requests resent from here must not arm the timer for their own, later
  // deadlines (timer_armed_ stays set meanwhile): it is re-armed below for
  // the oldest outstanding one.
  const sim::Time now = hca_.fabric().sim().now();
  for (int i = oldest(); i >= 0 && slots_[static_cast<unsigned>(i)].deadline <= now; i = oldest())
    timed_out(static_cast<unsigned>(i));
  timer_armed_ = false;
  if (const int i = oldest(); i >= 0) arm_timer(slots_[static_cast<unsigned>(i)].deadline);
}

void SmpSender::timed_out(unsigned slot) {
  Pending p = std::move(slots_[slot].pending);
  slot_tid_[slot] = kFree;
  --in_flight_;
  if (p.tries <= options_.retries) {
    queue_.emplace_front().pending = std::move(p);
  } else {
    ++unanswered_;
    if (p.request.cb) p.request.cb({}, 0);
  }
  pump();
}

void SmpSender::on_mad(fabric::Port&, const fabric::MadAddress&, std::span<const uint8_t> mad) {
  const auto tid = static_cast<uint32_t>(wire::load_be64(&mad[8]));
  const auto it = tid == kFree ? slot_tid_.end() : std::find(slot_tid_.begin(), slot_tid_.end(), tid);
  if (it == slot_tid_.end()) return;  // a late answer to a request already retried
  const auto slot = static_cast<std::size_t>(it - slot_tid_.begin());
  Callback cb = std::move(slots_[slot].pending.request.cb);
  *it = kFree;
  if (--in_flight_ == 0) {
    hca_.fabric().sim().cancel(timer_);
    timer_armed_ = false;
  }
  const uint16_t status = mad::dr_smp::status(mad::ConstSmpBuffer(mad.data(), 256));
  if (cb) cb(mad, status);
  pump();
}

}  // namespace ibfab::sm
