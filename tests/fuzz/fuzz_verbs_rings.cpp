// The engine's verbs data path (api/server/verbs_service.cpp) against a
// client that writes anything into its shared memory. A verbs connection
// on H1 of fat-tree:2:4 creates a CQ and a UD QP in RTS, as the library
// does; then each input is written over the QP's and the CQ's rings
// (indices, WQEs, lengths, the arm word) and the engine runs. It must never
// crash or read outside what it mapped, and must keep serving requests.
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "api/client/seqpacket.h"
#include "api/client/shared_memory.h"
#include "api/client/verbs_protocol.h"
#include "api/client/verbs_rings.h"
#include "api/server/engine.h"
#include "tests/fuzz/fuzz_engine.h"

using namespace ibfab;
using fuzz::engine;
using fuzz::pump;
using api::rings::CqRing;
using api::rings::QpRings;

namespace {

constexpr uint32_t kDepth = 8;
constexpr uint32_t kSqSlot = sizeof(api::rings::SendWqe) + api::rings::kMaxUdPayload;
constexpr uint32_t kRqSlot = api::rings::kGrhBytes + api::rings::kMaxUdPayload;

// Sends a request and returns the reply value.
int64_t request(int fd, api::MsgType type, const void* body, std::size_t size, std::span<const int> fds = {}) {
  if (api::send_message(fd, type, body, size, {}, fds) != 0) std::abort();
  pump();
  std::array<uint8_t, 512> buf{};
  const ssize_t n = api::recv_message(fd, buf);
  const auto r = api::body_as<api::VerbsReply>(std::span<const uint8_t>(buf.data(), n > 0 ? n : 0),
                                               api::MsgType::VerbsReply);
  if (!r) {
    std::fprintf(stderr, "no VerbsReply\n");
    std::abort();
  }
  return r->value;
}

struct Client {
  int fd = -1;
  int async_end = -1;
  api::SharedMemory cq, qp;
  uint32_t qpn = 0;

  Client() {
    int sv[2], as[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0 ||
        ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, as) != 0)
      std::abort();
    engine().adopt(sv[0]);
    fd = sv[1];
    async_end = as[0];
    api::Hello h;
    h.kind = api::ConnectionKind::Verbs;
    std::strcpy(h.node, "H1");
    const int give[] = {as[1]};
    api::send_message(fd, api::MsgType::Hello, &h, sizeof h, {}, give);
    ::close(as[1]);
    pump();
    std::array<uint8_t, 256> buf{};
    api::ReceivedFds fds;
    if (api::recv_message(fd, buf, &fds) <= 0 || fds.count != 2) std::abort();
    if (cq.create(CqRing::bytes(kDepth), "fuzz-cq") || qp.create(QpRings::bytes(kDepth, kSqSlot, kDepth, kRqSlot), "fuzz-qp"))
      std::abort();
    api::CreateCq c;
    c.depth = kDepth;
    const int cq_fd[] = {cq.fd()};
    const int64_t cq_handle = request(fd, api::MsgType::CreateCq, &c, sizeof c, cq_fd);
    api::CreateQp q;
    q.send_cq = q.recv_cq = static_cast<uint32_t>(cq_handle);
    q.sq_depth = q.rq_depth = kDepth;
    q.sq_slot = kSqSlot;
    q.rq_slot = kRqSlot;
    q.qp_type = IBV_QPT_UD;
    const int qp_fd[] = {qp.fd()};
    qpn = static_cast<uint32_t>(request(fd, api::MsgType::CreateQp, &q, sizeof q, qp_fd));
    for (uint8_t s : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
      api::ModifyQp m;
      m.qp_num = qpn;
      m.state = s;
      m.set_port = s == IBV_QPS_INIT;
      m.port = 1;
      if (request(fd, api::MsgType::ModifyQp, &m, sizeof m) != 0) std::abort();
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static Client client;
  // The input goes over the QP's counters, then the CQ's counters (its
  // entries are the engine's to write), then the QP's slots.
  const auto take = [&](void* to, std::size_t room) {
    const std::size_t n = std::min(size, room);
    std::memcpy(to, data, n);
    data += n;
    size -= n;
  };
  take(client.qp.data(), sizeof(QpRings));
  take(client.cq.data(), sizeof(CqRing));
  take(client.qp.as<uint8_t>() + sizeof(QpRings), client.qp.size() - sizeof(QpRings));
  pump();
  // Still serving: a detach of a group never attached is EINVAL, answered.
  api::McastRequest m;
  m.qp_num = client.qpn;
  m.gid[0] = 0xFF;
  if (request(client.fd, api::MsgType::DetachMcast, &m, sizeof m) != -EINVAL) std::abort();
  // Back to RTS for the next input, whatever state the rings drove it to.
  for (uint8_t s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
    api::ModifyQp mq;
    mq.qp_num = client.qpn;
    mq.state = s;
    request(client.fd, api::MsgType::ModifyQp, &mq, sizeof mq);
  }
  std::array<uint8_t, 64> drain;
  while (::recv(client.async_end, drain.data(), drain.size(), MSG_DONTWAIT) > 0) {
  }
  return 0;
}
