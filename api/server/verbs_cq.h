#pragma once
// A completion channel and a CQ of a verbs connection: the CQ writes the
// completions into the client's shared ring (verbs_rings.h) and wakes an
// armed CQ's channel.
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "api/client/shared_memory.h"
#include "api/client/verbs_rings.h"
#include "api/server/verbs_service.h"
#include "fabric/model/work_request.h"

namespace ibfab::api {

// Writes a record on a non-blocking socket the client reads; a client
// that does not read loses records, never the engine its time.
void write_record(int fd, const void* data, std::size_t size);

// The CQE of a connected QP's receive completion (its QP and handle, and
// kXrcSrq, are the caller's).
rings::Cqe receive_cqe(const fabric::WorkCompletion& wc);

struct Channel {
  int fd = -1;
  ~Channel() {
    if (fd >= 0) ::close(fd);
  }
};

class VerbsService::Cq {
 public:
  Cq(VerbsContext& ctx, SharedMemory mem, uint32_t depth, Channel* channel, uint64_t user_handle)
      : ctx_(ctx), mem_(std::move(mem)), ring_(mem_.as<rings::CqRing>()), depth_(depth), channel_(channel),
        user_handle_(user_handle) {}
  // Writes a completion; false (and the CQ in overrun) when it is full.
  bool push(const rings::Cqe& e, bool solicited);
  // ibv_resize_cq: writes from now on into `mem`, a ring of `depth` CQEs,
  // whose front takes the CQEs the client has not consumed, and the
  // arming. 0, or EINVAL (more wait than `depth` holds: nothing changes).
  int resize(SharedMemory mem, uint32_t depth);
  uint32_t users = 0;  // QPs (and XRC SRQs) that complete here
  Channel* channel() const { return channel_; }

 private:
  VerbsContext& ctx_;
  SharedMemory mem_;
  rings::CqRing* ring_;
  uint32_t depth_;
  uint32_t head_ = 0;
  bool overrun_ = false;
  Channel* channel_;
  uint64_t user_handle_;
};

}  // namespace ibfab::api
