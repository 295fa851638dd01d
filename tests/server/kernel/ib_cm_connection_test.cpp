// ib_cm's connections (api/server/kernel/ib_cm_connection.h) between two
// hosts on line:2 set up by hand, IbCm attached to both: H1 connects, H2
// listens. Messages are lost by making H2's cable drop everything for a
// while. The waits are cm.c's, from the REQ below: packet lifetime 14
// (64 ms), both CM response timeouts 20 (4,096 ms), MaxCMRetries 3, so the
// active side waits 64 * 2 + 4,096 = 4,224 ms for an answer to its REQ or
// DREQ, the passive side 4,096 ms for one to its REP or DREQ.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/server/kernel/ib_cm.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/pcap_writer.h"
#include "sim/simulator.h"
#include "tests/fabric/model/hand_config.h"
#include "tests/fabric/wire/tshark_run.h"

namespace ibfab::api {
namespace {

constexpr uint64_t kService = 0x0106'0000'0000'4853;  // of no rdma_cm port space: tshark shows its private data as is
constexpr uint64_t kActive = 1, kPassive = 2;        // the contexts: who hears an event
constexpr sim::Time kReqTry = sim::Time::ms(4224);

enum class Ev { kReq, kRep, kEstablished, kRej, kMra, kDreq, kDrep, kTimewaitExit, kTimeout };

struct Event {
  Ev kind;
  CmId id;
  uint64_t context;
  sim::Time at;
  mad::CmReq req{};
  mad::CmRep rep{};
  mad::CmRtu rtu{};
  mad::CmRej rej{};
  mad::CmMra mra{};
  mad::CmDreq dreq{};
  mad::CmDrep drep{};
  CmTimedOut what = CmTimedOut::kReq;
};

// Whole milliseconds: for arrivals, a few microseconds after their sending.
int64_t whole_ms(sim::Time t) { return t.ps() / 1'000'000'000; }

template <std::size_t N>
std::array<uint8_t, N> text(std::string_view s) {
  std::array<uint8_t, N> a{};
  std::copy_n(s.begin(), std::min(s.size(), N), a.begin());
  return a;
}

class IbCmConnection : public ::testing::Test, public IbCm::User, public CmConnectionUser {
 protected:
  IbCmConnection() : topo_(topo::load_topology("line:2")), fabric_(sim_, topo_), cm_(fabric_, *this) {
    fabric::testing::configure_by_hand(fabric_);
    for (uint32_t i = 0; i < fabric_.node_count(); ++i)
      if (!fabric_.node(i).is_switch()) hosts_.push_back(static_cast<fabric::Hca*>(&fabric_.node(i)));
    for (fabric::Hca* h : hosts_) cm_.attach(*h, 1);
    h1_ = hosts_[0];
    h2_ = hosts_[1];
  }
  CmConnections& conns() { return cm_.connections(); }

  // The REQ of every test, every field set.
  CmConnectParams params() const {
    CmConnectParams p;
    p.to.lid = h2_->port(1).lid;
    p.to.qpn = 1;
    p.packet_life_time = 14;
    mad::CmReq& r = p.req;
    r.service_id = kService;
    r.local_qkey = 0x1357'9bdf;
    r.local_qpn = 0x00'1234;
    r.responder_resources = 4;
    r.initiator_depth = 3;
    r.remote_cm_response_timeout = 20;
    r.transport_service_type = mad::cm_transport::kRc;
    r.end_to_end_flow_control = true;
    r.starting_psn = 0xab'cdef;
    r.local_cm_response_timeout = 20;
    r.retry_count = 7;
    r.partition_key = 0xffff;
    r.path_mtu = 5;
    r.rnr_retry_count = 6;
    r.max_cm_retries = 3;
    r.srq = false;
    mad::CmPath& path = r.primary_path;
    path.local_lid = h1_->port(1).lid;
    path.remote_lid = h2_->port(1).lid;
    path.local_gid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    path.remote_gid = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    path.flow_label = 0x1'2345;
    path.packet_rate = 7;
    path.traffic_class = 0x20;
    path.hop_limit = 1;
    path.sl = 2;
    path.subnet_local = true;
    path.local_ack_timeout = 15;  // passive TIMEWAIT: 2^(15-8) = 128 ms
    r.private_data = text<mad::CmReq::kPrivateDataSize>("the REQ's private data");
    return p;
  }
  mad::CmRep rep() const {
    mad::CmRep r;
    r.local_qkey = 0x2468'ace0;
    r.local_qpn = 0x00'5678;
    r.starting_psn = 0x12'3456;
    r.responder_resources = 3;
    r.initiator_depth = 4;
    r.target_ack_delay = 15;  // active TIMEWAIT: cm_ack_timeout(15, 14) = 16, 256 ms
    r.failover_accepted = mad::cm_failover::kUnsupported;
    r.end_to_end_flow_control = true;
    r.rnr_retry_count = 5;
    r.srq = true;
    r.private_data = text<mad::CmRep::kPrivateDataSize>("the REP's private data");
    return r;
  }
  static std::span<const uint8_t> bytes(std::string_view s) {
    return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
  }

  CmId connect() { return conns().connect(*h1_, 1, params(), *this, kActive); }
  void listen() { ASSERT_TRUE(conns().listen(kService, *this, kPassive)); }
  // H2's cable drops everything (both ways) while `lost`.
  void lose(bool lost) { fabric_.set_link_loss(*h2_->port(1).link(), lost ? 1.0 : 0.0); }
  void lose_at(sim::Time when, bool lost) {
    sim_.schedule_at(when, [this, lost] { lose(lost); });
  }
  std::vector<Event> heard(Ev kind, uint64_t context) const {
    std::vector<Event> out;
    for (const Event& e : events_)
      if (e.kind == kind && e.context == context) out.push_back(e);
    return out;
  }
  // Answers REQs with accept(rep()) and REPs with an RTU.
  void answer_everything() {
    react_ = [this](const Event& e) {
      if (e.kind == Ev::kReq) EXPECT_TRUE(conns().accept(*h2_, e.id, rep()));
      if (e.kind == Ev::kRep) EXPECT_TRUE(conns().send_rtu(*h1_, e.id, bytes("the RTU's private data")));
    };
  }
  // A connection H1 made, ESTABLISHED on both sides: (H1's id, H2's id).
  std::pair<CmId, CmId> establish(const CmConnectParams& p) {
    listen();
    answer_everything();
    const CmId id = conns().connect(*h1_, 1, p, *this, kActive);
    sim_.run();
    const std::vector<Event> req = heard(Ev::kReq, kPassive);
    EXPECT_EQ(req.size(), 1u);
    EXPECT_EQ(conns().state(*h1_, id), CmState::kEstablished);
    EXPECT_EQ(conns().state(*h2_, req.at(0).id), CmState::kEstablished);
    events_.clear();
    return {id, req.at(0).id};
  }

  // --- IbCm::User (SIDR: unused here) and CmConnectionUser ---
  void on_sidr_req(const SidrRequester&, const mad::SidrReq&) override {}
  void on_sidr_rep(uint32_t, const mad::SidrRep*) override {}
  void record(Event e) {
    e.at = sim_.now();
    events_.push_back(e);
    if (react_) react_(events_.back());
  }
  void on_cm_req(CmId id, uint64_t context, const CmPeer& peer, const mad::CmReq& req) override {
    EXPECT_EQ(peer.hca, h2_);
    EXPECT_EQ(peer.from.lid, h1_->port(1).lid);
    record({.kind = Ev::kReq, .id = id, .context = context, .req = req});
  }
  void on_cm_rep(CmId id, uint64_t context, const mad::CmRep& rep) override {
    record({.kind = Ev::kRep, .id = id, .context = context, .rep = rep});
  }
  void on_cm_established(CmId id, uint64_t context, const mad::CmRtu& rtu) override {
    record({.kind = Ev::kEstablished, .id = id, .context = context, .rtu = rtu});
  }
  void on_cm_rej(CmId id, uint64_t context, const mad::CmRej& rej) override {
    record({.kind = Ev::kRej, .id = id, .context = context, .rej = rej});
  }
  void on_cm_mra(CmId id, uint64_t context, const mad::CmMra& mra) override {
    record({.kind = Ev::kMra, .id = id, .context = context, .mra = mra});
  }
  void on_cm_dreq(CmId id, uint64_t context, const mad::CmDreq& dreq) override {
    record({.kind = Ev::kDreq, .id = id, .context = context, .dreq = dreq});
  }
  void on_cm_drep(CmId id, uint64_t context, const mad::CmDrep& drep) override {
    record({.kind = Ev::kDrep, .id = id, .context = context, .drep = drep});
  }
  void on_cm_timewait_exit(CmId id, uint64_t context) override {
    record({.kind = Ev::kTimewaitExit, .id = id, .context = context});
  }
  void on_cm_timeout(CmId id, uint64_t context, CmTimedOut what) override {
    record({.kind = Ev::kTimeout, .id = id, .context = context, .what = what});
  }

  sim::Simulator sim_;
  topo::Topology topo_;
  fabric::Fabric fabric_;
  IbCm cm_;
  std::vector<fabric::Hca*> hosts_;
  fabric::Hca* h1_ = nullptr;
  fabric::Hca* h2_ = nullptr;
  std::vector<Event> events_;
  std::function<void(const Event&)> react_;
};

TEST_F(IbCmConnection, AHandshakeCarriesEveryFieldAndThePrivateDataBothWays) {
  listen();
  answer_everything();
  const CmId id = connect();
  EXPECT_EQ(conns().state(*h1_, id), CmState::kReqSent);
  sim_.run();

  const std::vector<Event> req = heard(Ev::kReq, kPassive);
  ASSERT_EQ(req.size(), 1u);
  mad::CmReq sent = params().req;
  sent.local_comm_id = id;
  sent.local_ca_guid = h1_->guid();
  EXPECT_EQ(req[0].req, sent) << "the REQ arrives as given, with H1's CommID and CA GUID";
  EXPECT_NE(req[0].id, 0u);

  const std::vector<Event> rep_heard = heard(Ev::kRep, kActive);
  ASSERT_EQ(rep_heard.size(), 1u);
  EXPECT_EQ(rep_heard[0].id, id);
  mad::CmRep sent_rep = rep();
  sent_rep.local_comm_id = req[0].id;
  sent_rep.remote_comm_id = id;
  sent_rep.local_ca_guid = h2_->guid();
  EXPECT_EQ(rep_heard[0].rep, sent_rep);

  const std::vector<Event> est = heard(Ev::kEstablished, kPassive);
  ASSERT_EQ(est.size(), 1u);
  EXPECT_EQ(est[0].id, req[0].id);
  EXPECT_EQ(est[0].rtu.local_comm_id, id);
  EXPECT_EQ(est[0].rtu.remote_comm_id, req[0].id);
  EXPECT_EQ(est[0].rtu.private_data, text<mad::CmRtu::kPrivateDataSize>("the RTU's private data"));
  EXPECT_LT(est[0].at, sim::Time::ms(1)) << "no retry was needed";
  EXPECT_EQ(events_.size(), 3u) << "REQ, REP, RTU heard once each";
  EXPECT_EQ(conns().state(*h1_, id), CmState::kEstablished);
  EXPECT_EQ(conns().state(*h2_, req[0].id), CmState::kEstablished);
}

TEST_F(IbCmConnection, EachConnectionHasACommunicationIdOfItsOwn) {
  listen();
  answer_everything();
  const CmId a = connect();
  CmConnectParams p = params();
  p.req.local_qpn = 0x99;
  const CmId b = conns().connect(*h1_, 1, p, *this, kActive);
  sim_.run();
  EXPECT_NE(a, b);
  EXPECT_EQ(heard(Ev::kEstablished, kPassive).size(), 2u);
  EXPECT_EQ(conns().state(*h1_, a), CmState::kEstablished);
  EXPECT_EQ(conns().state(*h1_, b), CmState::kEstablished);
}

TEST_F(IbCmConnection, AConsumerRejectReachesTheRequesterWithItsInfoAndPrivateData) {
  listen();
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq)
      EXPECT_TRUE(conns().reject(*h2_, e.id, mad::CmRejReason::kConsumerReject, bytes("ari"), bytes("go away")));
  };
  const CmId id = connect();
  sim_.run();
  const std::vector<Event> rej = heard(Ev::kRej, kActive);
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(rej[0].id, id);
  EXPECT_EQ(rej[0].rej.reason, mad::CmRejReason::kConsumerReject);
  EXPECT_EQ(rej[0].rej.message_rejected, mad::cm_rej_msg::kReq);
  EXPECT_EQ(rej[0].rej.remote_comm_id, id);
  EXPECT_EQ(rej[0].rej.local_comm_id, 0u) << "a REJ from REQ_RCVD names no local CommID";
  EXPECT_EQ(rej[0].rej.reject_info_length, 3);
  EXPECT_EQ(rej[0].rej.ari, text<mad::CmRej::kAriSize>("ari"));
  EXPECT_EQ(rej[0].rej.private_data, text<mad::CmRej::kPrivateDataSize>("go away"));
  EXPECT_LT(rej[0].at, kReqTry) << "the REJ ended the REQ's retries";
  EXPECT_EQ(conns().state(*h1_, id), CmState::kIdle);
  EXPECT_EQ(conns().state(*h2_, heard(Ev::kReq, kPassive).at(0).id), CmState::kIdle);
  EXPECT_TRUE(heard(Ev::kTimeout, kActive).empty());
}

TEST_F(IbCmConnection, AReqForAServiceNobodyListensOnIsRejectedAsAnInvalidServiceId) {
  const CmId id = connect();
  sim_.run();
  const std::vector<Event> rej = heard(Ev::kRej, kActive);
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(rej[0].rej.reason, mad::CmRejReason::kInvalidServiceId);
  EXPECT_EQ(rej[0].rej.message_rejected, mad::cm_rej_msg::kReq);
  EXPECT_EQ(rej[0].rej.remote_comm_id, id);
  EXPECT_TRUE(heard(Ev::kReq, kPassive).empty());
  EXPECT_EQ(conns().state(*h1_, id), CmState::kIdle);
}

TEST_F(IbCmConnection, AReqThatIsNeverAnsweredIsSentMaxCmRetriesMoreTimesThenTimesOut) {
  listen();
  lose(true);
  const CmId id = connect();
  // The third retry (the fourth REQ, at 3 * 4,224 ms) gets through and is
  // taken but left unanswered: it was sent, and nothing more is.
  lose_at(sim::Time::ms(3 * 4224 - 1), false);
  sim_.run();
  const std::vector<Event> req = heard(Ev::kReq, kPassive);
  ASSERT_EQ(req.size(), 1u);
  EXPECT_EQ(whole_ms(req[0].at), 3 * 4224) << "the fourth REQ";
  const std::vector<Event> timeout = heard(Ev::kTimeout, kActive);
  ASSERT_EQ(timeout.size(), 1u);
  EXPECT_EQ(timeout[0].id, id);
  EXPECT_EQ(timeout[0].what, CmTimedOut::kReq);
  EXPECT_EQ(timeout[0].at, kReqTry + kReqTry + kReqTry + kReqTry);
  EXPECT_EQ(conns().state(*h1_, id), CmState::kIdle);
}

TEST_F(IbCmConnection, ALostRepIsResentOnItsOwnTimerAndARepeatedReqIsDropped) {
  listen();
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq) {
      lose(true);  // the REP, and the REQ's first retry, are lost
      EXPECT_TRUE(conns().accept(*h2_, e.id, rep()));
    }
    if (e.kind == Ev::kRep) EXPECT_TRUE(conns().send_rtu(*h1_, e.id, {}));
  };
  const CmId id = connect();
  // Back after the REP's first retry (4,096 ms) and before the REQ's (4,224
  // ms), which arrives in REP_SENT and is dropped as cm.c drops it: the REP
  // goes again only on its own timer, at 8,192 ms.
  lose_at(sim::Time::ms(4200), false);
  sim_.run();
  EXPECT_EQ(heard(Ev::kReq, kPassive).size(), 1u) << "the repeated REQ made no second connection";
  const std::vector<Event> rep_heard = heard(Ev::kRep, kActive);
  ASSERT_EQ(rep_heard.size(), 1u);
  EXPECT_EQ(whole_ms(rep_heard[0].at), 2 * 4096) << "the REP's second retry";
  ASSERT_EQ(heard(Ev::kEstablished, kPassive).size(), 1u);
  EXPECT_EQ(conns().state(*h1_, id), CmState::kEstablished);
  EXPECT_TRUE(heard(Ev::kTimeout, kActive).empty());
  EXPECT_TRUE(heard(Ev::kTimeout, kPassive).empty());
}

