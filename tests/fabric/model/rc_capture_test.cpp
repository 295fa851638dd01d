// What an RC exchange puts on the wire, read back by Wireshark's dissector
// from a capture of H1's link: every packet's opcode and PSN as the
// transport chose them, and nothing malformed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>

#include "fabric/wire/pcap_writer.h"
#include "tests/fabric/model/rc_fixture.h"
#include "tests/fabric/wire/tshark_run.h"

namespace ibfab::fabric::testing {
namespace {

using wire::testing::hex;
using wire::testing::kTshark;
using wire::testing::run_tshark;
using wire::testing::tshark_fields;

class RcCaptureTest : public RcFixture {};

TEST_F(RcCaptureTest, TsharkDecodesEveryPacketOfAnExchange) {
  ASSERT_EQ(::access(kTshark, X_OK), 0) << "tshark is required: apt-get install tshark";
  char tmpl[] = "/tmp/ibfab-rc-capture-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl, pcap = dir + "/rc.pcap";
  connect();
  wire::PcapWriter w;
  ASSERT_EQ(w.open(pcap), "");
  fabric.capture(&w, {a.hca->port(1).link()->id()});
  // One operation at a time, so that the order on the link is fixed.
  fill(a, 0, 3000, 1);
  ASSERT_EQ(post_recv(b, 1, {sge(b, 0, 4096)}), 0);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kSend, {sge(a, 0, 3000)}), 0);  // FIRST, MIDDLE, LAST
  sim.run();
  ASSERT_EQ(post_recv(b, 2, {}), 0);
  SendWr wr;
  wr.opcode = wr_opcode::kRdmaWriteWithImm;
  wr.imm_data = 0x01020304;
  wr.remote_addr = b.base() + 0x2000;
  wr.rkey = b.key;
  ASSERT_EQ(post(a, wr, {sge(a, 0, 100)}), 0);
  sim.run();
  ASSERT_EQ(post_send(a, 3, wr_opcode::kRdmaRead, {sge(a, 0x1000, 100)}, 0, b.base(), b.key), 0);
  sim.run();
  wr = SendWr{};
  wr.opcode = wr_opcode::kAtomicFetchAndAdd;
  wr.remote_addr = b.base() + 0x3000;
  wr.rkey = b.key;
  wr.compare_add = 5;
  ASSERT_EQ(post(a, wr, {sge(a, 0x1800, 8)}), 0);
  sim.run();
  fabric.capture(nullptr);
  ASSERT_EQ(w.close(), "");
  ASSERT_EQ(b.rec.recvs.size(), 2u);

  struct Want {
    uint8_t opcode;
    uint32_t psn;
  };
  const uint32_t p = 0xFFFFF0;  // the fixture's first PSN
  const std::vector<Want> want = {
      {0x00, p}, {0x01, p + 1}, {0x02, p + 2}, {0x11, p + 2},      // SEND of three packets, its ACK
      {0x0b, p + 3}, {0x11, p + 3},                                // WRITE Only with Immediate, ACK
      {0x0c, p + 4}, {0x10, p + 4},                                // READ request, its one response
      {0x14, p + 5}, {0x12, p + 5},                                // FetchAdd, ATOMIC Acknowledge
  };
  const std::string no_rpc = " --disable-protocol rpcordma";
  const std::array<const char*, 2> fields = {"infiniband.bth.opcode", "infiniband.bth.psn"};
  const auto got = tshark_fields(pcap, dir, fields, no_rpc);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_TRUE(wire::testing::same_value(got[i][0], hex(want[i].opcode))) << i << ": " << got[i][0];
    EXPECT_TRUE(wire::testing::same_value(got[i][1], hex(want[i].psn & 0xFFFFFF))) << i << ": " << got[i][1];
  }
  const std::string expert = run_tshark(pcap, dir, "-q -z expert" + no_rpc);
  EXPECT_EQ(expert.find("Error"), std::string::npos) << expert;
  EXPECT_EQ(expert.find("Malformed"), std::string::npos) << expert;
  std::remove(pcap.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace ibfab::fabric::testing
