// Wireshark's own dissector reads our pcap: every header field it decodes must
// be what we packed (the default ERF link type; see pcap_writer.h). tshark 4.0
// displays the ICRC and VCRC but does not check
// them, so the CRC values are compared with ours (checked independently in
// crc_test.cpp).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "fabric/mad/cm_sidr.h"
#include "fabric/wire/crc.h"
#include "fabric/wire/packet_codec.h"
#include "fabric/wire/pcap_writer.h"
#include "tests/fabric/wire/sample_packets.h"
#include "tests/fabric/wire/tshark_run.h"

namespace ibfab::wire {
namespace {

using testing::hex;
using testing::kTshark;
using testing::run_tshark;
using testing::same_value;

const char* const kFields[] = {
    "infiniband.lrh.vl",          "infiniband.lrh.lnh",         "infiniband.lrh.dlid",
    "infiniband.lrh.pktlen",      "infiniband.lrh.slid",        "infiniband.grh.paylen",
    "infiniband.grh.dgid",        "infiniband.bth.opcode",      "infiniband.bth.padcnt",
    "infiniband.bth.p_key",       "infiniband.bth.destqp",      "infiniband.bth.psn",
    "infiniband.deth.q_key",      "infiniband.deth.srcqp",      "infiniband.mad.mgmtclass",
    "infiniband.mad.method",      "infiniband.mad.attributeid", "infiniband.mad.transactionid",
    "infiniband.smpdirected.hopcount", "infiniband.sa.componentmask",
    "infiniband.invariant.crc",   "infiniband.variant.crc",
};
constexpr std::size_t kNumFields = std::size(kFields);

struct Expect {
  std::size_t field;
  std::string value;
};

TEST(wire_Tshark, DecodesEveryFieldWePacked) {
  ASSERT_EQ(::access(kTshark, X_OK), 0) << "tshark is required: apt-get install tshark";

  char tmpl[] = "/tmp/ibfab-wire-tshark-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string pcap = dir + "/wire.pcap";

  const auto smp = testing::dr_get_node_info(0x1122334455667788ULL);
  const auto sa = testing::sa_get_table_mcmember(0xabcdef);
  const PacketSpec specs[] = {
      testing::global_ud_spec(),
      testing::mad_spec(smp, 0, 0xffff, 0x0001),
      testing::mad_spec(sa, 1, 0x0001, 0x0005),
  };
  std::vector<std::vector<uint8_t>> packets;
  {
    PcapWriter w;
    ASSERT_EQ(w.open(pcap), "");
    int64_t t = 1;
    for (const PacketSpec& s : specs) {
      std::vector<uint8_t> buf(512);
      const std::size_t n = pack_packet(buf, s);
      ASSERT_GT(n, 0u);
      buf.resize(n);
      ASSERT_TRUE(parse_packet(buf).ok());
      ASSERT_TRUE(w.write(sim::Time::us(t++), buf));
      packets.push_back(std::move(buf));
    }
    ASSERT_EQ(w.close(), "");
  }

  const auto rows = testing::tshark_fields(pcap, dir, kFields);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) ASSERT_EQ(row.size(), kNumFields);