TEST_F(IbCmConnection, ALostRtuIsSentAgainWhenTheRepIsResent) {
  listen();
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq) EXPECT_TRUE(conns().accept(*h2_, e.id, rep()));
    if (e.kind == Ev::kRep) {
      lose(true);
      EXPECT_TRUE(conns().send_rtu(*h1_, e.id, bytes("rtu")));
      lose_at(sim_.now() + sim::Time::ms(100), false);
    }
  };
  connect();
  sim_.run();
  EXPECT_EQ(heard(Ev::kRep, kActive).size(), 1u) << "the repeated REP is not news to H1's user";
  const std::vector<Event> est = heard(Ev::kEstablished, kPassive);
  ASSERT_EQ(est.size(), 1u);
  EXPECT_EQ(whole_ms(est[0].at), 4096) << "the REP's first retry, answered from ESTABLISHED";
  EXPECT_EQ(est[0].rtu.private_data, text<mad::CmRtu::kPrivateDataSize>("rtu"));
  EXPECT_TRUE(heard(Ev::kTimeout, kPassive).empty());
}

TEST_F(IbCmConnection, ALostMraIsSentAgainWhenTheReqIsResent) {
  listen();
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq) {
      lose(true);
      EXPECT_TRUE(conns().send_mra(*h2_, e.id, 24, {}));
      lose_at(sim_.now() + sim::Time::ms(100), false);
      const CmId id = e.id;
      sim_.schedule(sim::Time::ms(30'000), [this, id] { EXPECT_TRUE(conns().accept(*h2_, id, rep())); });
    }
    if (e.kind == Ev::kRep) EXPECT_TRUE(conns().send_rtu(*h1_, e.id, {}));
  };
  connect();
  sim_.run();
  EXPECT_EQ(heard(Ev::kReq, kPassive).size(), 1u);
  const std::vector<Event> mra = heard(Ev::kMra, kActive);
  ASSERT_EQ(mra.size(), 1u);
  EXPECT_EQ(whole_ms(mra[0].at), 4224) << "the REQ's first retry, answered from MRA_REQ_SENT";
  EXPECT_TRUE(heard(Ev::kTimeout, kActive).empty());
  EXPECT_EQ(heard(Ev::kEstablished, kPassive).size(), 1u);
}

