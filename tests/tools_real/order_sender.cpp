// A multicast sender that does something right after its last send, for
// the program-order tests: it joins ADDR send-only through rdma_cm, posts
// COUNT sends of SIZE bytes (unsignalled; with --wait, signalled and all
// their completions polled first), then at once does THEN:
//   leave       rdma_leave_multicast, then tears down and exits
//   destroy-qp  rdma_destroy_qp, then leaves, tears down and exits
//   destroy-id  rdma_destroy_qp and rdma_destroy_id (which leaves the group)
//   exit        _exit(0): no call at all, the process is simply gone
//   umad-leave  an SA MCMemberRecord Delete of its membership, sent with
//               libibumad on a port it opened before posting (the
//               channel that does not wait for the engine), then exits
// Each message carries its index (4 bytes, network order) at the front.
// Prints "sent COUNT" before THEN; exits 0, or 1 with the failing call.
//
// usage: order_sender ADDR COUNT SIZE THEN [--wait]
#include <arpa/inet.h>
#include <infiniband/umad.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fabric/mad/sa/mcmember_record.h"
#include "fabric/mad/sa/sa_mad.h"

namespace {

using namespace ibfab;

// An SA Delete of `port_gid`'s send-only membership of `mgid`, sent on
// umad port `fd` through `agent` to `sm_lid`; its answer is not awaited.
void send_sa_delete(int fd, int agent, uint16_t sm_lid, const ibv_gid& mgid, const ibv_gid& port_gid,
                    std::vector<uint8_t>& u) {
  std::fill(u.begin(), u.end(), 0);
  umad_set_addr(u.data(), sm_lid, 1, 0, 0x80010000);
  auto* m = static_cast<uint8_t*>(umad_get_mad(u.data()));
  mad::SaBuffer sa(m, 256);
  mad::init_sa_request(sa, 0x15, mad::McMemberRecord::kAttributeId, 1, mad::mcm_comp::kJoinRequiredMask);
  mad::McMemberRecord rec;
  std::memcpy(rec.mgid.raw.data(), mgid.raw, 16);
  std::memcpy(rec.port_gid.raw.data(), port_gid.raw, 16);
  rec.join_state = 0x8;
  rec.pack(mad::mutable_sa_data(sa));
  if (umad_send(fd, agent, u.data(), 256, 1000, 3) < 0) {
    std::fprintf(stderr, "order_sender: umad_send failed\n");
    std::exit(1);
  }
}


[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "order_sender: %s failed: %s\n", what, std::strerror(errno));
  std::exit(1);
}

