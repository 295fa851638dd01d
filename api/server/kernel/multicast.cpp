#include "api/server/kernel/multicast.h"

#include <algorithm>
#include <array>
#include <cerrno>

#include "fabric/mad/sa/sa_mad.h"
#include "fabric/model/fabric.h"
#include "fabric/wire/mad_header.h"

namespace ibfab::api {
namespace {

namespace comp = mad::mcm_comp;
// The kernel's 3000 ms per join and leave (multicast.c send_join and
// send_leave), spent as its ib_sa spends it (fabric::SaRetry::kernel).
const fabric::SaRetry kRetry = fabric::SaRetry::kernel(sim::Time::ms(3000));

unsigned bit_index(uint8_t bit) { return static_cast<unsigned>(__builtin_ctz(bit)); }

std::array<uint8_t, mad::McMemberRecord::kSize> packed(const mad::McMemberRecord& rec) {
  std::array<uint8_t, mad::McMemberRecord::kSize> out{};
  rec.pack(out);
  return out;
}

}  // namespace

uint64_t PortMulticast::join(const mad::McMemberRecord& rec, uint64_t mask, Done done) {
  const uint64_t id = next_id_++;
  uint64_t key = 0;
  if (!rec.mgid.is_zero()) {
    auto it = by_mgid_.find(rec.mgid);
    if (it != by_mgid_.end()) key = it->second;
  }
  if (key == 0) {
    key = id;  // a group's key is the id of the member that made it
    Group& g = groups_[key];
    g.mgid = rec.mgid;
    if (!rec.mgid.is_zero()) by_mgid_[rec.mgid] = key;
  }
  Member& m = members_[id];
  m.group = key;
  m.rec = rec;
  m.rec.port_gid = wire::Gid::from(hca_.port(port_).gid_prefix, hca_.port(port_).guid());
  m.mask = mask | comp::kPortGid | comp::kJoinState;
  m.bit = static_cast<uint8_t>(rec.join_state & 0xF);
  m.done = std::move(done);
  groups_[key].queue.push_back(id);
  run(key);
  return id;
}

// Serves the group's waiting members in order until one needs the SA.
void PortMulticast::run(uint64_t key) {
  auto git = groups_.find(key);
  if (git == groups_.end()) return;
  Group& g = git->second;
  while (!g.busy && !g.queue.empty()) {
    const uint64_t id = g.queue.front();
    Member& m = members_.at(id);
    if (g.joined & m.bit) {
      g.queue.erase(g.queue.begin());
      m.active = true;
      ++g.count[bit_index(m.bit)];
      deliver(id, 0, g.rec);
      continue;
    }
    g.busy = true;
    const auto rec = packed(m.rec);
    sa_.send(wire::mad_method::kSet, mad::McMemberRecord::kAttributeId, m.mask, rec, kRetry,
             [this, key, id](int status, std::span<const uint8_t> mad) { answered(key, id, status, mad); });
  }
}

void PortMulticast::answered(uint64_t key, uint64_t id, int status, std::span<const uint8_t> mad) {
  auto git = groups_.find(key);
  if (git == groups_.end()) return;
  Group& g = git->second;
  g.busy = false;
  auto mit = members_.find(id);
  const bool waiting = mit != members_.end() && !g.queue.empty() && g.queue.front() == id;
  mad::McMemberRecord rec;
  if (status == 0) rec = mad::McMemberRecord::unpack(mad::sa_data(mad::ConstSaBuffer(mad.data(), wire::kMadSize)));
  if (status == 0) {
    const uint8_t bit = mit != members_.end() ? mit->second.bit : static_cast<uint8_t>(rec.join_state & 0xF);
    if (g.mgid.is_zero()) {  // an SA-assigned MGID names the group from now on
      g.mgid = rec.mgid;
      by_mgid_[g.mgid] = key;
    }
    g.rec = rec;
    g.rec.join_state = 0;
    g.joined |= bit;
    if (!waiting) {
      // The member left while the Set was out: give the bit back unless
      // another member waits for it.
      const bool wanted = std::any_of(g.queue.begin(), g.queue.end(),
                                      [&](uint64_t other) { return members_.at(other).bit == bit; });
      if (!wanted && g.count[bit_index(bit)] == 0) {
        send_delete(g, bit);
        g.joined &= static_cast<uint8_t>(~bit);
      }
    }
    run(key);
    drop_if_empty(key);
    return;
  }
  if (waiting) {
    g.queue.erase(g.queue.begin());
    deliver(id, status, rec);
    members_.erase(id);
  }
  run(key);
  drop_if_empty(key);
}

void PortMulticast::deliver(uint64_t id, int status, const mad::McMemberRecord& rec) {
  auto it = members_.find(id);
  it->second.answer = rec;
  auto& sim = hca_.fabric().sim();
  if (status == 0) {
    sim.schedule(sim::Time::zero(), [this, id] {
      auto m = members_.find(id);
      if (m != members_.end() && m->second.done) m->second.done(0, m->second.answer);
    });
    return;
  }
  // The member is gone by the time this runs; the callback travels alone.
  auto shared = std::make_shared<std::pair<Done, mad::McMemberRecord>>(std::move(it->second.done), rec);
  sim.schedule(sim::Time::zero(), [shared, status] {
    if (shared->first) shared->first(status, shared->second);
  });
}

void PortMulticast::leave(uint64_t id) {
  auto mit = members_.find(id);
  if (mit == members_.end()) return;
  const Member m = std::move(mit->second);
  members_.erase(mit);
  auto git = groups_.find(m.group);
  if (git == groups_.end()) return;
  Group& g = git->second;
  if (!m.active) {
    // Still waiting (perhaps for its own Set, whose answer then finds it gone).
    if (auto q = std::find(g.queue.begin(), g.queue.end(), id); q != g.queue.end()) g.queue.erase(q);
    drop_if_empty(m.group);
    return;
  }
  const unsigned b = bit_index(m.bit);
  if (--g.count[b] == 0 && (g.joined & m.bit)) {
    send_delete(g, m.bit);
    g.joined &= static_cast<uint8_t>(~m.bit);
  }
  drop_if_empty(m.group);
}

void PortMulticast::send_delete(const Group& g, uint8_t bit) {
  mad::McMemberRecord rec;
  rec.mgid = g.mgid;
  rec.port_gid = wire::Gid::from(hca_.port(port_).gid_prefix, hca_.port(port_).guid());
  rec.join_state = bit;
  sa_.send(wire::mad_method::kDelete, mad::McMemberRecord::kAttributeId, comp::kJoinRequiredMask, packed(rec), kRetry,
           nullptr);
}

void PortMulticast::drop_if_empty(uint64_t key) {
  auto git = groups_.find(key);
  if (git == groups_.end()) return;
  const Group& g = git->second;
  if (g.busy || g.joined || !g.queue.empty()) return;
  for (uint32_t c : g.count)
    if (c) return;
  if (!g.mgid.is_zero()) by_mgid_.erase(g.mgid);
  groups_.erase(git);
}

void PortMulticast::reset(int status) {
  std::vector<uint64_t> ids;
  ids.reserve(members_.size());
  for (const auto& [id, m] : members_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());  // members in the order they joined
  for (uint64_t id : ids) {
    deliver(id, status, members_.at(id).answer);
    members_.erase(id);
  }
  groups_.clear();
  by_mgid_.clear();
}

const mad::McMemberRecord* PortMulticast::joined(const wire::Gid& mgid) const {
  auto it = by_mgid_.find(mgid);
  if (it == by_mgid_.end()) return nullptr;
  const Group& g = groups_.at(it->second);
  return g.joined ? &g.rec : nullptr;
}

}  // namespace ibfab::api
