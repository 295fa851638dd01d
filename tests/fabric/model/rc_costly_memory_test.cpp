// The connected transports over host memory whose every access is costly
// (a served client's: HostMemory::read_ahead() > 0, posted writes held
// until flush()): a message's bytes are read a chunk at a time, its
// packets' writes land together by the end of the message, and nothing
// stale is ever sent. CostlyMemory stands in for ProcessMemory over the
// fixture's BufferMemory, counting the accesses that would be system calls.
#include <gtest/gtest.h>

#include <tuple>
#include <utility>

#include "fabric/model/read_ahead.h"
#include "tests/fabric/model/rc_fixture.h"

namespace ibfab::fabric::testing {
namespace {

constexpr uint32_t kChunk = 8192;  // eight 1 KiB packets

class CostlyMemory final : public HostMemory {
 public:
  explicit CostlyMemory(BufferMemory& under) : under_(under) {}
  bool read(uint64_t addr, std::span<uint8_t> out) override {
    ++reads;
    flush();
    return under_.read(addr, out);
  }
  bool write(uint64_t addr, std::span<const uint8_t> in) override {
    ++writes;
    flush();
    return under_.write(addr, in);
  }
  uint32_t read_ahead() const override { return kChunk; }
  bool write_posted(uint64_t addr, std::span<const uint8_t> in) override {
    held.emplace_back(addr, std::vector<uint8_t>(in.begin(), in.end()));
    return true;
  }
  bool flush() override {
    if (!held.empty()) ++flushes;
    bool ok = true;
    for (auto& [addr, bytes] : std::exchange(held, {})) ok = under_.write(addr, bytes) && ok;
    return ok;
  }

  int reads = 0, writes = 0, flushes = 0;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> held;

 private:
  BufferMemory& under_;
};

// The fixture's hosts, each with a second region over the same bytes
// through a CostlyMemory (key `costly`).
class RcCostlyMemoryTest : public RcFixture {
 public:
  void SetUp() override {
    connect();
    for (auto [x, m, k] : {std::tuple{&a, &a_mem, &a_key}, std::tuple{&b, &b_mem, &b_key}}) {
      *m = std::make_unique<CostlyMemory>(*x->mem);
      *k = x->hca->memory().register_region(x->pd, **m, x->base(), kMemSize, x->base(), kAllAccess);
    }
  }
  Sge costly(const Host& x, uint64_t offset, uint32_t length) const {
    return Sge{x.base() + offset, length, &x == &a ? a_key : b_key};
  }

  std::unique_ptr<CostlyMemory> a_mem, b_mem;
  uint32_t a_key = 0, b_key = 0;
};

TEST_F(RcCostlyMemoryTest, WriteReadsAChunkAtATimeAndLandsByItsEnd) {
  const uint32_t n = 20 * 1024;  // 20 packets, 3 chunks
  fill(a, 0x1000, n, 3);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kRdmaWrite, {costly(a, 0x1000, n)}, send_flag::kSignaled, b.base() + 0x40000,
                      b_key),
            0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(b.read(0x40000, n), a.read(0x1000, n));
  EXPECT_EQ(a_mem->reads, 3) << "one read per chunk, not one per packet";
  EXPECT_TRUE(b_mem->held.empty()) << "every posted write flushed by the message's end";
  EXPECT_EQ(b_mem->flushes, 1);
  EXPECT_EQ(b_mem->writes, 0);
}

TEST_F(RcCostlyMemoryTest, ReadResponsesReadAChunkAtATime) {
  const uint32_t n = 17 * 1024;
  fill(b, 0x8000, n, 5);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kRdmaRead, {costly(a, 0x20000, n)}, send_flag::kSignaled, b.base() + 0x8000,
                      b_key),
            0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.read(0x20000, n), b.read(0x8000, n));
  EXPECT_EQ(b_mem->reads, 3);
  EXPECT_TRUE(a_mem->held.empty()) << "the READ's bytes are all placed before it completes";
}

TEST_F(RcCostlyMemoryTest, ASendIsPlacedBeforeItsReceiveCompletes) {
  const uint32_t n = 12 * 1024;
  fill(a, 0, n, 11);
  ASSERT_EQ(post_recv(b, 7, {costly(b, 0x30000, n)}), 0);
  // The completion must find the bytes in place: checked as it is made.
  bool placed_at_completion = false;
  b.rec.at_recv = [&] { placed_at_completion = b_mem->held.empty() && b.read(0x30000, n) == a.read(0, n); };
  ASSERT_EQ(post_send(a, 3, wr_opcode::kSend, {costly(a, 0, n)}), 0);
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].status, wc_status::kSuccess);
  EXPECT_EQ(b.rec.recvs[0].byte_len, n);
  EXPECT_TRUE(placed_at_completion);
  EXPECT_EQ(b_mem->flushes, 1) << "the message's twelve packets written at once";
  EXPECT_EQ(b_mem->writes, 0);
}

TEST_F(RcCostlyMemoryTest, ABufferChangedAfterItsCompletionIsSentAsChanged) {
  // The same buffer sent twice, changed in between as a program may once
  // the first WRITE completed: the second carries the new bytes, not the
  // chunk read for the first.
  const uint32_t n = 4096;
  for (int round = 0; round < 3; ++round) {
    fill(a, 0x2000, n, static_cast<uint8_t>(round * 40 + 1));
    ASSERT_EQ(post_send(a, round, wr_opcode::kRdmaWrite, {costly(a, 0x2000, n)}, send_flag::kSignaled,
                        b.base() + 0x50000, b_key),
              0);
    sim.run();
    ASSERT_EQ(a.rec.sends.size(), static_cast<std::size_t>(round + 1));
    EXPECT_EQ(b.read(0x50000, n), a.read(0x2000, n)) << "round " << round;
  }
}

TEST_F(RcCostlyMemoryTest, AWriteFaultingAtItsFlushIsARemoteAccessError) {
  // The target region reaches past the BufferMemory's end: the write is
  // posted, and found to fault when the message ends.
  const uint32_t n = 3 * 1024;
  const uint32_t past = b.hca->memory().register_region(b.pd, *b_mem, b.base() + kMemSize - 1024, 8192,
                                                        b.base() + kMemSize - 1024, kAllAccess);
  ASSERT_NE(past, 0u);
  ASSERT_EQ(post_send(a, 9, wr_opcode::kRdmaWrite, {costly(a, 0, n)}, send_flag::kSignaled,
                      b.base() + kMemSize - 1024, past),
            0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kRemAccessErr);
}

}  // namespace
}  // namespace ibfab::fabric::testing
