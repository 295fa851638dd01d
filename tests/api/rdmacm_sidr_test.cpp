// A UD "connection" through SIDR, as udaddy makes one, through the built
// library on an in-process fabric: the server listens on host B, the client
// on host A resolves its address and route and connects with private data;
// the server's CONNECT_REQUEST brings a new id, which accepts (the client's
// ESTABLISHED gives the server's QP and address handle, and a UD send
// crosses) or rejects (the client's UNREACHABLE carries the SIDR status).
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include <cstring>
#include <thread>

#include "tests/api/rdmacm_fabric.h"

namespace {

using namespace ibfab::testing;

constexpr uint16_t kPort = 7174;
constexpr uint8_t kSidrReject = 2;  // IBTA SIDR REP status: rejected

class RdmacmSidr : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ibfab::testing::use_embedded_cm_fabric(); }

  void SetUp() override {
    ASSERT_EQ(server_.bind_status, 0);
    ASSERT_EQ(rdma_listen(server_.id, 4), 0);
    ASSERT_NE(client_.id, nullptr);
  }

  // The client's address and route to the server.
  void resolve() {
    sockaddr_in src = ipv4("10.1.0.1");
    sockaddr_in dst = ipv4("10.1.0.2", kPort);
    ASSERT_EQ(rdma_resolve_addr(client_.id, sa(src), sa(dst), 2000), 0);
    expect_event(client_.ch, RDMA_CM_EVENT_ADDR_RESOLVED);
    ASSERT_NE(client_.id->verbs, nullptr);
    ASSERT_EQ(rdma_resolve_route(client_.id, 2000), 0);
    expect_event(client_.ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
  }

  // Resolves, makes the client's QP and connects with `text` as private
  // data; returns the server's CONNECT_REQUEST (the caller acks it).
  rdma_cm_event* request(const char* text) {
    resolve();
    if (client_.make_qp() != 0) return nullptr;
    rdma_conn_param p{};
    p.private_data = text;
    p.private_data_len = static_cast<uint8_t>(std::strlen(text) + 1);
    if (rdma_connect(client_.id, &p) != 0) return nullptr;
    rdma_cm_event* req = next_event(server_.ch);
    EXPECT_NE(req, nullptr);
    if (req) EXPECT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST) << rdma_event_str(req->event);
    return req;
  }

  Endpoint server_{"10.1.0.2", kPort};
  Endpoint client_{nullptr};
};

TEST_F(RdmacmSidr, RouteResolutionGivesOnePathToTheServer) {
  resolve();
  rdma_cm_id* id = client_.id;
  ASSERT_EQ(id->route.num_paths, 1);
  ASSERT_NE(id->route.path_rec, nullptr);
  const ibv_sa_path_rec& path = id->route.path_rec[0];
  ibv_port_attr server_port{};
  ASSERT_EQ(ibv_query_port(server_.id->verbs, 1, &server_port), 0);
  ibv_port_attr client_port{};
  ASSERT_EQ(ibv_query_port(id->verbs, 1, &client_port), 0);
  EXPECT_EQ(be16toh(path.dlid), server_port.lid);
  EXPECT_EQ(be16toh(path.slid), client_port.lid);
  EXPECT_EQ(path.pkey, htobe16(0xFFFF));
  EXPECT_EQ(path.numb_path, 1);
  EXPECT_EQ(std::memcmp(path.dgid.raw, server_.id->route.addr.addr.ibaddr.sgid.raw, 16), 0);
  EXPECT_EQ(std::memcmp(id->route.addr.addr.ibaddr.dgid.raw, path.dgid.raw, 16), 0);
  EXPECT_EQ(rdma_get_dst_port(id), htons(kPort));
}