TEST_F(IbCmConnection, ARepNeverAnsweredTimesOutAtThePassiveSide) {
  listen();
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq) {
      lose(true);
      EXPECT_TRUE(conns().accept(*h2_, e.id, rep()));
    }
  };
  connect();
  sim_.run();
  const std::vector<Event> timeout = heard(Ev::kTimeout, kPassive);
  ASSERT_EQ(timeout.size(), 1u);
  EXPECT_EQ(timeout[0].what, CmTimedOut::kRep);
  EXPECT_EQ(whole_ms(timeout[0].at), 4 * 4096);
  EXPECT_EQ(conns().state(*h2_, timeout[0].id), CmState::kIdle);
  EXPECT_EQ(heard(Ev::kTimeout, kActive).size(), 1u) << "and the REQ at the active side";
}

TEST_F(IbCmConnection, DisconnectingGoesThroughDreqDrepAndTimewait) {
  const auto [active, passive] = establish(params());
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kDreq) EXPECT_TRUE(conns().send_drep(*h2_, e.id, bytes("bye too")));
  };
  const sim::Time start = sim_.now();
  ASSERT_TRUE(conns().disconnect(*h1_, active, bytes("bye")));
  EXPECT_EQ(conns().state(*h1_, active), CmState::kDreqSent);
  EXPECT_FALSE(conns().disconnect(*h1_, active, {})) << "only from ESTABLISHED";
  sim_.run();
  const std::vector<Event> dreq = heard(Ev::kDreq, kPassive);
  ASSERT_EQ(dreq.size(), 1u);
  EXPECT_EQ(dreq[0].id, passive);
  EXPECT_EQ(dreq[0].dreq.remote_qpn_eecn, rep().local_qpn);
  EXPECT_EQ(dreq[0].dreq.private_data, text<mad::CmDreq::kPrivateDataSize>("bye"));
  const std::vector<Event> drep = heard(Ev::kDrep, kActive);
  ASSERT_EQ(drep.size(), 1u);
  EXPECT_EQ(drep[0].drep.private_data, text<mad::CmDrep::kPrivateDataSize>("bye too"));
  const std::vector<Event> out1 = heard(Ev::kTimewaitExit, kActive), out2 = heard(Ev::kTimewaitExit, kPassive);
  ASSERT_EQ(out1.size(), 1u);
  ASSERT_EQ(out2.size(), 1u);
  EXPECT_EQ(out1[0].at - drep[0].at, sim::Time::ms(256)) << "cm_ack_timeout(15, 14) = 16";
  EXPECT_EQ(out2[0].at - dreq[0].at, sim::Time::ms(128)) << "the REQ's LocalACKTimeout 15";
  EXPECT_LT(drep[0].at - start, sim::Time::ms(1));
  EXPECT_EQ(conns().state(*h1_, active), CmState::kIdle);
  EXPECT_EQ(conns().state(*h2_, passive), CmState::kIdle);
}

