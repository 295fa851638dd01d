#pragma once
// Test helpers for libibverbs on an in-process fabric (IBFAB_TOPOLOGY
// fat-tree:2:4, the built-in SM on H1; this process is "on" H3, so ibfab0
// is H3's HCA and ibfab1.. are the other hosts'). A Host opens one device
// with a PD, a CQ, a registered buffer and a UD QP; join() sends an SA
// MCMemberRecord join through libibumad on that host's port.
#include <gtest/gtest.h>
#include <infiniband/umad.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace ibfab::testing {

inline constexpr uint32_t kQkey = 0x11111111;

inline void use_embedded_fabric() {
  ::setenv("IBFAB_TOPOLOGY", "fat-tree:2:4", 1);
  ::setenv("IBFAB_NODE", "H3", 1);
}

inline ibv_device* device(int index) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  ibv_device* d = list && index < n ? list[index] : nullptr;
  ibv_free_device_list(list);
  return d;
}

// Polls `cq` until `n` completions arrived or `ms` passed; returns them.
// The default deadline only decides when a test that waits for completions
// that never come gives up.
inline std::vector<ibv_wc> poll_for(ibv_cq* cq, std::size_t n, int ms = 30000) {
  std::vector<ibv_wc> out;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (out.size() < n && std::chrono::steady_clock::now() < end) {
    ibv_wc wc[16];
    const int k = ibv_poll_cq(cq, 16, wc);
    if (k < 0) break;
    out.insert(out.end(), wc, wc + k);
  }
  return out;
}

// Exactly `n` completions expected on `cq`: waits for them (as poll_for),
// then takes any more that come within `quiet_ms`; returns them all. Late
// completions cannot fail the test; the short look for extras can only
// miss one that comes later still.
inline std::vector<ibv_wc> poll_exactly(ibv_cq* cq, std::size_t n, int quiet_ms = 150) {
  std::vector<ibv_wc> out = poll_for(cq, n);
  const std::vector<ibv_wc> more = poll_for(cq, 16, quiet_ms);
  out.insert(out.end(), more.begin(), more.end());
  return out;
}

// A receive of one SGE on `qp`.
inline int post_one_recv(ibv_qp* qp, uint64_t wr_id, ibv_sge sge) {
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp, &wr, &bad);
}

// A UD send of one SGE on `qp` through `ah` to QP `qpn`.
inline int post_one_send(ibv_qp* qp, ibv_sge sge, ibv_ah* ah, uint32_t qpn, uint32_t qkey, uint64_t wr_id = 0,
                         unsigned flags = IBV_SEND_SIGNALED) {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = flags;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = qpn;
  wr.wr.ud.remote_qkey = qkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &wr, &bad);
}

struct Host {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<uint8_t> buf = std::vector<uint8_t>(1 << 16);
  uint16_t lid = 0;
  ibv_gid gid{};

