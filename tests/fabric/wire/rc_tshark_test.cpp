// Wireshark's InfiniBand dissector reads our RC and UC packets: one packet of
// each RC and UC opcode, its extension headers filled with distinct values
// (rc_sample_headers.h), and every field tshark decodes must be the value we
// packed; fields of headers the opcode lacks must be absent. tshark 4.0
// displays the ICRC and VCRC without checking them, so they are compared
// with ours (checked independently in crc_test.cpp). (It has no dissector for
// the XRCETH: XRC packets show as an unknown header sequence.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fabric/wire/crc.h"
#include "fabric/wire/packet_codec.h"
#include "fabric/wire/pcap_writer.h"
#include "tests/fabric/wire/rc_sample_headers.h"
#include "tests/fabric/wire/sample_packets.h"
#include "tests/fabric/wire/tshark_run.h"

namespace ibfab::wire {
namespace {

using namespace testing;

// Sets in `s` the sample value of each header `l` has (and no other).
void fill_headers(PacketSpec& s, const OpcodeLayout& l) {
  if (l.xrceth) s.xrc_srqn = kXrcSrqn;
  if (l.reth) s.reth = kReth;
  if (l.atomic_eth) s.atomic_eth = kAtomicEth;
  if (l.aeth) s.aeth = kAeth;
  if (l.atomic_ack_eth) s.atomic_ack_eth = kAtomicAckEth;
  if (l.immediate) s.immediate = kImmediate;
  if (l.ieth) s.invalidate_rkey = kInvalidateRkey;
}

enum Field : std::size_t {
  kOpcode, kPsn, kDestQp, kVa, kRkey, kDmaLen, kSyndrome, kAckKind, kCredits, kTimer, kNakCode,
  kMsn, kSwapAdd, kCompare, kOriginal, kImmDt, kIeth, kIcrc, kVcrc, kNumFields
};
// Wireshark shows the AtomicETH's VA and R_Key under the RETH's field names.
const char* const kFields[kNumFields] = {
    "infiniband.bth.opcode",         "infiniband.bth.psn",
    "infiniband.bth.destqp",         "infiniband.reth.va",
    "infiniband.reth.r_key",         "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome",      "infiniband.aeth.syndrome.opcode",
    "infiniband.aeth.syndrome.credit_count", "infiniband.aeth.syndrome.timer",
    "infiniband.aeth.syndrome.error_code",   "infiniband.aeth.msn",
    "infiniband.atomiceth.swapdt",   "infiniband.atomiceth.cmpdt",
    "infiniband.atomicacketh.origremdt", "infiniband.immdt",
    "infiniband.ieth",               "infiniband.invariant.crc",
    "infiniband.variant.crc",
};

// The AETH of each opcode that has one: every syndrome kind, with the
// syndrome byte and its fields as laid out by hand.
struct AethCase {
  uint8_t opcode;
  Aeth aeth;
  uint8_t syndrome;
  uint8_t kind;
  const char* credits;
  const char* timer;
  const char* nak_code;
};
const AethCase kAeths[] = {
    {0x0d, Aeth::ack(0x717273, 10), 0x0a, 0, "10", "", ""},
    {0x0f, Aeth::rnr_nak(0x717274, 14), 0x2e, 1, "", "14", ""},
    {0x10, Aeth::ack(0x717275), 0x1f, 0, "31", "", ""},
    {0x11, Aeth::nak(0x717276, NakCode::kRemoteAccessError), 0x62, 3, "", "", "2"},
    {0x12, Aeth::ack(0x717277, 0), 0x00, 0, "0", "", ""},
};

std::string temp_dir() {
  char tmpl[] = "/tmp/ibfab-wire-rc-tshark-XXXXXX";
  return ::mkdtemp(tmpl) != nullptr ? std::string(tmpl) : std::string();
}

TEST(wire_RcTshark, DecodesEveryRcAndUcOpcodeAndHeaderField) {
  ASSERT_EQ(::access(kTshark, X_OK), 0) << "tshark is required: apt-get install tshark";
  const std::string dir = temp_dir();
  ASSERT_FALSE(dir.empty());
  const std::string pcap = dir + "/rc.pcap";

  std::vector<PacketSpec> specs;
  std::vector<std::vector<uint8_t>> packets;
  std::vector<const AethCase*> aeths;
  {
    PcapWriter w;
    ASSERT_EQ(w.open(pcap), "");
    for (int o = 0; o <= opcode::kUc + opcode::kRdmaWriteOnlyWithImmediate; ++o) {
      const uint8_t op = static_cast<uint8_t>(o);
      const OpcodeLayout l = opcode_layout(op);
      if (!l.valid) continue;
      PacketSpec s = local_rc_spec();
      s.bth.opcode = op;
      s.bth.psn = 0x100000u + op;
      s.bth.dest_qp = 0x2000u + op;
      fill_headers(s, l);
      const AethCase* a = nullptr;
      for (const AethCase& c : kAeths)
        if (c.opcode == op) a = &c;
      ASSERT_EQ(a != nullptr, l.aeth) << int{op};
      if (a) s.aeth = a->aeth;
      // Requests and acknowledges without data carry no payload.
      if (op == opcode::kRdmaReadRequest || (op >= opcode::kAcknowledge && op <= opcode::kFetchAdd))
        s.payload = {};
      std::vector<uint8_t> buf(256);
      buf.resize(pack_packet(buf, s));
      ASSERT_FALSE(buf.empty()) << int{op};
      ASSERT_TRUE(w.write(sim::Time::us(op + 1), buf));
      specs.push_back(s);
      packets.push_back(std::move(buf));
      aeths.push_back(a);
    }
    ASSERT_EQ(w.close(), "");
  }
  ASSERT_EQ(specs.size(), 23u + 12u);

  // The RPC-over-RDMA heuristic would claim the SEND payloads (01 02 03...)
  // and call them malformed: it is turned off. -E occurrence=f: the ImmDt and
  // IETH field names label both their subtree and their value.
  const std::string no_rpc = " --disable-protocol rpcordma";
  const auto got = tshark_fields(pcap, dir, kFields, " -E occurrence=f" + no_rpc);
  ASSERT_EQ(got.size(), specs.size());

  for (std::size_t i = 0; i < specs.size(); ++i) {
    const PacketSpec& s = specs[i];
    const std::vector<uint8_t>& p = packets[i];
    ASSERT_EQ(got[i].size(), std::size_t{kNumFields});
    std::string want[kNumFields];
    want[kOpcode] = hex(s.bth.opcode);
    want[kPsn] = hex(s.bth.psn);
    want[kDestQp] = hex(s.bth.dest_qp);
    if (s.reth) {
      want[kVa] = hex(s.reth->va);
      want[kRkey] = hex(s.reth->rkey);
      want[kDmaLen] = hex(s.reth->dma_length);
    }
    if (s.atomic_eth) {
      want[kVa] = hex(s.atomic_eth->va);
      want[kRkey] = hex(s.atomic_eth->rkey);
      want[kSwapAdd] = hex(s.atomic_eth->swap_add);
      want[kCompare] = hex(s.atomic_eth->compare);
    }
    if (const AethCase* a = aeths[i]) {
      want[kSyndrome] = hex(a->syndrome);
      want[kAckKind] = hex(a->kind);
      want[kCredits] = a->credits;
      want[kTimer] = a->timer;
      want[kNakCode] = a->nak_code;
      want[kMsn] = hex(a->aeth.msn);
    }
    if (s.atomic_ack_eth) want[kOriginal] = hex(s.atomic_ack_eth->original);
    if (s.immediate) want[kImmDt] = "91929394";
    if (s.invalidate_rkey) want[kIeth] = "a1a2a3a4";
    // tshark shows the four and two CRC bytes as big-endian numbers.
    want[kIcrc] = hex(load_be32(p.data() + p.size() - 6));
    want[kVcrc] = hex(load_be16(p.data() + p.size() - 2));
    for (std::size_t f = 0; f < kNumFields; ++f)
      EXPECT_TRUE(same_value(got[i][f], want[f]))
          << "opcode " << hex(s.bth.opcode) << " field " << kFields[f] << ": tshark says '"
          << got[i][f] << "', we packed '" << want[f] << "'";
  }

  // The dissector found nothing malformed or suspicious in any packet.
  const std::string expert = run_tshark(pcap, dir, "-q -z expert" + no_rpc);
  EXPECT_EQ(expert.find("Error"), std::string::npos) << expert;
  EXPECT_EQ(expert.find("Warn"), std::string::npos) << expert;
  EXPECT_EQ(expert.find("Malformed"), std::string::npos) << expert;

  std::remove(pcap.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace ibfab::wire