TEST_F(IbCmConnection, ALostDrepIsAnsweredAgainWhenTheDreqIsResent) {
  // H2's TIMEWAIT (its REQ's LocalACKTimeout 21: 8,192 ms) outlasts the
  // DREQ's first wait (4,224 ms).
  CmConnectParams p = params();
  p.req.primary_path.local_ack_timeout = 21;
  const auto [active, passive] = establish(p);
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kDreq) {
      lose(true);
      EXPECT_TRUE(conns().send_drep(*h2_, e.id, {}));
      lose_at(sim_.now() + sim::Time::ms(100), false);
    }
  };
  const sim::Time start = sim_.now();
  ASSERT_TRUE(conns().disconnect(*h1_, active, {}));
  sim_.run();
  EXPECT_EQ(heard(Ev::kDreq, kPassive).size(), 1u) << "the resent DREQ is not news to H2's user";
  const std::vector<Event> drep = heard(Ev::kDrep, kActive);
  ASSERT_EQ(drep.size(), 1u);
  EXPECT_EQ(whole_ms(drep[0].at - start), 4224) << "the DREQ's first retry, answered from TIMEWAIT";
  EXPECT_EQ(heard(Ev::kTimewaitExit, kActive).size(), 1u);
  EXPECT_TRUE(heard(Ev::kTimeout, kActive).empty());
}