rdma_cm_event* next_event(rdma_event_channel* ch, rdma_cm_event_type want) {
  rdma_cm_event* e = nullptr;
  if (rdma_get_cm_event(ch, &e)) fail("rdma_get_cm_event");
  if (e->event != want) {
    std::fprintf(stderr, "order_sender: %s (status %d), not %s\n", rdma_event_str(e->event), e->status,
                 rdma_event_str(want));
    std::exit(1);
  }
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: order_sender ADDR COUNT SIZE leave|destroy-qp|destroy-id|exit|umad-leave [--wait]\n");
    return 2;
  }
  const char* addr = argv[1];
  const int count = std::atoi(argv[2]);
  const int size = std::atoi(argv[3]);
  const std::string then = argv[4];
  const bool wait = argc > 5 && std::string(argv[5]) == "--wait";
  if (count < 1 || count > 16384 || size < 4 || size > 2048 ||
      (then != "leave" && then != "destroy-qp" && then != "destroy-id" && then != "exit" && then != "umad-leave")) {
    std::fprintf(stderr, "order_sender: bad arguments\n");
    return 2;
  }

  rdma_event_channel* ch = rdma_create_event_channel();
  if (!ch) fail("rdma_create_event_channel");
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(ch, &id, nullptr, RDMA_PS_UDP)) fail("rdma_create_id");
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  if (inet_pton(AF_INET, addr, &dst.sin_addr) != 1) fail("inet_pton");
  if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&dst), 2000)) fail("rdma_resolve_addr");
  rdma_ack_cm_event(next_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED));

  ibv_pd* pd = ibv_alloc_pd(id->verbs);
  ibv_cq* cq = pd ? ibv_create_cq(id->verbs, count + 1, nullptr, nullptr, 0) : nullptr;
  if (!cq) fail("ibv_create_cq");
  ibv_qp_init_attr qa{};
  qa.qp_type = IBV_QPT_UD;
  qa.send_cq = qa.recv_cq = cq;
  qa.cap.max_send_wr = static_cast<uint32_t>(count);
  qa.cap.max_recv_wr = 1;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  if (rdma_create_qp(id, pd, &qa)) fail("rdma_create_qp");

  rdma_cm_join_mc_attr_ex join{};
  join.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;
  join.addr = reinterpret_cast<sockaddr*>(&dst);
  join.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER;
  if (rdma_join_multicast_ex(id, &join, nullptr)) fail("rdma_join_multicast_ex");
  rdma_cm_event* joined = next_event(ch, RDMA_CM_EVENT_MULTICAST_JOIN);
  const rdma_ud_param ud = joined->param.ud;
  rdma_ack_cm_event(joined);
  ibv_ah* ah = ibv_create_ah(pd, const_cast<ibv_ah_attr*>(&ud.ah_attr));
  if (!ah) fail("ibv_create_ah");

  // The umad port is open, its agent registered, before anything is posted.
  int umad_fd = -1, agent = -1;
  uint16_t sm_lid = 0;
  std::vector<uint8_t> umad_buf;
  ibv_gid port_gid{};
  if (then == "umad-leave") {
    ibv_port_attr pa{};
    if (ibv_query_port(id->verbs, id->port_num, &pa) || ibv_query_gid(id->verbs, id->port_num, 0, &port_gid))
      fail("ibv_query_port");
    sm_lid = pa.sm_lid;
    umad_fd = umad_init() < 0 ? -1 : umad_open_port(ibv_get_device_name(id->verbs->device), id->port_num);
    agent = umad_fd < 0 ? -1 : umad_register(umad_fd, 0x03, 2, 0, nullptr);
    if (agent < 0) fail("umad_register");
    umad_buf.resize(umad_size() + 256);
  }

  std::vector<uint8_t> buf(static_cast<std::size_t>(count) * static_cast<std::size_t>(size), 0x5A);
  ibv_mr* mr = ibv_reg_mr(pd, buf.data(), buf.size(), 0);
  if (!mr) fail("ibv_reg_mr");
  for (int i = 0; i < count; ++i) {
    uint8_t* m = &buf[static_cast<std::size_t>(i) * static_cast<std::size_t>(size)];
    const uint32_t n = htonl(static_cast<uint32_t>(i));
    std::memcpy(m, &n, sizeof n);
    ibv_sge sge{reinterpret_cast<uintptr_t>(m), static_cast<uint32_t>(size), mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = static_cast<uint64_t>(i);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = wait ? IBV_SEND_SIGNALED : 0;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = ud.qp_num;
    wr.wr.ud.remote_qkey = ud.qkey;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(id->qp, &wr, &bad)) fail("ibv_post_send");
  }
  for (int done = 0; wait && done < count;) {
    ibv_wc wc[32];
    const int n = ibv_poll_cq(cq, 32, wc);
    if (n < 0) fail("ibv_poll_cq");
    for (int i = 0; i < n; ++i)
      if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != static_cast<uint64_t>(done++)) {
        std::fprintf(stderr, "order_sender: completion %d: %s, wr_id %llu\n", done - 1,
                     ibv_wc_status_str(wc[i].status), static_cast<unsigned long long>(wc[i].wr_id));
        return 1;
      }
  }
  std::printf("sent %d\n", count);
  std::fflush(stdout);

  if (then == "exit") _exit(0);
  if (then == "umad-leave") {
    send_sa_delete(umad_fd, agent, sm_lid, ud.ah_attr.grh.dgid, port_gid, umad_buf);
    int len = static_cast<int>(umad_buf.size() - umad_size());
    const int got = umad_recv(umad_fd, umad_buf.data(), &len, 5000);
    const auto* answer = static_cast<uint8_t*>(umad_get_mad(umad_buf.data()));
    if (got < 0 || umad_status(umad_buf.data()) != 0 || answer[3] != 0x95 ||
        mad::sa_status(mad::ConstSaBuffer(answer, 256)) != 0) {
      std::fprintf(stderr, "order_sender: the SA did not take the Delete\n");
      return 1;
    }
    std::printf("left through umad\n");
    _exit(0);  // the SA no longer has the membership that rdma_cm would leave
  }
  if (then == "destroy-qp" || then == "destroy-id") rdma_destroy_qp(id);
  if (then != "destroy-id" && rdma_leave_multicast(id, reinterpret_cast<sockaddr*>(&dst))) fail("rdma_leave_multicast");
  if (then != "destroy-qp" && then != "destroy-id") rdma_destroy_qp(id);
  ibv_destroy_ah(ah);
  if (rdma_destroy_id(id)) fail("rdma_destroy_id");
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  rdma_destroy_event_channel(ch);
  return 0;
}