TEST_F(RdmacmSidr, AcceptedRequestEstablishesAndTrafficCrosses) {
  rdma_cm_event* req = request("hello");
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->listen_id, server_.id);
  rdma_cm_id* conn = req->id;
  ASSERT_NE(conn, nullptr);
  EXPECT_NE(conn, server_.id);
  EXPECT_EQ(conn->context, server_.id->context);
  EXPECT_EQ(conn->channel, server_.ch);
  EXPECT_EQ(conn->verbs, server_.id->verbs);
  EXPECT_EQ(conn->route.addr.dst_sin.sin_addr.s_addr, ipv4("10.1.0.1").sin_addr.s_addr);
  ASSERT_GE(req->param.ud.private_data_len, 6);
  EXPECT_STREQ(static_cast<const char*>(req->param.ud.private_data), "hello");
  ASSERT_EQ(server_.make_qp_on(conn), 0);
  ASSERT_EQ(server_.post_recv(conn, 7, 0, 256), 0);
  rdma_conn_param accept{};
  accept.private_data = "welcome";
  accept.private_data_len = 8;
  ASSERT_EQ(rdma_accept(conn, &accept), 0);
  rdma_ack_cm_event(req);

  rdma_cm_event* est = next_event(client_.ch);
  ASSERT_NE(est, nullptr);
  ASSERT_EQ(est->event, RDMA_CM_EVENT_ESTABLISHED) << rdma_event_str(est->event);
  EXPECT_EQ(est->status, 0);
  EXPECT_EQ(est->param.ud.qp_num, conn->qp->qp_num);
  EXPECT_EQ(est->param.ud.qkey, static_cast<uint32_t>(RDMA_UDP_QKEY));
  ibv_port_attr server_port{};
  ASSERT_EQ(ibv_query_port(conn->verbs, 1, &server_port), 0);
  EXPECT_EQ(est->param.ud.ah_attr.dlid, server_port.lid);
  ASSERT_GE(est->param.ud.private_data_len, 8);
  EXPECT_STREQ(static_cast<const char*>(est->param.ud.private_data), "welcome");
  ibv_ah* ah = ibv_create_ah(client_.id->pd, &est->param.ud.ah_attr);
  ASSERT_NE(ah, nullptr);
  const uint32_t qpn = est->param.ud.qp_num;
  const uint32_t qkey = est->param.ud.qkey;
  rdma_ack_cm_event(est);

  std::memcpy(client_.buf.data() + 4096, "over SIDR", 10);
  ASSERT_EQ(client_.send(client_.id, ah, qpn, qkey, 4096, 10), 0);
  const std::vector<ibv_wc> got = poll_for(conn->recv_cq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(got[0].src_qp, client_.id->qp->qp_num);
  EXPECT_STREQ(reinterpret_cast<const char*>(server_.buf.data() + 40), "over SIDR");
  ibv_destroy_ah(ah);

  // A UD id has no disconnection handshake: the QP goes to the error state.
  EXPECT_EQ(rdma_disconnect(client_.id), 0);
  ibv_qp_attr attr{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(ibv_query_qp(client_.id->qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
  rdma_destroy_qp(conn);
  EXPECT_EQ(rdma_destroy_id(conn), 0);
}

TEST_F(RdmacmSidr, RejectedRequestIsUnreachableWithTheSidrStatus) {
  rdma_cm_event* req = request("knock");
  ASSERT_NE(req, nullptr);
  rdma_cm_id* conn = req->id;
  ASSERT_EQ(rdma_reject(conn, "no", 3), 0);
  rdma_ack_cm_event(req);
  rdma_cm_event* ev = next_event(client_.ch);
  ASSERT_NE(ev, nullptr);
  EXPECT_EQ(ev->event, RDMA_CM_EVENT_UNREACHABLE) << rdma_event_str(ev->event);
  EXPECT_EQ(ev->status, kSidrReject);
  rdma_ack_cm_event(ev);
  EXPECT_EQ(rdma_destroy_id(conn), 0);
}

// What the kernel does with the connected-mode calls on a UD id.
TEST_F(RdmacmSidr, ConnectedModeCallsOnUdIds) {
  // Before any address: no device yet.
  EXPECT_FAILS_WITH(rdma_connect(client_.id, nullptr), EINVAL);
  EXPECT_FAILS_WITH(rdma_disconnect(client_.id), EINVAL);
  EXPECT_FAILS_WITH(rdma_notify(client_.id, IBV_EVENT_COMM_EST), EINVAL);
  resolve();
  // Bound, no IB CM id yet: notifying is accepted, disconnecting is not.
  EXPECT_EQ(rdma_notify(client_.id, IBV_EVENT_COMM_EST), 0);
  EXPECT_FAILS_WITH(rdma_disconnect(client_.id), EINVAL);
  // The listener has an IB CM id: a LID change is noted, nothing else.
  EXPECT_EQ(rdma_notify(server_.id, IBV_EVENT_LID_CHANGE), 0);
  EXPECT_FAILS_WITH(rdma_notify(server_.id, IBV_EVENT_COMM_EST), EINVAL);
  // rdma_establish needs no QP on the id.
  ASSERT_EQ(client_.make_qp(), 0);
  EXPECT_FAILS_WITH(rdma_establish(client_.id), EINVAL);
}

// The synchronous calls, as rdma-core's rdma_server/rdma_client examples
// use them: a passive endpoint, rdma_get_request on a thread, an active
// endpoint made in one call, rdma_connect waiting for ESTABLISHED.
TEST_F(RdmacmSidr, SynchronousEndpoints) {
  rdma_addrinfo* passive = cm_addrinfo("10.1.0.2", "7175", true);
  ASSERT_NE(passive, nullptr);
  ibv_qp_init_attr attr{};
  attr.cap.max_send_wr = attr.cap.max_recv_wr = 8;
  attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
  rdma_cm_id* listener = nullptr;
  ASSERT_EQ(rdma_create_ep(&listener, passive, nullptr, &attr), 0);
  rdma_freeaddrinfo(passive);
  ASSERT_EQ(rdma_listen(listener, 1), 0);
  rdma_cm_id* conn = nullptr;
  std::thread server([&] {
    ASSERT_EQ(rdma_get_request(listener, &conn), 0);
    ASSERT_NE(conn->qp, nullptr);  // made from the endpoint's attributes
    EXPECT_EQ(conn->event->event, RDMA_CM_EVENT_CONNECT_REQUEST);
    EXPECT_EQ(rdma_accept(conn, nullptr), 0);
  });

  rdma_addrinfo* active = cm_addrinfo("10.1.0.2", "7175", false);
  ASSERT_NE(active, nullptr);
  rdma_cm_id* id = nullptr;
  ibv_qp_init_attr client_attr = attr;
  ASSERT_EQ(rdma_create_ep(&id, active, nullptr, &client_attr), 0);
  rdma_freeaddrinfo(active);
  ASSERT_NE(id->qp, nullptr);
  EXPECT_NE(id->send_cq, nullptr);  // rdma_verbs.h's helpers poll these
  EXPECT_EQ(id->route.num_paths, 1);
  ASSERT_EQ(rdma_connect(id, nullptr), 0);
  server.join();
  ASSERT_NE(id->event, nullptr);
  EXPECT_EQ(id->event->event, RDMA_CM_EVENT_ESTABLISHED);
  ASSERT_NE(conn, nullptr);
  EXPECT_EQ(id->event->param.ud.qp_num, conn->qp->qp_num);
  rdma_destroy_ep(id);
  rdma_destroy_ep(conn);
  rdma_destroy_ep(listener);
}

}  // namespace