  explicit Host(int index, ibv_qp_type type = IBV_QPT_UD, uint32_t create_flags = 0) {
    ibv_device* d = device(index);
    if (!d) return;
    ctx = ibv_open_device(d);
    if (!ctx) return;
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 256, nullptr, nullptr, 0);
    const int access = IBV_ACCESS_LOCAL_WRITE;
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), access);
    ibv_qp_init_attr_ex a{};
    a.send_cq = a.recv_cq = cq;
    a.cap.max_send_wr = a.cap.max_recv_wr = 64;
    a.cap.max_send_sge = a.cap.max_recv_sge = 4;
    a.qp_type = type;
    a.pd = pd;
    a.comp_mask = IBV_QP_INIT_ATTR_PD | (create_flags ? IBV_QP_INIT_ATTR_CREATE_FLAGS : 0);
    a.create_flags = create_flags;
    qp = ibv_create_qp_ex(ctx, &a);
    ibv_port_attr pa;
    if (ibv_query_port(ctx, 1, &pa) == 0) lid = pa.lid;
    ibv_query_gid(ctx, 1, 0, &gid);
  }
  ~Host() {
    // As a careful program does: detach before the destroy, which uverbs
    // refuses (EBUSY) while the QP is attached.
    for (const auto& [g, mlid] : attached) ibv_detach_mcast(qp, &g, mlid);
    if (qp) ibv_destroy_qp(qp);
    if (mr) ibv_dereg_mr(mr);
    if (cq) ibv_destroy_cq(cq);
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
  bool ok() const { return ctx && pd && cq && qp && mr; }

  // ibv_attach_mcast / ibv_detach_mcast of this host's QP, remembered so
  // that the destructor detaches what is left.
  int attach(const ibv_gid& g, uint16_t mlid) {
    const int e = ibv_attach_mcast(qp, &g, mlid);
    if (e == 0) attached.emplace_back(g, mlid);
    return e;
  }
  int detach(const ibv_gid& g, uint16_t mlid) {
    std::erase_if(attached, [&](const auto& a) { return a.second == mlid && std::memcmp(&a.first, &g, sizeof g) == 0; });
    return ibv_detach_mcast(qp, &g, mlid);
  }
  std::vector<std::pair<ibv_gid, uint16_t>> attached;

  // RESET -> INIT -> RTR -> RTS with the masks a UD QP needs.
  int to_rts(uint32_t qkey = kQkey) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = qkey;
    if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) return e;
    a.qp_state = IBV_QPS_RTR;
    if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE)) return e;
    a.qp_state = IBV_QPS_RTS;
    return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
  }
  // Posts a receive of `len` bytes at `offset` of the buffer.
  int post_recv(uint64_t wr_id, uint32_t offset, uint32_t len, uint32_t lkey = 0) {
    return post_one_recv(qp, wr_id, {reinterpret_cast<uint64_t>(buf.data() + offset), len, lkey ? lkey : mr->lkey});
  }
  // Sends `len` bytes from `offset` of the buffer through `ah`.
  int send(ibv_ah* ah, uint32_t qpn, uint64_t wr_id, uint32_t offset, uint32_t len, unsigned flags = IBV_SEND_SIGNALED,
           uint32_t lkey = 0, uint32_t qkey = kQkey) {
    return post_one_send(qp, {reinterpret_cast<uint64_t>(buf.data() + offset), len, lkey ? lkey : mr->lkey}, ah, qpn,
                         qkey, wr_id, flags);
  }
  ibv_ah* ah_to(uint16_t dlid, const ibv_gid* dgid = nullptr) {
    ibv_ah_attr a{};
    a.dlid = dlid;
    a.port_num = 1;
    if (dgid) {
      a.is_global = 1;
      a.grh.dgid = *dgid;
      a.grh.hop_limit = 0xFF;
    }
    return ibv_create_ah(pd, &a);
  }
};

// An SA MCMemberRecord join (Set) or leave (Delete) of `mgid` for `port_gid`
// through libibumad on device `ca`; returns the MLID (0 on failure).
inline uint16_t sa_member(const char* ca, const ibv_gid& mgid, const ibv_gid& port_gid, bool join = true,
                          uint8_t join_state = 1) {
  const int fd = umad_open_port(ca, 1);
  if (fd < 0) return 0;
  const int agent = umad_register(fd, 3, 2, 0, nullptr);
  umad_port_t port;
  umad_get_port(nullptr, 1, &port);
  const uint16_t sm_lid = static_cast<uint16_t>(port.sm_lid);
  umad_release_port(&port);
  std::array<uint8_t, 256 + 64> buf{};
  auto* umad = reinterpret_cast<ib_user_mad*>(buf.data());
  uint8_t* mad = reinterpret_cast<uint8_t*>(umad_get_mad(umad));
  mad[0] = 1;   // base version
  mad[1] = 3;   // SA
  mad[2] = 2;
  mad[3] = join ? 0x02 : 0x15;  // Set / Delete
  const uint32_t tid = 0x5EED0001;
  std::memcpy(&mad[12], &tid, 4);
  mad[16] = 0x00;
  mad[17] = 0x38;  // MCMemberRecord
  const uint64_t mask = htobe64(0x130C7);  // MGID PortGID QKey TClass PKey SL FlowLabel JoinState
  std::memcpy(&mad[48], &mask, 8);
  uint8_t* rec = mad + 56;
  std::memcpy(rec, mgid.raw, 16);
  std::memcpy(rec + 16, port_gid.raw, 16);
  const uint32_t qkey = htobe32(kQkey);
  std::memcpy(rec + 32, &qkey, 4);
  rec[40] = 0xFF;  // P_Key 0xFFFF
  rec[41] = 0xFF;
  rec[48] = static_cast<uint8_t>(join_state & 0x0F);
  umad_set_addr(umad, sm_lid, 1, 0, 0x80010000);
  uint16_t mlid = 0;
  if (umad_send(fd, agent, umad, 256, 200, 3) == 0) {
    int len = 256;
    if (umad_recv(fd, umad, &len, 5000) >= 0 && umad_status(umad) == 0 && mad[4] == 0 && mad[5] == 0) {
      std::memcpy(&mlid, rec + 36, 2);
      mlid = be16toh(mlid);
    }
  }
  umad_unregister(fd, agent);
  umad_close_port(fd);
  return mlid;
}

}  // namespace ibfab::testing
