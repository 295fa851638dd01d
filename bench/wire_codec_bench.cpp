// The packet codec alone: packing (without CRCs, as the HCA's send path
// does) and parsing (without checking CRCs, as its receive path does) one
// packet at a time into and from a reused buffer. The UD rows are the send
// and receive hot path; compare them with the same rows built from an older
// tree (see the RC rows below). The RC rows carry a RETH, and an AETH with an
// AtomicAckETH.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>

#include "fabric/wire/packet_codec.h"

namespace ibfab::bench {
namespace {

const std::array<uint8_t, 64> kPayload{};

wire::PacketSpec ud_send_only() {
  wire::PacketSpec s;
  s.lrh.dlid = 7;
  s.lrh.slid = 3;
  s.bth.opcode = wire::opcode::kUdSendOnly;
  s.bth.dest_qp = 0x1234;
  s.deth = wire::Deth{0x11111111, 0x48};
  s.payload = kPayload;
  return s;
}

void pack(benchmark::State& state, wire::PacketSpec (*make)()) {
  const wire::PacketSpec spec = make();
  std::array<uint8_t, 256> out{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(wire::pack_packet_unsealed(out, spec));
    benchmark::ClobberMemory();
  }
  state.counters["packets_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void parse(benchmark::State& state, wire::PacketSpec (*make)()) {
  std::array<uint8_t, 256> buf{};
  const std::size_t n = wire::pack_packet(buf, make());
  const std::span<const uint8_t> packet(buf.data(), n);
  for (auto _ : state) {
    const wire::ParsedPacket p = wire::parse_packet(packet, /*check_crcs=*/false);
    benchmark::DoNotOptimize(p.payload.data());
  }
  state.counters["packets_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(pack, ud, ud_send_only)->Name("wire/pack/ud_send_only");
BENCHMARK_CAPTURE(parse, ud, ud_send_only)->Name("wire/parse/ud_send_only");

// RC rows begin. To time the UD rows in a tree from before the RC headers,
// copy this file there without the lines from here to the end marker.
wire::PacketSpec rc_write_first() {
  wire::PacketSpec s = ud_send_only();
  s.deth.reset();
  s.bth.opcode = wire::opcode::kRdmaWriteFirst;
  s.reth = wire::Reth{0x7f0000001000, 0x1234, 4096};
  return s;
}

wire::PacketSpec rc_atomic_ack() {
  wire::PacketSpec s = ud_send_only();
  s.deth.reset();
  s.bth.opcode = wire::opcode::kAtomicAcknowledge;
  s.aeth = wire::Aeth::ack(5);
  s.atomic_ack_eth = wire::AtomicAckEth{42};
  s.payload = {};
  return s;
}

BENCHMARK_CAPTURE(pack, rc_write, rc_write_first)->Name("wire/pack/rc_write_first");
BENCHMARK_CAPTURE(parse, rc_write, rc_write_first)->Name("wire/parse/rc_write_first");
BENCHMARK_CAPTURE(pack, rc_atomic_ack, rc_atomic_ack)->Name("wire/pack/rc_atomic_ack");
BENCHMARK_CAPTURE(parse, rc_atomic_ack, rc_atomic_ack)->Name("wire/parse/rc_atomic_ack");
// RC rows end.

}  // namespace
}  // namespace ibfab::bench
