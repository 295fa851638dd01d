#pragma once
// Test helpers for librdmacm on an in-process fabric (IBFAB_TOPOLOGY
// fat-tree:2:4, the built-in SM on H1, no IBFAB_NODE: every host's HCA is
// this process's). The address plan's defaults give the h-th host
// (h = 1, 2, ...) 10.1.0.h on port 1. An Endpoint is an rdma_cm id on a
// channel of its own, bound to one host's address, with (on request) a UD
// QP the library makes, its CQs, and a registered buffer. The posting and
// polling helpers are libibverbs' tests' (verbs_fabric.h).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/api/blocked_call.h"
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {

// `call` fails with -1 and errno `err`.
#define EXPECT_FAILS_WITH(call, err)   \
  do {                                 \
    errno = 0;                         \
    EXPECT_EQ((call), -1) << #call;    \
    EXPECT_EQ(errno, (err)) << #call;  \
  } while (0)

inline void use_embedded_cm_fabric() {
  ::setenv("IBFAB_TOPOLOGY", "fat-tree:2:4", 1);
  ::unsetenv("IBFAB_NODE");
}

inline sockaddr_in ipv4(const char* text, uint16_t port = 0) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, text, &a.sin_addr);
  return a;
}

// rdma_getaddrinfo for `node`:`service` in port space `ps`, passive or
// active; nullptr when it fails.
inline rdma_addrinfo* cm_addrinfo(const char* node, const char* service, bool passive, int ps = RDMA_PS_UDP) {
  rdma_addrinfo hints{};
  hints.ai_flags = passive ? RAI_PASSIVE : 0;
  hints.ai_port_space = ps;
  rdma_addrinfo* res = nullptr;
  return rdma_getaddrinfo(node, service, &hints, &res) == 0 ? res : nullptr;
}

inline sockaddr* sa(sockaddr_in& a) { return reinterpret_cast<sockaddr*>(&a); }

// The next event on `ch` within `ms`, or nullptr.
inline rdma_cm_event* next_event(rdma_event_channel* ch, int ms = 5000) {
  pollfd p{ch->fd, POLLIN, 0};
  if (::poll(&p, 1, ms) != 1) return nullptr;
  rdma_cm_event* e = nullptr;
  return rdma_get_cm_event(ch, &e) == 0 ? e : nullptr;
}

// Waits for the next event, expects it to be `type` with status 0, keeps a
// copy of it (private data excepted) and acks it.
inline rdma_cm_event expect_event(rdma_event_channel* ch, rdma_cm_event_type type) {
  rdma_cm_event copy{};
  rdma_cm_event* e = next_event(ch);
  EXPECT_NE(e, nullptr) << "no " << rdma_event_str(type);
  if (!e) return copy;
  EXPECT_EQ(e->event, type) << rdma_event_str(e->event);
  EXPECT_EQ(e->status, 0) << rdma_event_str(e->event);
  copy = *e;
  rdma_ack_cm_event(e);
  return copy;
}

struct Endpoint {
  rdma_event_channel* ch = nullptr;
  rdma_cm_id* id = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(1 << 16);
  int bind_status = -1;

  // An id in port space `ps`; bound to `addr`:`port` unless `addr` is null.
  explicit Endpoint(const char* addr, uint16_t port = 0, rdma_port_space ps = RDMA_PS_UDP) {
    ch = rdma_create_event_channel();
    if (!ch || rdma_create_id(ch, &id, this, ps) != 0) return;
    if (!addr) return;
    sockaddr_in a = ipv4(addr, port);
    bind_status = rdma_bind_addr(id, sa(a));
  }
  ~Endpoint() {
    if (mr) ibv_dereg_mr(mr);
    if (id) {
      if (id->qp) rdma_destroy_qp(id);
      rdma_destroy_id(id);
    }
    if (ch) rdma_destroy_event_channel(ch);
  }
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // A UD QP on the id (the library makes its CQs) and the buffer
  // registered on its PD; 0 or -1.
  int make_qp(uint32_t create_flags = 0) { return make_qp_on(id, create_flags); }
  int make_qp_on(rdma_cm_id* on, uint32_t create_flags = 0) {
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_UD;
    a.cap.max_send_wr = a.cap.max_recv_wr = 64;
    a.cap.max_send_sge = a.cap.max_recv_sge = 1;
    a.sq_sig_all = 1;
    if (create_flags) {
      a.comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS;
      a.create_flags = create_flags;
    }
    if (rdma_create_qp_ex(on, &a) != 0) return -1;
    const int access = IBV_ACCESS_LOCAL_WRITE;  // a variable: the ibv_reg_mr macro mixes enum types
    if (!mr) mr = ibv_reg_mr(on->pd, buf.data(), buf.size(), access);
    return mr ? 0 : -1;
  }
  int post_recv(rdma_cm_id* on, uint64_t wr_id, uint32_t offset, uint32_t len) {
    return post_one_recv(on->qp, wr_id, {reinterpret_cast<uint64_t>(buf.data() + offset), len, mr->lkey});
  }
  int send(rdma_cm_id* on, ibv_ah* ah, uint32_t qpn, uint32_t qkey, uint32_t offset, uint32_t len) {
    return post_one_send(on->qp, {reinterpret_cast<uint64_t>(buf.data() + offset), len, mr->lkey}, ah, qpn, qkey);
  }
};

}  // namespace ibfab::testing
