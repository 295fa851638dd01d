// rdma_cm's XRC ids (api/server/kernel/rdma_cm_connected.cpp) over real CM
// connections, as librdmacm drives them for rdma_xclient and rdma_xserver:
// a target (XRC_RECV) listener on H2 in RDMA_PS_IB, an initiator
// (XRC_SEND) on H6 across a spine. The REQ, REP and DREQ as the fabric
// carries them, the QP attributes rdma_init_qp_attr gives each side, and
// the requests a listener of another QP type refuses.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "fabric/mad/cm_dreq.h"
#include "fabric/mad/cm_rep.h"
#include "fabric/mad/cm_req.h"
#include "fabric/wire/packet_codec.h"
#include "fabric/wire/pcap_writer.h"
#include "tests/server/kernel/cm_service_fixture.h"

namespace ibfab::api::cm_test {
namespace {

constexpr uint16_t kPort = 7472;
constexpr int32_t kInvalidServiceId = 8;  // IB_CM_REJ_INVALID_SERVICE_ID
constexpr uint32_t kInitiatorQpn = 0x1234;
constexpr uint32_t kTargetQpn = 0x5678;

// The first CM message of type M in a capture (ERF records, as the engine's
// PcapWriter writes them), or nullopt.
template <class M>
std::optional<M> first_in(const std::vector<uint8_t>& file) {
  constexpr std::size_t kFileHeader = 24, kRecordHeader = 16;
  for (std::size_t at = kFileHeader; at + kRecordHeader <= file.size();) {
    uint32_t len = 0;
    std::memcpy(&len, &file[at + 8], 4);
    const std::size_t packet = at + kRecordHeader + wire::PcapWriter::kErfHeaderSize;
    at += kRecordHeader + len;
    if (at > file.size() || packet > at) break;
    const wire::ParsedPacket p = wire::parse_packet(std::span<const uint8_t>(&file[packet], at - packet), false);
    if (p.ok() && p.deth)
      if (std::optional<M> m = mad::cm_message<M>(p.payload)) return m;
  }
  return std::nullopt;
}

class RdmaCmXrc : public CmService {
 protected:
  static uint32_t listen(CmClient& server, uint16_t port, uint8_t qp_type) {
    const uint32_t id = server.create_id(RDMA_PS_IB, qp_type);
    EXPECT_EQ(server.bind(id, "0.0.0.0", port), 0);
    EXPECT_EQ(server.simple(MsgType::CmListen, id, 8), 0);
    return id;
  }
  static uint32_t routed(CmClient& client, uint16_t port, uint8_t qp_type) {
    const uint32_t id = client.create_id(RDMA_PS_IB, qp_type);
    EXPECT_EQ(client.resolve(id, nullptr, "10.1.0.2", port), 0);
    EXPECT_EQ(client.next()->event, RDMA_CM_EVENT_ADDR_RESOLVED);
    EXPECT_EQ(client.simple(MsgType::CmResolveRoute, id, 2000), 0);
    EXPECT_EQ(client.next()->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
    return id;
  }
  // What librdmacm sends for rdma_connect or rdma_accept: `qp_num`, the
  // device's depths, the retry counts.
  static CmConnect offer(uint32_t id, uint32_t qp_num) {
    CmConnect c;
    c.id = id;
    c.qp_num = qp_num;
    c.param.responder_resources = 4;
    c.param.initiator_depth = 4;
    c.param.retry_count = 6;
    c.param.rnr_retry_count = 5;
    return c;
  }
  static int64_t send(CmClient& c, MsgType type, const CmConnect& body) {
    return c.request(type, &body, sizeof body).value;
  }
  static CmIdInfo qp_attr(CmClient& c, uint32_t id, uint32_t state) {
    CmIdRequest r{id, state};
    const CmReply reply = c.request(MsgType::CmInitQpAttr, &r, sizeof r);
    EXPECT_EQ(reply.value, 0) << "state " << state;
    return reply.info;
  }

  // Captures every packet into a file of the test's while `run` runs; the
  // file's bytes.
  template <class Run>
  std::vector<uint8_t> captured(Run run) {
    const std::string file = ::testing::TempDir() + "rdma_cm_xrc.pcap";
    wire::PcapWriter writer;
    EXPECT_EQ(writer.open(file), "");
    served_.read([&] {
      served_.engine().fabric().capture(&writer);
      return 0;
    });
    run();
    served_.read([&] {
      served_.engine().fabric().capture(nullptr);
      return 0;
    });
    EXPECT_EQ(writer.close(), "");
    std::ifstream in(file, std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::remove(file.c_str());
    return bytes;
  }
};

TEST_F(RdmaCmXrc, TheRequestIsXrcTheReplyNamesTheTargetByItsEecnAndTheDisconnectionNamesIt) {
  CmClient server(path(), "H2"), client(path(), "H6");
  listen(server, kPort, IBV_QPT_XRC_RECV);
  const uint32_t id = routed(client, kPort, IBV_QPT_XRC_SEND);
  uint32_t target = 0;
  const std::vector<uint8_t> wire = captured([&] {
    ASSERT_EQ(send(client, MsgType::CmConnect, offer(id, kInitiatorQpn)), 0);
    const auto req = server.next();
    ASSERT_TRUE(req);
    ASSERT_EQ(req->event, RDMA_CM_EVENT_CONNECT_REQUEST);
    EXPECT_EQ(req->qp_num, kInitiatorQpn);
    EXPECT_EQ(req->param.initiator_depth, 0) << "the REQ carries no responder resources";
    target = req->id;
    ASSERT_EQ(send(server, MsgType::CmAccept, offer(target, kTargetQpn)), 0);
    const auto rep = client.next();
    ASSERT_TRUE(rep);
    ASSERT_EQ(rep->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
    EXPECT_EQ(rep->qp_num, kTargetQpn);
    EXPECT_TRUE(rep->param.srq);
    CmConnect rtu;
    rtu.id = id;
    ASSERT_EQ(send(client, MsgType::CmAccept, rtu), 0);
    ASSERT_EQ(server.next()->event, RDMA_CM_EVENT_ESTABLISHED);
    ASSERT_EQ(client.simple(MsgType::CmDisconnect, id), 0);
    ASSERT_EQ(server.next()->event, RDMA_CM_EVENT_DISCONNECTED);
  });

  // cm.c's cm_format_req for an XRC initiator: the extended transport, and
  // no responder resources, retry counts or SRQ.
  const std::optional<mad::CmReq> req = first_in<mad::CmReq>(wire);
  ASSERT_TRUE(req);
  EXPECT_EQ(req->transport_service_type, mad::cm_transport::kExtended);
  EXPECT_EQ(req->extended_transport_type, mad::cm_ext_transport::kXrc);
  EXPECT_EQ(req->local_qpn, kInitiatorQpn);
  EXPECT_EQ(req->initiator_depth, 4);
  EXPECT_EQ(req->responder_resources, 0);
  EXPECT_EQ(req->retry_count, 0);
  EXPECT_EQ(req->rnr_retry_count, 0);
  EXPECT_FALSE(req->srq);
  // cm_format_rep for a target: its QP as LocalEECN, SRQ set, no initiator depth.
  const std::optional<mad::CmRep> rep = first_in<mad::CmRep>(wire);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->local_qpn, 0u);
  EXPECT_EQ(rep->local_eecn, kTargetQpn);
  EXPECT_TRUE(rep->srq);
  EXPECT_EQ(rep->initiator_depth, 0);
  EXPECT_EQ(rep->responder_resources, 4);
  const std::optional<mad::CmDreq> dreq = first_in<mad::CmDreq>(wire);
  ASSERT_TRUE(dreq);
  EXPECT_EQ(dreq->remote_qpn_eecn, kTargetQpn);
}

// What ib_cm gives each half for its QP type (cm.c's cm_init_qp_*_attr),
// which are the masks libibverbs' transitions of XRC_SEND and XRC_RECV
// QPs require and allow.
TEST_F(RdmaCmXrc, EachSideGetsTheAttributesOfItsQpType) {
  CmClient server(path(), "H2"), client(path(), "H6");
  listen(server, kPort, IBV_QPT_XRC_RECV);
  const uint32_t id = routed(client, kPort, IBV_QPT_XRC_SEND);
  constexpr unsigned kInit = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  constexpr unsigned kRtr = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

  const CmIdInfo before = qp_attr(client, id, IBV_QPS_INIT);  // rdma_create_qp's, before rdma_connect
  EXPECT_EQ(before.qp_attr_mask, kInit);
  EXPECT_EQ(before.qp_access_flags, 0u);
  ASSERT_EQ(send(client, MsgType::CmConnect, offer(id, kInitiatorQpn)), 0);
  const auto req = server.next();
  ASSERT_TRUE(req);
  const uint32_t target = req->id;

  // The target, before its REP (librdmacm's rdma_accept moves it first).
  const CmIdInfo t_init = qp_attr(server, target, IBV_QPS_INIT);
  EXPECT_EQ(t_init.qp_attr_mask, kInit);
  EXPECT_EQ(t_init.qp_access_flags, unsigned{IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC});
  const CmIdInfo t_rtr = qp_attr(server, target, IBV_QPS_RTR);
  EXPECT_EQ(t_rtr.qp_attr_mask, kRtr | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  EXPECT_EQ(t_rtr.dest_qp_num, kInitiatorQpn);
  EXPECT_EQ(t_rtr.max_dest_rd_atomic, 4);
  ASSERT_EQ(send(server, MsgType::CmAccept, offer(target, kTargetQpn)), 0);
  const CmIdInfo t_rts = qp_attr(server, target, IBV_QPS_RTS);
  EXPECT_EQ(t_rts.qp_attr_mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT);
  EXPECT_NE(t_rts.timeout, 0);

  // The initiator, once the REP came.
  ASSERT_EQ(client.next()->event, RDMA_CM_EVENT_CONNECT_RESPONSE);
  const CmIdInfo i_init = qp_attr(client, id, IBV_QPS_INIT);
  EXPECT_EQ(i_init.qp_access_flags, unsigned{IBV_ACCESS_REMOTE_WRITE}) << "the target offers no initiator depth";
  const CmIdInfo i_rtr = qp_attr(client, id, IBV_QPS_RTR);
  EXPECT_EQ(i_rtr.qp_attr_mask, kRtr);
  EXPECT_EQ(i_rtr.dest_qp_num, kTargetQpn);
  const CmIdInfo i_rts = qp_attr(client, id, IBV_QPS_RTS);
  EXPECT_EQ(i_rtr.rq_psn, t_rts.sq_psn);
  EXPECT_EQ(t_rtr.rq_psn, i_rts.sq_psn);
  EXPECT_EQ(i_rts.qp_attr_mask,
            IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
  EXPECT_EQ(i_rts.retry_cnt, 6) << "its own, though the REQ did not carry it";
  EXPECT_EQ(i_rts.rnr_retry, 5) << "the REP's";
  EXPECT_EQ(i_rts.max_rd_atomic, 4) << "the target's responder resources";
  EXPECT_NE(i_rts.timeout, 0);
}

TEST_F(RdmaCmXrc, AListenerOfAnotherQpTypeRejectsTheRequestAsInvalidServiceId) {
  CmClient server(path(), "H2"), client(path(), "H6");
  uint32_t qpn = 0x40;  // each request its own QP, as the stale-connection check wants
  auto refused = [&](uint16_t port, uint8_t listener_type, uint8_t id_type) {
    listen(server, port, listener_type);
    EXPECT_EQ(send(client, MsgType::CmConnect, offer(routed(client, port, id_type), ++qpn)), 0);
    const auto ev = client.next();
    return ev && ev->event == RDMA_CM_EVENT_REJECTED && ev->status == kInvalidServiceId;
  };
  EXPECT_TRUE(refused(kPort + 1, IBV_QPT_RC, IBV_QPT_XRC_SEND));
  EXPECT_TRUE(refused(kPort + 2, IBV_QPT_XRC_RECV, IBV_QPT_RC));
  EXPECT_TRUE(refused(kPort + 3, IBV_QPT_XRC_SEND, IBV_QPT_XRC_SEND)) << "an initiator takes no requests";
  EXPECT_TRUE(refused(kPort + 4, IBV_QPT_UC, IBV_QPT_XRC_SEND));
  EXPECT_FALSE(server.next(0));
}

}  // namespace
}  // namespace ibfab::api::cm_test