TEST_F(IbCmConnection, ADreqNamingAnotherQpIsDropped) {
  const auto [active, passive] = establish(params());
  mad::CmDreq dreq;
  dreq.local_comm_id = active;
  dreq.remote_comm_id = passive;
  dreq.remote_qpn_eecn = rep().local_qpn + 1;
  fabric::MadAddress from;
  from.lid = h1_->port(1).lid;
  from.qpn = 1;
  conns().on_mad(*h2_, 1, from, mad::make_cm_mad(1, dreq));
  EXPECT_TRUE(heard(Ev::kDreq, kPassive).empty());
  EXPECT_EQ(conns().state(*h2_, passive), CmState::kEstablished);
  dreq.remote_qpn_eecn = rep().local_qpn;
  conns().on_mad(*h2_, 1, from, mad::make_cm_mad(2, dreq));
  EXPECT_EQ(heard(Ev::kDreq, kPassive).size(), 1u);
  EXPECT_EQ(conns().state(*h2_, passive), CmState::kDreqRcvd);
}

TEST_F(IbCmConnection, ADreqNeverAnsweredTimesOutIntoTimewait) {
  const auto [active, passive] = establish(params());
  lose(true);
  const sim::Time start = sim_.now();
  ASSERT_TRUE(conns().disconnect(*h1_, active, {}));
  sim_.run();
  const std::vector<Event> timeout = heard(Ev::kTimeout, kActive);
  ASSERT_EQ(timeout.size(), 1u);
  EXPECT_EQ(timeout[0].what, CmTimedOut::kDreq);
  EXPECT_EQ(timeout[0].at - start, kReqTry + kReqTry + kReqTry + kReqTry) << "the active side's wait";
  const std::vector<Event> out = heard(Ev::kTimewaitExit, kActive);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].at - timeout[0].at, sim::Time::ms(256));
  EXPECT_EQ(conns().state(*h2_, passive), CmState::kEstablished) << "H2 heard nothing";
}

