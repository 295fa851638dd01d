// RC connections through the built librdmacm on an in-process fabric, as
// applications make them: a server on H2 listens in RDMA_PS_TCP, a client
// on H1 connects an RC QP the library made; librdmacm moves both QPs to RTS
// (the client's on CONNECT_RESPONSE, which it reports as ESTABLISHED),
// SENDs and an RDMA WRITE whose rkey travelled in the private data cross,
// and rdma_disconnect ends it on both sides. Also: a client that moves its
// own QP (CONNECT_RESPONSE, then rdma_establish), the synchronous
// endpoints of rdma_server/rdma_client, and the errno of bad parameters.
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include <cstring>
#include <thread>

#include "tests/api/rdmacm_fabric.h"

namespace {

using namespace ibfab::testing;

constexpr uint16_t kPort = 7480;

// An RC QP on `id` (the library makes its CQs) and `buf` registered for
// remote writes; 0 or -1.
int make_rc_qp(rdma_cm_id* id, std::vector<uint8_t>& buf, ibv_mr*& mr) {
  ibv_qp_init_attr a{};
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = a.cap.max_recv_wr = 64;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  a.sq_sig_all = 1;
  if (rdma_create_qp(id, nullptr, &a) != 0) return -1;
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  mr = ibv_reg_mr(id->pd, buf.data(), buf.size(), access);
  return mr ? 0 : -1;
}

ibv_qp_state qp_state(ibv_qp* qp) {
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  return ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) == 0 ? attr.qp_state : IBV_QPS_UNKNOWN;
}

struct Remote {
  uint64_t addr;
  uint32_t rkey;
};

class RdmacmRc : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_cm_fabric(); }

  void SetUp() override {
    ASSERT_EQ(server_.bind_status, 0);
    ASSERT_EQ(rdma_listen(server_.id, 4), 0);
  }
  void TearDown() override {
    for (ibv_mr* m : {server_mr_, client_mr_})
      if (m) ibv_dereg_mr(m);
    if (conn_) {
      if (conn_->qp) rdma_destroy_qp(conn_);
      rdma_destroy_id(conn_);
    }
  }

  void resolve(rdma_cm_id* id) {
    sockaddr_in dst = ipv4("10.1.0.2", kPort);
    ASSERT_EQ(rdma_resolve_addr(id, nullptr, sa(dst), 2000), 0);
    expect_event(client_.ch, RDMA_CM_EVENT_ADDR_RESOLVED);
    ASSERT_EQ(rdma_resolve_route(id, 2000), 0);
    expect_event(client_.ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
  }

  // The server's side of a request: its new id gets a QP and accepts with
  // the buffer's address and rkey as private data.
  void accept_request() {
    rdma_cm_event* req = next_event(server_.ch);
    ASSERT_NE(req, nullptr);
    ASSERT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST) << rdma_event_str(req->event);
    conn_ = req->id;
    EXPECT_EQ(conn_->qp_type, IBV_QPT_RC);
    EXPECT_STREQ(static_cast<const char*>(req->param.conn.private_data), "client");
    EXPECT_EQ(req->param.conn.qp_num, client_.id->qp ? client_.id->qp->qp_num : 0x42u);
    ASSERT_EQ(make_rc_qp(conn_, server_buf_, server_mr_), 0);
    for (uint32_t i = 0; i < 16; ++i)
      ASSERT_EQ(post_one_recv(conn_->qp, i, {reinterpret_cast<uint64_t>(server_buf_.data() + 256 * i), 256,
                                             server_mr_->lkey}),
                0);
    const Remote mine{reinterpret_cast<uint64_t>(server_buf_.data() + 8192), server_mr_->rkey};
    rdma_conn_param p{};
    p.private_data = &mine;
    p.private_data_len = sizeof mine;
    p.responder_resources = 1;
    p.initiator_depth = 1;
    rdma_ack_cm_event(req);
    ASSERT_EQ(rdma_accept(conn_, &p), 0);
    EXPECT_EQ(qp_state(conn_->qp), IBV_QPS_RTS);
  }

  Endpoint server_{"10.1.0.2", kPort, RDMA_PS_TCP};
  Endpoint client_{nullptr, 0, RDMA_PS_TCP};
  std::vector<uint8_t> server_buf_ = std::vector<uint8_t>(1 << 16);
  std::vector<uint8_t> client_buf_ = std::vector<uint8_t>(1 << 16);
  ibv_mr* server_mr_ = nullptr;
  ibv_mr* client_mr_ = nullptr;
  rdma_cm_id* conn_ = nullptr;
};

