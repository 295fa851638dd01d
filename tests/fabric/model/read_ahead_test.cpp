// ReadAhead: a message's bytes loaded a chunk at a time and served from it;
// another message, or a byte past the chunk, loads anew; a chunk that
// cannot be loaded whole falls back to the bytes asked for alone.
#include "fabric/model/read_ahead.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace ibfab::fabric {
namespace {

struct Source {
  std::vector<uint8_t> bytes;
  uint64_t fault_at = UINT64_MAX;  // loads reaching this offset fail
  std::vector<std::pair<uint64_t, std::size_t>> loads;
  bool load(uint64_t from, std::span<uint8_t> to) {
    loads.emplace_back(from, to.size());
    if (from + to.size() > fault_at) return false;
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(from), to.size(), to.begin());
    return true;
  }
};

Source counting(std::size_t n) {
  Source s;
  for (std::size_t i = 0; i < n; ++i) s.bytes.push_back(static_cast<uint8_t>(i * 13 + 1));
  return s;
}

TEST(ReadAhead, ServesAMessagesPacketsFromOneChunk) {
  Source src = counting(10000);
  ReadAhead ra;
  const uint64_t key = ra.next_key();
  std::array<uint8_t, 1000> out;
  for (uint64_t off = 0; off < 10000; off += 1000) {
    ASSERT_TRUE(ra.read(key, off, 10000, 4096, out, [&](uint64_t f, std::span<uint8_t> t) { return src.load(f, t); }));
    for (std::size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], src.bytes[off + i]) << off + i;
  }
  // Chunks of 4096 from 0, 4000 (the packet at 4000 ends past 4096) and 8000.
  ASSERT_EQ(src.loads.size(), 3u);
  EXPECT_EQ(src.loads[0], std::make_pair(uint64_t{0}, std::size_t{4096}));
  EXPECT_EQ(src.loads[1], std::make_pair(uint64_t{4000}, std::size_t{4096}));
  EXPECT_EQ(src.loads[2], std::make_pair(uint64_t{8000}, std::size_t{2000})) << "clipped to the message's end";
}

TEST(ReadAhead, AnotherMessageLoadsAnew) {
  Source src = counting(4096);
  ReadAhead ra;
  const uint64_t first = ra.next_key(), second = ra.next_key();
  ASSERT_NE(first, second);
  std::array<uint8_t, 100> out;
  auto load = [&](uint64_t f, std::span<uint8_t> t) { return src.load(f, t); };
  ASSERT_TRUE(ra.read(first, 0, 4096, 4096, out, load));
  src.bytes[5] = 0xEE;  // changed between the messages
  ASSERT_TRUE(ra.read(second, 0, 4096, 4096, out, load));
  EXPECT_EQ(out[5], 0xEE);
  EXPECT_EQ(src.loads.size(), 2u);
}

TEST(ReadAhead, AChunkThatFaultsFallsBackToTheBytesAsked) {
  Source src = counting(8192);
  src.fault_at = 5000;
  ReadAhead ra;
  const uint64_t key = ra.next_key();
  std::array<uint8_t, 1024> out;
  auto load = [&](uint64_t f, std::span<uint8_t> t) { return src.load(f, t); };
  ASSERT_TRUE(ra.read(key, 0, 8192, 8192, out, load)) << "the first packet's bytes are readable";
  EXPECT_EQ(out[1000], src.bytes[1000]);
  EXPECT_FALSE(ra.read(key, 4096, 8192, 8192, out, load)) << "the packet that meets the fault fails";
}

}  // namespace
}  // namespace ibfab::fabric