TEST_F(IbCmConnection, AnMraLengthensTheWaitForTheRep) {
  listen();
  // Service timeout 24: 2^16 ms = 65,536 ms, far past the REQ's four tries
  // (16,896 ms); the REP comes at 30 s.
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq) {
      EXPECT_TRUE(conns().send_mra(*h2_, e.id, 24, bytes("wait")));
      const CmId id = e.id;
      sim_.schedule(sim::Time::ms(30'000), [this, id] { EXPECT_TRUE(conns().accept(*h2_, id, rep())); });
    }
    if (e.kind == Ev::kRep) EXPECT_TRUE(conns().send_rtu(*h1_, e.id, {}));
  };
  const CmId id = connect();
  sim_.run();
  const std::vector<Event> mra = heard(Ev::kMra, kActive);
  ASSERT_EQ(mra.size(), 1u);
  EXPECT_EQ(mra[0].mra.message_mraed, mad::cm_mra_msg::kReq);
  EXPECT_EQ(mra[0].mra.service_timeout, 24);
  EXPECT_EQ(mra[0].mra.private_data, text<mad::CmMra::kPrivateDataSize>("wait"));
  EXPECT_TRUE(heard(Ev::kTimeout, kActive).empty());
  ASSERT_EQ(heard(Ev::kRep, kActive).size(), 1u);
  EXPECT_EQ(heard(Ev::kEstablished, kPassive).size(), 1u);
  EXPECT_EQ(conns().state(*h1_, id), CmState::kEstablished);
}