  auto crcs = [&](std::size_t i) {
    const auto& p = packets[i];
    // tshark shows the four and two CRC bytes as big-endian numbers.
    return std::array<std::string, 2>{hex(load_be32(p.data() + p.size() - 6)),
                                      hex(load_be16(p.data() + p.size() - 2))};
  };
  auto check = [&](std::size_t i, std::initializer_list<Expect> expects) {
    for (const Expect& e : expects)
      EXPECT_TRUE(same_value(rows[i][e.field], e.value))
          << "packet " << i << " field " << kFields[e.field] << ": tshark says '" << rows[i][e.field]
          << "', we packed '" << e.value << "'";
    // tshark's SA dissector stops before the CRCs of a GetTable request, so
    // it shows them only for the first two packets.
    if (i == 2 && rows[i][20].empty() && rows[i][21].empty()) return;
    EXPECT_TRUE(same_value(rows[i][20], crcs(i)[0])) << "packet " << i << " ICRC " << rows[i][20];
    EXPECT_TRUE(same_value(rows[i][21], crcs(i)[1])) << "packet " << i << " VCRC " << rows[i][21];
  };
  // Every packet: the LRH, BTH and DETH fields of its spec, as packed.
  for (std::size_t i = 0; i < 3; ++i) {
    const PacketSpec& s = specs[i];
    const ParsedPacket p = parse_packet(packets[i]);
    check(i, {{0, hex(s.lrh.vl)}, {1, hex(p.lrh.lnh)}, {2, hex(s.lrh.dlid)}, {3, hex(p.lrh.pkt_len)},
              {4, hex(s.lrh.slid)}, {7, hex(s.bth.opcode)}, {8, hex(p.bth.pad_count)},
              {9, hex(s.bth.pkey)}, {10, hex(s.bth.dest_qp)}, {11, hex(s.bth.psn)},
              {12, hex(s.deth->qkey)}, {13, hex(s.deth->src_qp)}});
  }
  // (a) UD SEND_ONLY with GRH to multicast LID 0xC001: no MAD.
  check(0, {{2, "0xc001"}, {5, hex(parse_packet(packets[0]).grh->pay_len)},
            {6, specs[0].grh->dgid.str()}, {7, "0x64"}, {14, ""}, {15, ""}});
  // (b) Directed-route SubnGet(NodeInfo) on QP0, VL15.
  check(1, {{0, "15"}, {10, "0"}, {14, "0x81"}, {15, "0x01"}, {16, "0x0011"},
            {17, "0x1122334455667788"}, {18, "2"}});
  // (c) SA SubnAdmGetTable(MCMemberRecord) on QP1, Q_Key 0x80010000.
  check(2, {{10, "1"}, {12, "0x80010000"}, {14, "0x03"}, {15, "0x12"}, {16, "0x0038"},
            {17, "0xabcdef"}, {19, "0x3"}});

  std::remove(pcap.c_str());
  ::rmdir(dir.c_str());
}

// A CM SIDR_REQ (fabric/mad/cm_sidr.h) on QP1, as rdma_cm's UD resolution
// sends it: Wireshark names the message by its attribute ("CM
// ServiceIDResReq"; 4.0 has no dissector for its fields).
TEST(wire_Tshark, DecodesSidrReq) {
  if (::access(kTshark, X_OK) != 0) GTEST_SKIP() << "tshark is not installed";
  char tmpl[] = "/tmp/ibfab-wire-sidr-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string pcap = dir + "/sidr.pcap";
  mad::SidrReq req;
  req.request_id = 0x12345678;
  req.p_key = 0xffff;
  req.service_id = 0x0000000001114e20ull;  // RDMA_PS_UDP, port 20000
  const mad::CmMad m = mad::make_cm_mad(0xabcdef, req);
  {
    PcapWriter w;
    ASSERT_EQ(w.open(pcap), "");
    std::vector<uint8_t> buf(512);
    const std::size_t n = pack_packet(buf, testing::mad_spec(m, 1, 0x0003, 0x0002));
    ASSERT_GT(n, 0u);
    buf.resize(n);
    ASSERT_TRUE(w.write(sim::Time::us(1), buf));
    ASSERT_EQ(w.close(), "");
  }
  const std::string fields = run_tshark(
      pcap, dir, "-T fields -E separator=/t -e infiniband.mad.mgmtclass -e infiniband.mad.method "
                 "-e infiniband.mad.attributeid -e infiniband.mad.transactionid");
  EXPECT_EQ(fields, "0x07\t0x03\t0x0017\t0x0000000000abcdef\n");
  const std::string text = run_tshark(pcap, dir, "-V");
  EXPECT_NE(text.find("CM ServiceIDResReq"), std::string::npos) << text;
  std::remove(pcap.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace ibfab::wire
