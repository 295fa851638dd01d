#pragma once
// The kernel's multicast module (drivers/infiniband/core/multicast.c) for
// one HCA port: one group per MGID, a count of members per JoinState bit,
// and the SA asked only when a bit is first wanted or last given up. So
// several rdma_cm ids (and IPoIB) joining one group from one port make one
// membership at the SA.
//
// - A join asks for one JoinState bit. Joins of a group are served in
//   order: if the port already holds the bit, the member gets the group's
//   record at once; otherwise a Set goes out (3000 ms in all, retried as
//   the kernel's ib_sa retries: fabric::SaRetry::kernel) and the member
//   gets its outcome. A zero MGID (SA-assigned)
//   always makes a new group, known by the MGID the SA gives it.
// - A leave drops the member; when a bit's count reaches 0 a Delete goes out
//   with that bit alone (3000 ms, retried the same way; nobody waits).
// - reset() is what a port event (PORT_ERR, LID/SM change, client
//   reregister) does: every member is told the status (-ENETRESET), the
//   state is forgotten, and no leave is sent.
// Outcomes are delivered from a zero-delay event, never from inside
// join(): a callback may join or leave freely.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <unordered_map>
#include <vector>

#include "fabric/model/sa_client.h"
#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/wire/gid.h"

namespace ibfab::api {

class PortMulticast {
 public:
  using Done = std::function<void(int status, const mad::McMemberRecord& rec)>;

  PortMulticast(fabric::Hca& hca, uint8_t port, fabric::SaClient& sa) : hca_(hca), port_(port), sa_(sa) {}
  PortMulticast(const PortMulticast&) = delete;
  PortMulticast& operator=(const PortMulticast&) = delete;

  // `rec` holds the fields to ask for under `mask` (PortGID is filled in)
  // and exactly one JoinState bit. Returns the member's id (> 0).
  uint64_t join(const mad::McMemberRecord& rec, uint64_t mask, Done done);
  // Drops a member (joined or still waiting); its callback is not called
  // after this.
  void leave(uint64_t member);
  // Every member is told `status`; the groups are forgotten, no Delete sent.
  void reset(int status);

  // The group's record if this port holds any JoinState bit of it.
  const mad::McMemberRecord* joined(const wire::Gid& mgid) const;
  std::size_t groups() const { return groups_.size(); }

 private:
  struct Member {
    uint64_t group = 0;  // Group key
    mad::McMemberRecord rec;
    uint64_t mask = 0;
    uint8_t bit = 0;
    bool active = false;  // holds its bit (counted)
    Done done;
    mad::McMemberRecord answer;  // the outcome waiting to be delivered
  };
  struct Group {
    wire::Gid mgid{};              // zero until the SA names it
    mad::McMemberRecord rec;       // as the SA answered
    uint8_t joined = 0;            // bits this port holds at the SA
    std::array<uint32_t, 4> count{};
    std::vector<uint64_t> queue;   // members waiting, oldest first
    bool busy = false;             // a Set is out
  };

  void run(uint64_t group);
  void answered(uint64_t group, uint64_t member, int status, std::span<const uint8_t> mad);
  void deliver(uint64_t member, int status, const mad::McMemberRecord& rec);
  void send_delete(const Group& g, uint8_t bit);
  void drop_if_empty(uint64_t group);

  fabric::Hca& hca_;
  uint8_t port_;
  fabric::SaClient& sa_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Member> members_;
  std::unordered_map<uint64_t, Group> groups_;  // by key
  std::map<wire::Gid, uint64_t> by_mgid_;       // named groups
};

}  // namespace ibfab::api