TEST_F(IbCmConnection, AnMraGivesNoMoreTimeThanItsServiceTimeout) {
  listen();
  // Service timeout 22 (16,384 ms) plus cm_time(15) (128 ms): each wait is
  // 16,512 ms from the MRA on (the repeated MRAs that answer the REQ's
  // retries change nothing), so the REQ times out at 4 * 16,512 ms.
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq) EXPECT_TRUE(conns().send_mra(*h2_, e.id, 22, {}));
  };
  connect();
  sim_.run();
  const std::vector<Event> timeout = heard(Ev::kTimeout, kActive);
  ASSERT_EQ(timeout.size(), 1u);
  EXPECT_EQ(whole_ms(timeout[0].at), 4 * 16512);
  EXPECT_EQ(heard(Ev::kMra, kActive).size(), 1u) << "the repeats are not news";
}

TEST_F(IbCmConnection, AReqFromAQpThatIsStillConnectedIsRejectedAsStaleAndTheOldConnectionIsDisconnected) {
  const auto [active, passive] = establish(params());
  answer_everything();
  // A second REQ from the same QP (and CA): H1 forgot its connection.
  const CmId again = connect();
  sim_.run_until(sim_.now() + sim::Time::ms(1000));
  const std::vector<Event> rej = heard(Ev::kRej, kActive);
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(rej[0].id, again);
  EXPECT_EQ(rej[0].rej.reason, mad::CmRejReason::kStaleConnection);
  EXPECT_TRUE(heard(Ev::kReq, kPassive).empty());
  const std::vector<Event> dreq = heard(Ev::kDreq, kActive);
  ASSERT_EQ(dreq.size(), 1u) << "H2 disconnects the old connection";
  EXPECT_EQ(dreq[0].id, active);
  EXPECT_EQ(conns().state(*h2_, passive), CmState::kDreqSent);
}

TEST_F(IbCmConnection, DestroyingAConnectionRejectsOrDisconnectsItAsCmDoes) {
  listen();
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kReq) conns().destroy(*h2_, e.id);
  };
  const CmId id = connect();
  sim_.run();
  const std::vector<Event> rej = heard(Ev::kRej, kActive);
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(rej[0].rej.reason, mad::CmRejReason::kConsumerReject);
  EXPECT_EQ(conns().state(*h1_, id), CmState::kIdle);
  conns().destroy(*h1_, id);
  EXPECT_EQ(conns().size(), 0u);

  events_.clear();
  answer_everything();
  const CmId live = connect();
  sim_.run();
  ASSERT_EQ(conns().state(*h1_, live), CmState::kEstablished);
  events_.clear();
  conns().destroy(*h1_, live);  // a process that dies: its peer hears a DREQ
  sim_.run();
  ASSERT_EQ(heard(Ev::kDreq, kPassive).size(), 1u);
  EXPECT_TRUE(heard(Ev::kDrep, kActive).empty()) << "a destroyed connection tells its user nothing";
  EXPECT_EQ(conns().size(), 1u) << "H2's, left in DREQ_RCVD";
}


