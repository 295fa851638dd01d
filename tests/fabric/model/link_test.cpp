#include "fabric/model/link.h"

#include <gtest/gtest.h>

namespace ibfab::fabric {
namespace {

TEST(LinkRate, SerialisationIsExactIntegerTime) {
  const LinkRate edr4{LinkSpeed::EDR, LinkWidth::X4};  // 100 Gb/s
  EXPECT_EQ(edr4.data_bps(), 100'000'000'000u);
  EXPECT_EQ(edr4.serialisation(290).ps(), 23'200);      // 2320 bits / 100 Gb/s
  const LinkRate sdr1{LinkSpeed::SDR, LinkWidth::X1};  // 2 Gb/s
  EXPECT_EQ(sdr1.serialisation(1).ps(), 4'000);
  const LinkRate fdr4{LinkSpeed::FDR, LinkWidth::X4};  // 14.0625 x 4 x 64/66
  EXPECT_EQ(fdr4.data_bps(), 54'545'454'545u);
  EXPECT_EQ(fdr4.serialisation(4096).ps(), 600'747) << "rounded up to a whole ps";
}

TEST(LinkRate, SerialisationAgreesAcrossTheFastAndWidePaths) {
  const LinkRate r{LinkSpeed::FDR, LinkWidth::X1};
  // Either side of the 64-bit fast path's limit: same rate, linear time.
  const int64_t a = r.serialisation(2'000'000).ps(), b = r.serialisation(2'000'001).ps();
  EXPECT_GT(b, a);
  EXPECT_LE(b - a, r.serialisation(1).ps());
  const unsigned __int128 bits_ps = static_cast<unsigned __int128>(4'000'000) * 8'000'000'000'000ull;
  EXPECT_EQ(r.serialisation(4'000'000).ps(), static_cast<int64_t>((bits_ps + 13'636'363'635) / 13'636'363'636));
}

TEST(LinkRate, PortInfoEncodingsRoundTrip) {
  for (int sp = 0; sp < 7; ++sp)
    for (int w = 0; w < 5; ++w) {
      const LinkRate r{static_cast<LinkSpeed>(sp), static_cast<LinkWidth>(w)};
      EXPECT_EQ(LinkRate::from_port_info(r.width_bits(), r.speed_bits(), r.speed_ext_bits()), r) << r.str();
    }
  EXPECT_FALSE(LinkRate::from_port_info(3, 4, 0)) << "width bits 1|2 name no single width";
  EXPECT_FALSE(LinkRate::from_port_info(2, 0, 0)) << "no speed";
  EXPECT_FALSE(LinkRate::from_port_info(2, 1, 3)) << "ext speed bits 1|2";
}

TEST(LinkRate, ParsesAndPrintsTheIbnetdiscoverForm) {
  auto r = LinkRate::parse("12xHDR");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->lanes(), 12);
  EXPECT_EQ(r->str(), "12xHDR");
  EXPECT_FALSE(LinkRate::parse("3xQDR"));
  EXPECT_FALSE(LinkRate::parse("4xXDR"));
  EXPECT_FALSE(LinkRate::parse("x4QDR"));
  EXPECT_FALSE(LinkRate::parse("4QDR"));
}

TEST(LinkRate, PortInfoAndSaEncodings) {
  const LinkRate qdr4{LinkSpeed::QDR, LinkWidth::X4};
  EXPECT_EQ(qdr4.width_bits(), 2);
  EXPECT_EQ(qdr4.speed_bits(), 4);
  EXPECT_EQ(qdr4.speed_ext_bits(), 0);
  EXPECT_EQ(qdr4.sa_rate(), 7);  // 40 Gb/s
  const LinkRate edr4{LinkSpeed::EDR, LinkWidth::X4};
  EXPECT_EQ(edr4.speed_ext_bits(), 2);
  EXPECT_EQ(edr4.sa_rate(), 16);  // 100 Gb/s
  EXPECT_EQ((LinkRate{LinkSpeed::SDR, LinkWidth::X1}.sa_rate()), 2);
  EXPECT_EQ((LinkRate{LinkSpeed::NDR, LinkWidth::X4}.sa_rate()), 21);  // 400 Gb/s
  EXPECT_EQ((LinkRate{LinkSpeed::FDR, LinkWidth::X4}.sa_rate()), 12);  // 56 Gb/s
}

class LinkCarry : public ::testing::Test {
 protected:
  Link link{0, nullptr, nullptr, LinkRate{LinkSpeed::EDR, LinkWidth::X4}, sim::Time::ns(10), 99};
};

TEST_F(LinkCarry, IsAPureFunctionOfPacketAndTime) {
  const Transit a = link.carry(5, 290, sim::Time::us(1));
  const Transit b = link.carry(5, 290, sim::Time::us(1));
  EXPECT_EQ(a.serialisation, b.serialisation);
  EXPECT_EQ(a.propagation, sim::Time::ns(10));
  EXPECT_EQ(a.serialisation.ps(), 23'200);
  EXPECT_FALSE(a.dropped());
}

// Every speed and width, sizes from a byte to a jumbo MAD burst: the link's
// serialisation (a multiplication where a byte is a whole number of ps) is
// LinkRate's exact division.
TEST(LinkCarrySerialisation, EqualsTheRatesExactTimeAtEveryRate) {
  for (int sp = 0; sp <= static_cast<int>(LinkSpeed::NDR); ++sp)
    for (int w = 0; w <= static_cast<int>(LinkWidth::X12); ++w) {
      const LinkRate rate{static_cast<LinkSpeed>(sp), static_cast<LinkWidth>(w)};
      const Link l{0, nullptr, nullptr, rate, sim::Time::ns(10), 1};
      for (const uint32_t bytes : {1u, 26u, 290u, 4177u, 65'536u, 1'999'999u})
        EXPECT_EQ(l.carry(1, bytes, sim::Time{}).serialisation, rate.serialisation(bytes)) << rate.str() << " " << bytes;
    }
}

TEST_F(LinkCarry, DownLinksAndOversizedPacketsDrop) {
  link.set_mtu(2048);
  EXPECT_EQ(link.carry(1, 2048 + Link::kHeaderAllowance, sim::Time::zero()).drop, DropReason::None);
  EXPECT_EQ(link.carry(1, 2048 + Link::kHeaderAllowance + 1, sim::Time::zero()).drop, DropReason::TooLarge);
  link.set_up(false);
  EXPECT_EQ(link.carry(1, 100, sim::Time::zero()).drop, DropReason::LinkDown);
}

TEST_F(LinkCarry, LossFollowsTheProbabilityAndIsReproducible) {
  link.set_loss(0.25);
  int lost = 0;
  for (uint64_t id = 0; id < 40'000; ++id) lost += link.carry(id, 100, sim::Time::zero()).drop == DropReason::Loss;
  EXPECT_NEAR(lost, 10'000, 400);
  for (uint64_t id = 0; id < 100; ++id)
    EXPECT_EQ(link.carry(id, 100, sim::Time::zero()).drop, link.carry(id, 100, sim::Time::ms(5)).drop);
  link.set_loss(0);
  EXPECT_FALSE(link.carry(3, 100, sim::Time::zero()).dropped());
  link.set_loss(7);  // clamped
  EXPECT_EQ(link.loss(), 1.0);
}

}  // namespace
}  // namespace ibfab::fabric
