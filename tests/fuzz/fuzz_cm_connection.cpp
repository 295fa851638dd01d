// ib_cm's connections (api/server/kernel/ib_cm_connection.h) on two hosts
// of line:2, fed CM MADs made of arbitrary bytes, with users whose answers
// and calls the input picks: whatever the state machines make of it, they
// must not crash, read out of bounds or leak, and once the input is spent
// every timer they set ends (the simulation runs dry) with no connection
// left in a state that waits on a timer.
//
// Input: records of one control byte and up to 256 bytes of MAD.
//   control bit 0: the MAD goes to H2 (else H1); bit 1: H1 first calls
//   connect(); bits 2-4: the users answer REQs (accept; else reject), REPs
//   (RTU) and DREQs (DREP); bit 5: H1 disconnects its connections; bit 6:
//   H1 destroys its newest; bit 7: simulated time then runs for 10 s.
// The MAD's common header is forced to a CM MAD's (class 0x07, version 2,
// method Send) and its AttributeID to one of REQ..DREP, so the bytes reach
// the state machines.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "api/server/kernel/ib_cm.h"
#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/byte_cursor.h"
#include "tests/fabric/model/hand_config.h"

using namespace ibfab;

namespace {

void require(bool cond) {
  if (!cond) __builtin_trap();
}

struct World final : api::IbCm::User, api::CmConnectionUser {
  sim::Simulator sim;
  fabric::Fabric fabric;
  api::IbCm cm;
  fabric::Hca* h1;
  fabric::Hca* h2;
  uint8_t answers = 0;  // control bits 2-4 of the current record
  std::vector<api::CmId> mine;  // H1's connections

  explicit World(const topo::Topology& t) : fabric(sim, t), cm(fabric, *this) {
    fabric::testing::configure_by_hand(fabric);
    h1 = fabric.find_hca("H1");
    h2 = fabric.find_hca("H2");
    cm.attach(*h1, 1);
    cm.attach(*h2, 1);
    cm.connections().listen(1, *this, 2);
  }
  api::CmConnections& conns() { return cm.connections(); }
  fabric::Hca& at(uint64_t context) { return context == 1 ? *h1 : *h2; }

  void on_sidr_req(const api::SidrRequester&, const mad::SidrReq&) override {}
  void on_sidr_rep(uint32_t, const mad::SidrRep*) override {}
  void on_cm_req(api::CmId id, uint64_t context, const api::CmPeer&, const mad::CmReq&) override {
    if (answers & 1) conns().accept(at(context), id, mad::CmRep{});
    else conns().reject(at(context), id, mad::CmRejReason::kConsumerReject, {}, {});
  }
  void on_cm_rep(api::CmId id, uint64_t context, const mad::CmRep&) override {
    if (answers & 2) conns().send_rtu(at(context), id, {});
  }
  void on_cm_established(api::CmId, uint64_t, const mad::CmRtu&) override {}
  void on_cm_rej(api::CmId, uint64_t, const mad::CmRej&) override {}
  void on_cm_mra(api::CmId, uint64_t, const mad::CmMra&) override {}
  void on_cm_dreq(api::CmId id, uint64_t context, const mad::CmDreq&) override {
    if (answers & 4) conns().send_drep(at(context), id, {});
  }
  void on_cm_drep(api::CmId, uint64_t, const mad::CmDrep&) override {}
  void on_cm_timewait_exit(api::CmId, uint64_t) override {}
  void on_cm_timeout(api::CmId, uint64_t, api::CmTimedOut) override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Topology topology = topo::load_topology("line:2");
  World w(topology);
  uint32_t qpn = 0x100;
  for (size_t off = 0; off < size;) {
    const uint8_t control = data[off++];
    const size_t n = std::min<size_t>(256, size - off);
    w.answers = static_cast<uint8_t>(control >> 2 & 7);
    if (control & 2) {
      api::CmConnectParams p;
      p.to.lid = w.h2->port(1).lid;
      p.to.qpn = 1;
      p.req.service_id = 1;
      p.req.local_qpn = qpn++;
      p.req.max_cm_retries = 2;
      p.req.remote_cm_response_timeout = 12;
      p.req.local_cm_response_timeout = 12;
      w.mine.push_back(w.conns().connect(*w.h1, 1, p, w, 1));
    }
    if (control & 32)
      for (api::CmId id : w.mine) w.conns().disconnect(*w.h1, id, {});
    if ((control & 64) && !w.mine.empty()) {
      w.conns().destroy(*w.h1, w.mine.back());
      w.mine.pop_back();
    }
    if (n > 0) {
      mad::CmMad m{};
      std::memcpy(m.data(), data + off, n);
      off += n;
      m[0] = 1;
      m[1] = mad::kCmClass;
      m[2] = mad::kCmClassVersion;
      m[3] = wire::mad_method::kSend;
      wire::store_be16(&m[16], static_cast<uint16_t>(mad::cm_attr::kReq + m[17] % 7));
      fabric::Hca& to = (control & 1) ? *w.h2 : *w.h1;
      fabric::MadAddress from;
      from.lid = ((control & 1) ? w.h1 : w.h2)->port(1).lid;
      from.qpn = 1;
      w.conns().on_mad(to, 1, from, m);
    }
    w.sim.run_until(w.sim.now() + sim::Time::ms((control & 128) ? 10'000 : 1));
  }
  w.sim.run();
  // Nothing waits on a timer any more.
  for (api::CmId id : w.mine) {
    const api::CmState s = w.conns().state(*w.h1, id);
    require(s != api::CmState::kReqSent && s != api::CmState::kMraReqRcvd && s != api::CmState::kDreqSent &&
            s != api::CmState::kTimewait);
  }
  return 0;
}
