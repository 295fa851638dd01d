// Arbitrary bytes arriving at a switch and at an HCA, as if off a cable:
// whatever the SMI, SMA, PMA, MAD dispatch and UD paths make of them, the
// model must not crash, read out of bounds or leak buffers.
//
// Input: byte 0 picks the receiving node and port, the rest is the packet.
// Inputs of 256+ bytes are also tried as a MAD wrapped in a valid
// directed-route or LID-routed packet, so the SMA and PMA see every
// attribute, method and modifier.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "fabric/model/fabric.h"
#include "fabric/model/mad_packet.h"
#include "fabric/topology/topology_spec.h"
#include "tests/fabric/model/hand_config.h"

using namespace ibfab;

namespace {

// A fresh, configured fabric for every input: what one input did to the
// SMA state (LIDs, routes, port states) must not leak into the next.
struct World {
  sim::Simulator sim;
  std::unique_ptr<fabric::Fabric> fabric;
  explicit World(const topo::Topology& t) {
    fabric = std::make_unique<fabric::Fabric>(sim, t);
    fabric::testing::configure_by_hand(*fabric);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const topo::Topology topology = topo::load_topology("line:2");
  if (size < 1 || size > fabric::PacketPool::kMaxPacket + 1) return 0;
  World w(topology);
  fabric::Fabric& f = *w.fabric;
  fabric::Hca& h1 = *f.find_hca("H1");
  fabric::Switch& s1 = *f.find_switch("S1");
  fabric::Port& at = (data[0] & 1) ? *h1.port(1).peer() : h1.port(1);

  fabric::PacketRef raw = f.packets().make(static_cast<uint32_t>(size - 1));
  if (size > 1) std::memcpy(raw.mutable_bytes().data(), data + 1, size - 1);
  f.deliver(at, std::move(raw));

  if (size - 1 >= 256) {
    fabric::MadSend send;
    const bool smp = data[2] == 0x01 || data[2] == 0x81;
    send.vl15 = smp;
    send.dlid = (data[0] & 2) ? 0xFFFF : (data[0] & 1 ? s1.port(0).lid : h1.port(1).lid);
    send.slid = f.find_hca("H2")->port(1).lid;
    send.dest_qp = smp ? 0 : 1;
    send.src_qp = smp ? 0 : 1;
    send.qkey = smp ? 0 : 0x80010000;
    f.deliver(at, fabric::make_mad_packet(f.packets(), send, {data + 1, 256}));
  }
  w.sim.run_until(w.sim.now() + sim::Time::ms(1));
  if (f.packets().buffers_in_use() != 0) __builtin_trap();  // every buffer came back
  return 0;
}