TEST_F(RdmacmRc, ConnectsSendsWritesAndDisconnects) {
  resolve(client_.id);
  ASSERT_EQ(make_rc_qp(client_.id, client_buf_, client_mr_), 0);
  EXPECT_EQ(qp_state(client_.id->qp), IBV_QPS_INIT);
  rdma_conn_param p{};
  p.private_data = "client";
  p.private_data_len = 7;
  p.responder_resources = 1;
  p.initiator_depth = 1;
  p.retry_count = 7;
  uint8_t ack_timeout = 21;  // rdma_set_ack_timeout: the QP's timeout in place of the path's
  ASSERT_EQ(rdma_set_option(client_.id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack_timeout, 1), 0);
  ASSERT_EQ(rdma_connect(client_.id, &p), 0);
  accept_request();

  rdma_cm_event* est = next_event(client_.ch);
  ASSERT_NE(est, nullptr);
  ASSERT_EQ(est->event, RDMA_CM_EVENT_ESTABLISHED) << rdma_event_str(est->event);
  EXPECT_EQ(est->status, 0);
  EXPECT_EQ(est->param.conn.qp_num, conn_->qp->qp_num);
  ASSERT_GE(est->param.conn.private_data_len, sizeof(Remote));
  Remote remote;
  std::memcpy(&remote, est->param.conn.private_data, sizeof remote);
  rdma_ack_cm_event(est);
  EXPECT_EQ(qp_state(client_.id->qp), IBV_QPS_RTS);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(ibv_query_qp(client_.id->qp, &attr, IBV_QP_TIMEOUT, &init), 0);
  EXPECT_EQ(attr.timeout, 21);
  expect_event(server_.ch, RDMA_CM_EVENT_ESTABLISHED);

  // Sixteen SENDs, each to its own receive, in order.
  for (uint32_t i = 0; i < 16; ++i) {
    std::snprintf(reinterpret_cast<char*>(client_buf_.data() + 64 * i), 64, "message %u", i);
    ASSERT_EQ(rdma_post_send(client_.id, nullptr, client_buf_.data() + 64 * i, 64, client_mr_, IBV_SEND_SIGNALED), 0);
  }
  const std::vector<ibv_wc> got = poll_for(conn_->recv_cq, 16);
  ASSERT_EQ(got.size(), 16u);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(got[i].status, IBV_WC_SUCCESS);
    EXPECT_EQ(got[i].wr_id, i);
    EXPECT_EQ(got[i].byte_len, 64u);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(server_buf_.data() + 256 * i)), "message " + std::to_string(i));
  }
  EXPECT_EQ(poll_for(client_.id->send_cq, 16).size(), 16u);

  // An RDMA WRITE to the address and rkey the server's accept carried.
  std::memcpy(client_buf_.data() + 4096, "written", 8);
  ASSERT_EQ(rdma_post_write(client_.id, nullptr, client_buf_.data() + 4096, 8, client_mr_, IBV_SEND_SIGNALED,
                            remote.addr, remote.rkey),
            0);
  const std::vector<ibv_wc> wrote = poll_for(client_.id->send_cq, 1);
  ASSERT_EQ(wrote.size(), 1u);
  EXPECT_EQ(wrote[0].status, IBV_WC_SUCCESS);
  EXPECT_STREQ(reinterpret_cast<const char*>(server_buf_.data() + 8192), "written");

  ASSERT_EQ(rdma_disconnect(client_.id), 0);
  EXPECT_EQ(qp_state(client_.id->qp), IBV_QPS_ERR);
  expect_event(server_.ch, RDMA_CM_EVENT_DISCONNECTED);
  ASSERT_EQ(rdma_disconnect(conn_), 0);
  expect_event(client_.ch, RDMA_CM_EVENT_DISCONNECTED);
}

// A client with a QP of its own: CONNECT_RESPONSE reaches it, it moves the
// QP with rdma_init_qp_attr and sends the RTU with rdma_establish.
TEST_F(RdmacmRc, AClientWithItsOwnQpEstablishesAfterConnectResponse) {
  resolve(client_.id);
  ibv_cq* cq = ibv_create_cq(client_.id->verbs, 16, nullptr, nullptr, 0);
  ASSERT_NE(cq, nullptr);
  ibv_qp_init_attr a{};
  a.qp_type = IBV_QPT_RC;
  a.send_cq = a.recv_cq = cq;
  a.cap.max_send_wr = a.cap.max_recv_wr = 4;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  ibv_qp* qp = ibv_create_qp(client_.id->pd, &a);
  ASSERT_NE(qp, nullptr);
  rdma_conn_param p{};
  p.private_data = "client";
  p.private_data_len = 7;
  p.qp_num = 0x42;  // announced, not checked: the server's accept sees it
  EXPECT_FAILS_WITH(rdma_establish(client_.id), EINVAL);  // no REP yet
  p.qp_num = qp->qp_num;
  ASSERT_EQ(rdma_connect(client_.id, &p), 0);
  rdma_cm_event* req = next_event(server_.ch);
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->param.conn.qp_num, qp->qp_num);
  conn_ = req->id;
  ASSERT_EQ(make_rc_qp(conn_, server_buf_, server_mr_), 0);
  rdma_ack_cm_event(req);
  ASSERT_EQ(rdma_accept(conn_, nullptr), 0);

  rdma_cm_event* rep = next_event(client_.ch);
  ASSERT_NE(rep, nullptr);
  ASSERT_EQ(rep->event, RDMA_CM_EVENT_CONNECT_RESPONSE) << rdma_event_str(rep->event);
  EXPECT_EQ(rep->param.conn.qp_num, conn_->qp->qp_num);
  rdma_ack_cm_event(rep);
  for (ibv_qp_state s : {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS}) {
    ibv_qp_attr attr{};
    attr.qp_state = s;
    int mask = 0;
    ASSERT_EQ(rdma_init_qp_attr(client_.id, &attr, &mask), 0);
    ASSERT_EQ(ibv_modify_qp(qp, &attr, mask), 0) << s;
  }
  EXPECT_FAILS_WITH(rdma_connect(client_.id, &p), EINVAL);  // connecting twice
  ASSERT_EQ(rdma_establish(client_.id), 0);
  expect_event(server_.ch, RDMA_CM_EVENT_ESTABLISHED);
  ibv_destroy_qp(qp);
  ibv_destroy_cq(cq);
}

