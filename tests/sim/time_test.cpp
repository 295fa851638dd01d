#include "sim/time.h"

#include <gtest/gtest.h>

namespace ibfab::sim {
namespace {

TEST(Time, UnitHelpersArePicoseconds) {
  EXPECT_EQ(Time::ns(1).ps(), 1'000);
  EXPECT_EQ(Time::us(1).ps(), 1'000'000);
  EXPECT_EQ(Time::ms(1).ps(), 1'000'000'000);
  EXPECT_EQ(Time::s(1).ps(), 1'000'000'000'000);
  static_assert(Time::us(2) - Time::ns(500) == Time::ns(1500));
  static_assert(Time::ns(3) * 4 == Time::ns(12));
}

TEST(Time, MaxCoversMonthsOfSimulatedTime) {
  EXPECT_GT(Time::max(), Time::s(86'400) * 100);  // more than 100 days
}

TEST(Time, StrIsExactAndPicksTheUnit) {
  EXPECT_EQ(Time::ps(999).str(), "999ps");
  EXPECT_EQ(Time::ns(1).str(), "1.000ns");
  EXPECT_EQ((Time::us(12) + Time::ns(345)).str(), "12.345us");
  EXPECT_EQ(Time::s(3).str(), "3.000s");
  EXPECT_EQ((Time::zero() - Time::ms(2)).str(), "-2.000ms");
}

TEST(Time, ParseAcceptsUnitsAndDecimals) {
  Time t;
  ASSERT_TRUE(parse_time("10us", t));
  EXPECT_EQ(t, Time::us(10));
  ASSERT_TRUE(parse_time("1.5ms", t));
  EXPECT_EQ(t, Time::us(1500));
  ASSERT_TRUE(parse_time("42ps", t));
  EXPECT_EQ(t, Time::ps(42));
  ASSERT_TRUE(parse_time("0", t));
  EXPECT_EQ(t, Time::zero());
}

TEST(Time, ParseRejectsGarbage) {
  Time t = Time::ns(7);
  for (const char* bad : {"", "us", "10", "10 us", "1.5", "-3ns", "1.2345ps", "10min",
                          "99999999999999999999s", "1..2ms"}) {
    EXPECT_FALSE(parse_time(bad, t)) << bad;
  }
  EXPECT_EQ(t, Time::ns(7)) << "a failed parse must not touch the output";
}

TEST(Time, ExactTextIsTheLargestWholeUnitAndReadsBackTheSame) {
  EXPECT_EQ(Time::zero().exact_str(), "0");
  EXPECT_EQ(Time::s(2).exact_str(), "2s");
  EXPECT_EQ(Time::us(3500).exact_str(), "3500us");
  EXPECT_EQ(Time::ms(3500).exact_str(), "3500ms");
  EXPECT_EQ(Time::ns(1500).exact_str(), "1500ns");
  EXPECT_EQ(Time::ps(42).exact_str(), "42ps");
  for (const Time t : {Time::ps(1), Time::ns(999), Time::us(1'000'001), Time::ms(250), Time::s(86'400)}) {
    Time back;
    ASSERT_TRUE(parse_time(t.exact_str(), back)) << t.exact_str();
    EXPECT_EQ(back, t) << t.exact_str();
  }
}

}  // namespace
}  // namespace ibfab::sim
