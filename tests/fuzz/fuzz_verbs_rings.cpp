// The engine's verbs data path (api/server/verbs_*.cpp) against a
// client that writes anything into its shared memory. A verbs connection
// on H1 of fat-tree:2:4 creates a CQ, a UD QP in RTS and an RC QP in RTS
// (connected to itself, with a registered buffer), as the library does;
// then each input is written over the UD QP's and the CQ's rings (indices,
// WQEs, lengths, the arm word), and its counters and slots over the RC
// QP's as well (ConnectedWqe and RecvWqe slots, their SGEs and inline
// lengths), and the engine runs. It must never crash or read outside what
// it mapped (or what was registered), and must keep serving requests.
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
constexpr uint32_t kRcSge = 4;
constexpr uint32_t kRcSqSlot = sizeof(api::rings::ConnectedWqe) + 512;
constexpr uint32_t kRcRqSlot = sizeof(api::rings::RecvWqe) + kRcSge * sizeof(api::rings::RingSge);
alignas(64) uint8_t registered[1 << 16];  // the RC QP's memory region

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
  api::SharedMemory cq, qp, rc;
  uint32_t qpn = 0;
  uint32_t rcqpn = 0;

  // The RC QP through RESET, INIT, RTR (to itself on H1, LID 1) and RTS.
  void connect_rc() {
    for (uint8_t s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
      api::ModifyQp m;
      m.qp_num = rcqpn;
      m.state = s;
      m.mask = IBV_QP_STATE;
      if (s == IBV_QPS_INIT) {
        m.mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        m.port = 1;
        m.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
      } else if (s == IBV_QPS_RTR) {
        m.mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                  IBV_QP_MIN_RNR_TIMER;
        m.dlid = 1;
        m.path_mtu = IBV_MTU_1024;
        m.dest_qp_num = rcqpn;
        m.max_dest_rd_atomic = 4;
        m.min_rnr_timer = 1;
      } else if (s == IBV_QPS_RTS) {
        m.mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
        m.timeout = 1;
        m.retry_cnt = 1;
        m.rnr_retry = 1;
        m.max_rd_atomic = 4;
      }
      if (request(fd, api::MsgType::ModifyQp, &m, sizeof m) != 0) std::abort();
    }
  }

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
    const api::AllocPd pd_req;
    const int64_t pd = request(fd, api::MsgType::AllocPd, &pd_req, sizeof pd_req);
    api::RegMr mr;
    mr.addr = mr.iova = reinterpret_cast<uint64_t>(registered);
    mr.length = sizeof registered;
    mr.pd = static_cast<uint32_t>(pd);
    mr.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
    if (pd <= 0 || request(fd, api::MsgType::RegMr, &mr, sizeof mr) <= 0) std::abort();
    if (rc.create(QpRings::bytes(kDepth, kRcSqSlot, kDepth, kRcRqSlot), "fuzz-rc")) std::abort();
    api::CreateQp r;
    r.send_cq = r.recv_cq = static_cast<uint32_t>(cq_handle);
    r.sq_depth = r.rq_depth = kDepth;
    r.sq_slot = kRcSqSlot;
    r.rq_slot = kRcRqSlot;
    r.qp_type = IBV_QPT_RC;
    r.pd = static_cast<uint32_t>(pd);
    r.max_send_sge = r.max_recv_sge = kRcSge;
    r.max_inline_data = 512;
    const int rc_fd[] = {rc.fd()};
    const int64_t n = request(fd, api::MsgType::CreateQp, &r, sizeof r, rc_fd);
    if (n <= 0) std::abort();
    rcqpn = static_cast<uint32_t>(n);
    connect_rc();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static Client client;
  // The same bytes over the RC QP's rings: its counters are the UD QP's,
  // its slots the UD QP's slots.
  std::memcpy(client.rc.data(), data, std::min(size, sizeof(QpRings)));
  constexpr std::size_t kSlots = sizeof(QpRings) + sizeof(CqRing);
  if (size > kSlots)
    std::memcpy(client.rc.as<uint8_t>() + sizeof(QpRings), data + kSlots,
                std::min(size - kSlots, client.rc.size() - sizeof(QpRings)));
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
  // The RC QP back to RTS, its rings as the library starts them.
  std::memset(client.rc.data(), 0, sizeof(QpRings));
  client.connect_rc();
  pump();
  std::array<uint8_t, 64> drain;
  while (::recv(client.async_end, drain.data(), drain.size(), MSG_DONTWAIT) > 0) {
  }
  return 0;
}
