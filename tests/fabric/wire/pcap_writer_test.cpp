#include "fabric/wire/pcap_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fabric/wire/sample_packets.h"

namespace ibfab::wire {
namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

uint32_t host32(const std::vector<uint8_t>& b, std::size_t off) {
  uint32_t v;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}

TEST(wire_PcapWriter, BareInfinibandRecords) {
  const std::string path = ::testing::TempDir() + "wire_pcap_writer_ib.pcap";
  {
    PcapWriter w;
    ASSERT_EQ(w.open(path, PcapWriter::Link::kInfiniband), "");
    EXPECT_TRUE(w.write(sim::Time::s(3) + sim::Time::ps(123'456'789), testing::kLocalRcPacket));
    EXPECT_TRUE(w.write(sim::Time::ps(-5), testing::kGlobalUdPacket));
    EXPECT_EQ(w.records(), 2u);
  }  // destructor flushes
  const auto b = read_all(path);
  ASSERT_EQ(b.size(), 24 + 16 + 38 + 16 + 82);
  EXPECT_EQ(host32(b, 0), 0xa1b23c4du);
  EXPECT_EQ(b[4] | b[5] << 8, 2);  // host order (little-endian test hosts)
  EXPECT_EQ(host32(b, 16), 65535u);
  EXPECT_EQ(host32(b, 20), 247u);
  EXPECT_EQ(host32(b, 24), 3u);        // seconds
  EXPECT_EQ(host32(b, 28), 123'456u);  // nanoseconds (ps truncated)
  EXPECT_EQ(host32(b, 32), 38u);
  EXPECT_EQ(host32(b, 36), 38u);
  EXPECT_TRUE(std::equal(testing::kLocalRcPacket.begin(), testing::kLocalRcPacket.end(), b.begin() + 40));
  EXPECT_EQ(host32(b, 78), 0u);  // negative time written as 0
  EXPECT_EQ(host32(b, 86), 82u);
  std::remove(path.c_str());
}

TEST(wire_PcapWriter, ErfRecordsWrapThePacket) {
  const std::string path = ::testing::TempDir() + "wire_pcap_writer_erf.pcap";
  PcapWriter w;
  ASSERT_EQ(w.open(path), "");
  EXPECT_TRUE(w.write(sim::Time::s(3) + sim::Time::ns(500'000'000), testing::kLocalRcPacket));
  ASSERT_EQ(w.close(), "");
  const auto b = read_all(path);
  ASSERT_EQ(b.size(), 24 + 16 + 16 + 38);
  EXPECT_EQ(host32(b, 20), 197u);
  EXPECT_EQ(host32(b, 24), 3u);
  EXPECT_EQ(host32(b, 28), 500'000'000u);
  EXPECT_EQ(host32(b, 32), 54u);
  const std::size_t erf = 40;
  EXPECT_EQ(b[erf + 0], 0x00);  // 0.5 s: fraction 0x80000000, little-endian
  EXPECT_EQ(b[erf + 3], 0x80);
  EXPECT_EQ(b[erf + 4], 3);     // seconds
  EXPECT_EQ(b[erf + 8], 21);    // type INFINIBAND
  EXPECT_EQ(b[erf + 9], 0x04);  // varying length
  EXPECT_EQ(load_be16(&b[erf + 10]), 54);  // rlen
  EXPECT_EQ(load_be16(&b[erf + 14]), 38);  // wlen
  EXPECT_TRUE(std::equal(testing::kLocalRcPacket.begin(), testing::kLocalRcPacket.end(), b.begin() + 56));
  std::remove(path.c_str());
}

TEST(wire_PcapWriter, ReportsErrors) {
  PcapWriter w;
  EXPECT_FALSE(w.write(sim::Time::zero(), testing::kLocalRcPacket));
  const std::string err = w.open("/nonexistent-dir/x.pcap");
  EXPECT_NE(err.find("/nonexistent-dir/x.pcap"), std::string::npos) << err;
  EXPECT_FALSE(w.is_open());
  EXPECT_EQ(w.close(), "");
}

}  // namespace
}  // namespace ibfab::wire