TEST_F(RdmacmRc, BadParametersFailAtTheCall) {
  resolve(client_.id);
  // RDMA_PS_TCP without a QP needs parameters.
  EXPECT_FAILS_WITH(rdma_connect(client_.id, nullptr), EINVAL);
  ibv_device_attr attr{};
  ASSERT_EQ(ibv_query_device(client_.id->verbs, &attr), 0);
  rdma_conn_param p{};
  p.qp_num = 1;
  p.initiator_depth = static_cast<uint8_t>(attr.max_qp_init_rd_atom + 1);
  EXPECT_FAILS_WITH(rdma_connect(client_.id, &p), EINVAL);
  p.initiator_depth = 0;
  p.responder_resources = static_cast<uint8_t>(attr.max_qp_rd_atom + 1);
  EXPECT_FAILS_WITH(rdma_connect(client_.id, &p), EINVAL);
  // No connection to end.
  ASSERT_EQ(make_rc_qp(client_.id, client_buf_, client_mr_), 0);
  EXPECT_FAILS_WITH(rdma_disconnect(client_.id), EINVAL);
}

// rdma_server / rdma_client's shape: endpoints, rdma_get_request on a
// thread, synchronous connect and accept.
TEST_F(RdmacmRc, SynchronousEndpointsConnect) {
  rdma_addrinfo* passive = cm_addrinfo("10.1.0.2", "7481", true, RDMA_PS_TCP);
  ASSERT_NE(passive, nullptr);
  ibv_qp_init_attr attr{};
  attr.cap.max_send_wr = attr.cap.max_recv_wr = 8;
  attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = 16;
  attr.sq_sig_all = 1;
  rdma_cm_id* listener = nullptr;
  ASSERT_EQ(rdma_create_ep(&listener, passive, nullptr, &attr), 0);
  rdma_freeaddrinfo(passive);
  ASSERT_EQ(rdma_listen(listener, 1), 0);
  rdma_cm_id* conn = nullptr;
  char got[16] = {};
  ibv_mr* recv_mr = nullptr;
  std::thread server([&] {
    ASSERT_EQ(rdma_get_request(listener, &conn), 0);
    ASSERT_NE(conn->qp, nullptr);
    EXPECT_EQ(conn->qp->qp_type, IBV_QPT_RC);
    recv_mr = rdma_reg_msgs(conn, got, sizeof got);
    ASSERT_NE(recv_mr, nullptr);
    ASSERT_EQ(rdma_post_recv(conn, nullptr, got, sizeof got, recv_mr), 0);
    ASSERT_EQ(rdma_accept(conn, nullptr), 0);  // waits for ESTABLISHED
    ibv_wc wc{};
    ASSERT_EQ(rdma_get_recv_comp(conn, &wc), 1);
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_EQ(rdma_disconnect(conn), 0);  // waits for DISCONNECTED
  });

  rdma_addrinfo* active = cm_addrinfo("10.1.0.2", "7481", false, RDMA_PS_TCP);
  ASSERT_NE(active, nullptr);
  rdma_cm_id* id = nullptr;
  ibv_qp_init_attr client_attr = attr;
  ASSERT_EQ(rdma_create_ep(&id, active, nullptr, &client_attr), 0);
  rdma_freeaddrinfo(active);
  ASSERT_EQ(rdma_connect(id, nullptr), 0);  // waits for the REP, then ESTABLISHED
  EXPECT_EQ(qp_state(id->qp), IBV_QPS_RTS);
  char text[16] = "synchronous";
  ASSERT_EQ(rdma_post_send(id, nullptr, text, sizeof text, nullptr, IBV_SEND_INLINE), 0);
  ibv_wc wc{};
  ASSERT_EQ(rdma_get_send_comp(id, &wc), 1);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  // Both sides disconnect at once, as rdma_server and rdma_client do: one
  // side's DREQ is answered by the other's rdma_disconnect.
  EXPECT_EQ(rdma_disconnect(id), 0);  // waits for DISCONNECTED
  server.join();
  EXPECT_STREQ(got, "synchronous");
  rdma_dereg_mr(recv_mr);
  rdma_destroy_ep(conn);
  rdma_destroy_ep(id);
  rdma_destroy_ep(listener);
}

}  // namespace
