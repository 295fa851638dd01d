// The event pool at its limit (2^24 pending events, 1 GiB of records).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "sim/event_pool.h"

namespace ibfab::sim {
namespace {

// The CLI prints "ibfab: " before an error: the message must not carry one of its own.
TEST(EventPool, PastTheLimitItSaysSoOnce) {
  EventPool pool;
  for (uint32_t i = 0; i < (1u << 24); ++i) pool.acquire();
  try {
    pool.acquire();
    FAIL() << "2^24 + 1 events pending";
  } catch (const std::length_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "more than 2^24 events pending at once (the scenario schedules too much at one time)");
  }
}

}  // namespace
}  // namespace ibfab::sim