// A requester that goes away while its REQ waits (a process that dies):
// the REJ kTimeout it sends, with its CA GUID as the ARI, reaches the
// connection at the passive side, which has no CommID of the requester's
// peer to match it by.
TEST_F(IbCmConnection, ARequesterDestroyedWhileItsReqWaitsIsHeardOfAtThePassiveSide) {
  listen();
  const CmId id = connect();
  sim_.run_until(sim::Time::ms(1));
  const std::vector<Event> req = heard(Ev::kReq, kPassive);
  ASSERT_EQ(req.size(), 1u);
  conns().destroy(*h1_, id);
  sim_.run();
  const std::vector<Event> rej = heard(Ev::kRej, kPassive);
  ASSERT_EQ(rej.size(), 1u);
  EXPECT_EQ(rej[0].id, req[0].id);
  EXPECT_EQ(rej[0].rej.reason, mad::CmRejReason::kTimeout);
  EXPECT_EQ(rej[0].rej.reject_info_length, 8);
  EXPECT_EQ(conns().state(*h2_, req[0].id), CmState::kIdle);
  EXPECT_TRUE(heard(Ev::kTimeout, kActive).empty()) << "a destroyed connection tells its user nothing";
}

// The messages of a connection's life, captured on H1's cable as the
// fabric carries them: each decodes in tshark as the message it is, with
// the service ID, communication IDs, QPNs and private data the users gave
// (Wireshark shows no LocalCommunicationID for REQ and REP).
TEST_F(IbCmConnection, AConnectionsMessagesOnTheWireDecodeInTshark) {
  if (::access(wire::testing::kTshark, X_OK) != 0) GTEST_SKIP() << "tshark is not installed";
  char dir_template[] = "/tmp/ibfab-cm-connection-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, pcap = dir + "/cm.pcap";
  wire::PcapWriter writer;
  ASSERT_EQ(writer.open(pcap), "");
  fabric_.capture(&writer, {h1_->port(1).link()->id()});
  const auto [active, passive] = establish(params());
  react_ = [this](const Event& e) {
    if (e.kind == Ev::kDreq) EXPECT_TRUE(conns().send_drep(*h2_, e.id, {}));
  };
  ASSERT_TRUE(conns().disconnect(*h1_, active, bytes("bye")));
  sim_.run();
  fabric_.capture(nullptr);
  ASSERT_EQ(writer.close(), "");

  const std::vector<const char*> fields = {
      "infiniband.mad.attributeid", "infiniband.cm.req.serviceid", "infiniband.cm.req.localqpn",
      "infiniband.cm.req.private", "infiniband.cm.rep.remotecommid", "infiniband.cm.rep.localqpn",
      "infiniband.cm.rtu.localcommid", "infiniband.cm.rtu.remotecommid", "infiniband.cm.dreq.localcommid",
      "infiniband.cm.dreq.remotecommid", "infiniband.cm.drsp.localcommid", "infiniband.cm.drsp.remotecommid",
      "_ws.malformed"};
  const auto rows = wire::testing::tshark_fields(pcap, dir, fields);
  std::remove(pcap.c_str());
  ::rmdir(dir.c_str());
  using wire::testing::hex;
  const std::vector<std::vector<std::string>> want = {
      {hex(mad::cm_attr::kReq), hex(kService), hex(params().req.local_qpn), wire::testing::hex_bytes(params().req.private_data), "",
       "", "", "", "", "", "", "", ""},
      {hex(mad::cm_attr::kRep), "", "", "", hex(active), hex(rep().local_qpn), "", "", "", "", "", "", ""},
      {hex(mad::cm_attr::kRtu), "", "", "", "", "", hex(active), hex(passive), "", "", "", "", ""},
      {hex(mad::cm_attr::kDreq), "", "", "", "", "", "", "", hex(active), hex(passive), "", "", ""},
      {hex(mad::cm_attr::kDrep), "", "", "", "", "", "", "", "", "", hex(passive), hex(active), ""},
  };
  ASSERT_EQ(rows.size(), want.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), fields.size()) << "packet " << i;
    for (std::size_t f = 0; f < fields.size(); ++f)  // numbers by value; bytes (past 64 bits) as text
      EXPECT_TRUE(want[i][f].size() > 18 ? rows[i][f] == want[i][f] : wire::testing::same_value(rows[i][f], want[i][f]))
          << "packet " << i << " " << fields[f] << ": tshark says " << rows[i][f] << ", we sent " << want[i][f];
  }
}

}  // namespace
}  // namespace ibfab::api
