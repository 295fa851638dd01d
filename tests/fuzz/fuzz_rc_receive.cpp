// Arbitrary RC and UC packets arriving at a connected QP that has work
// under way both ways (a three-packet SEND, a READ and an atomic of its
// own outstanding, receives posted): whatever the requester and responder
// make of them (ACKs, NAKs, responses, requests, duplicates, PSNs anywhere
// near the expected ones), the model must not crash, read out of bounds or
// leak.
//
// Input: byte 0 bit 0 picks RC or UC; byte 1 is the opcode's low five bits
// and the BTH's SE/M bits; byte 2 the PadCnt and AckReq; byte 3 the PSN's
// distance from the QP's first PSN (-8..247); the rest, cut to whole words,
// follows the BTH (extension headers and payload).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "fabric/model/fabric.h"
#include "fabric/topology/topology_spec.h"
#include "fabric/wire/byte_cursor.h"
#include "tests/fabric/model/hand_config.h"

using namespace ibfab;
using namespace ibfab::fabric;

namespace {

struct Sink final : QpEndpoint {
  void on_send_completion(const WorkCompletion&) override {}
  void on_recv_completion(const WorkCompletion&) override {}
};

constexpr uint64_t kMem = 64 * 1024;

// H1 and H2 of line:2, one connected QP each, at RTS, PSNs from 0.
struct World {
  sim::Simulator sim;
  std::unique_ptr<Fabric> fabric;
  std::unique_ptr<BufferMemory> mem1, mem2;
  Sink sink;
  uint32_t qp1 = 0, qp2 = 0;
  uint32_t key1 = 0, key2 = 0;

  World(const topo::Topology& t, Transport transport) {
    fabric = std::make_unique<Fabric>(sim, t);
    testing::configure_by_hand(*fabric);
    Hca& h1 = *fabric->find_hca("H1");
    Hca& h2 = *fabric->find_hca("H2");
    const uint32_t all = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
    const uint32_t pd1 = h1.alloc_pd(), pd2 = h2.alloc_pd();
    mem1 = std::make_unique<BufferMemory>(0x10000, kMem);
    mem2 = std::make_unique<BufferMemory>(0x20000, kMem);
    key1 = h1.memory().register_region(pd1, *mem1, 0x10000, kMem, 0x10000, all);
    key2 = h2.memory().register_region(pd2, *mem2, 0x20000, kMem, 0x20000, all);
    qp1 = h1.create_connected_qp(transport, pd1, QpCaps{16, 16, 2, 2, 64}, 0, &sink);
    qp2 = h2.create_connected_qp(transport, pd2, QpCaps{16, 16, 2, 2, 64}, 0, &sink);
    up(h1, qp1, h2.port(1).lid, qp2);
    up(h2, qp2, h1.port(1).lid, qp1);
    const Sge r1{0x10000, 8192, key1}, r2{0x20000, 8192, key2};
    for (int i = 0; i < 4; ++i) {
      RecvWr wr;
      wr.num_sge = 1;
      wr.sge = &r1;
      h1.post_recv(qp1, wr);
      wr.sge = &r2;
      h2.post_recv(qp2, wr);
    }
    const Sge s{0x10000 + 8192, 3000, key1}, eight{0x10000 + 16384, 8, key1};
    SendWr send;
    send.num_sge = 1;
    send.sge = &s;
    h1.post_send(qp1, send);
    if (transport == Transport::kRc) {
      SendWr read = send;
      read.opcode = wr_opcode::kRdmaRead;
      read.remote_addr = 0x20000;
      read.rkey = key2;
      h1.post_send(qp1, read);
      SendWr add;
      add.opcode = wr_opcode::kAtomicFetchAndAdd;
      add.remote_addr = 0x20000 + 64;
      add.rkey = key2;
      add.num_sge = 1;
      add.sge = &eight;
      h1.post_send(qp1, add);
    }
  }

  static void up(Hca& h, uint32_t qpn, uint16_t dlid, uint32_t dest) {
    QpAttr a;
    a.state = QpState::kInit;
    a.port = 1;
    a.access = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
    h.modify_qp(qpn, a, qp_mask::kState | qp_mask::kPort | qp_mask::kAccessFlags);
    a.state = QpState::kRtr;
    a.path.dlid = dlid;
    a.path_mtu = 3;
    a.dest_qp_num = dest;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = 1;
    h.modify_qp(qpn, a, qp_mask::kState | qp_mask::kAv | qp_mask::kPathMtu | qp_mask::kDestQpn | qp_mask::kRqPsn |
                            qp_mask::kMaxDestRdAtomic | qp_mask::kMinRnrTimer);
    a.state = QpState::kRts;
    a.timeout = 8;
    a.retry_cnt = 2;
    a.rnr_retry = 2;
    a.max_rd_atomic = 4;
    h.modify_qp(qpn, a, qp_mask::kState | qp_mask::kSqPsn | qp_mask::kTimeout | qp_mask::kRetryCnt |
                            qp_mask::kRnrRetry | qp_mask::kMaxQpRdAtomic);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Topology topology = topo::load_topology("line:2");
  if (size < 4 || size > 4 + PacketPool::kMaxPacket - 64) return 0;
  const bool rc = (data[0] & 1) == 0;
  World w(topology, rc ? Transport::kRc : Transport::kUc);
  Fabric& f = *w.fabric;
  Hca& h1 = *f.find_hca("H1");
  Hca& h2 = *f.find_hca("H2");
  w.sim.run_until(sim::Time::ns(200));  // the first packets are on their way

  // LRH, BTH, then the input's words, then ICRC and VCRC (left zero: the
  // model does not check them).
  const std::size_t rest = (size - 4) / 4 * 4;
  const std::size_t total = 8 + 12 + rest + 6;
  PacketRef pkt = f.packets().make(static_cast<uint32_t>(total));
  std::span<uint8_t> b = pkt.mutable_bytes();
  std::memset(b.data(), 0, total);
  b[0] = 0;     // VL 0, LVer 0
  b[1] = 0x02;  // SL 0, LNH: IBA local
  wire::store_be16(&b[2], h1.port(1).lid);
  wire::store_be16(&b[4], static_cast<uint16_t>((total - 2) / 4));
  wire::store_be16(&b[6], h2.port(1).lid);
  b[8] = static_cast<uint8_t>((rc ? 0x00 : 0x20) | (data[1] & 0x1f));
  b[9] = static_cast<uint8_t>((data[1] & 0xc0) | (data[2] & 0x30));
  wire::store_be16(&b[10], 0xFFFF);
  wire::store_be32(&b[12], w.qp1);
  wire::store_be32(&b[16], (static_cast<uint32_t>(data[2] & 0x80) << 24) |
                               ((static_cast<uint32_t>(data[3]) - 8u) & 0xFFFFFF));
  if (rest) std::memcpy(&b[20], data + 4, rest);
  pkt.crcs_stale();
  f.deliver(h1.port(1), std::move(pkt));
  w.sim.run_until(w.sim.now() + sim::Time::ms(50));
  return 0;
}
