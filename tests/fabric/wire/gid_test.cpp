#include "fabric/wire/gid.h"

#include <gtest/gtest.h>

#include <unordered_set>

namespace ibfab::wire {
namespace {

TEST(wire_Gid, FromSplitsPrefixAndGuidInNetworkOrder) {
  const Gid g = Gid::from(0xfe80000000000000ULL, 0x0002c90300000001ULL);
  EXPECT_EQ(g.raw[0], 0xfe);
  EXPECT_EQ(g.raw[1], 0x80);
  EXPECT_EQ(g.raw[8], 0x00);
  EXPECT_EQ(g.raw[9], 0x02);
  EXPECT_EQ(g.raw[10], 0xc9);
  EXPECT_EQ(g.raw[15], 0x01);
  EXPECT_EQ(g.prefix(), 0xfe80000000000000ULL);
  EXPECT_EQ(g.guid(), 0x0002c90300000001ULL);
  EXPECT_FALSE(g.is_multicast());
  EXPECT_TRUE(Gid::parse("ff12:401b::1")->is_multicast());
}

TEST(wire_Gid, CanonicalTextRoundTrips) {
  for (const char* text : {"fe80::2:c903:0:1", "ff12:401b:ffff::ffff:ffff", "::", "::1", "1::",
                           "fe80::2c9:3:0:1", "1:2:3:4:5:6:7:8", "1:0:2::3:0:0", "ff12:401b::1",
                           "2001:db8::1:0:0:1", "0:1:2:3:4:5:6:0"}) {
    const auto g = Gid::parse(text);
    ASSERT_TRUE(g.has_value()) << text;
    EXPECT_EQ(g->str(), text);
  }
}

TEST(wire_Gid, ParsesEveryIpv6Spelling) {
  EXPECT_EQ(Gid::parse("FE80:0000:0000:0000:0002:C903:0000:0001")->str(), "fe80::2:c903:0:1");
  EXPECT_EQ(Gid::parse("fe80:0:0:0:2:c903:0:1")->str(), "fe80::2:c903:0:1");
  EXPECT_EQ(Gid::parse("0:0:0:0:0:0:0:0")->str(), "::");
  EXPECT_EQ(Gid::parse("1:2:3:4:5:6:7::")->str(), "1:2:3:4:5:6:7:0");
  EXPECT_EQ(Gid::parse("::2:3:4:5:6:7:8")->str(), "0:2:3:4:5:6:7:8");
  EXPECT_EQ(Gid::parse("::ffff:192.168.0.1")->str(), "::ffff:c0a8:1");
  EXPECT_EQ(Gid::parse("1:2:3:4:5:6:1.2.3.4")->str(), "1:2:3:4:5:6:102:304");
  // The longest zero run is compressed; the leftmost on a tie; never one group.
  EXPECT_EQ(Gid::parse("1:0:0:2:0:0:0:3")->str(), "1:0:0:2::3");
  EXPECT_EQ(Gid::parse("1:0:0:2:0:0:3:4")->str(), "1::2:0:0:3:4");
  EXPECT_EQ(Gid::parse("1:0:2:3:4:5:6:7")->str(), "1:0:2:3:4:5:6:7");
}

TEST(wire_Gid, RejectsBadText) {
  for (const char* text :
       {"", ":", ":::", "1:2", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8",
        "1::2::3", "12345::", "g::", "fe80:::1", ":1::", "1::2:", "fe80::2:c903:0:1 ", " ::",
        "::1.2.3", "::1.2.3.256", "::01.2.3.4", "::1.2.3.4:5", "1:2:3:4:5:6:7:1.2.3.4",
        "::-1", "fe80::2:c903:0:1/64", "0x1::"}) {
    EXPECT_FALSE(Gid::parse(text).has_value()) << '"' << text << '"';
  }
}

TEST(wire_Gid, FormatIsBoundedAndNulTerminated) {
  char buf[Gid::kMaxTextLen + 1];
  const Gid g = *Gid::parse("1111:2222:3333:4444:5555:6666:7777:8888");
  EXPECT_EQ(g.format(buf), Gid::kMaxTextLen);
  EXPECT_STREQ(buf, "1111:2222:3333:4444:5555:6666:7777:8888");
}

TEST(wire_Gid, OrdersAndHashesByValue) {
  const Gid a = Gid::from(1, 2);
  const Gid b = Gid::from(1, 3);
  const Gid c = Gid::from(2, 0);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(a, Gid::from(1, 2));
  EXPECT_NE(a, b);
  std::unordered_set<Gid> set{a, b, c, Gid::from(1, 2)};
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(Gid{}.is_zero());
}

}  // namespace
}  // namespace ibfab::wire
