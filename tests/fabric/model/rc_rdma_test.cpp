// RC one-sided operations: RDMA WRITE (with immediate) and READ of 1 B to
// 1 MiB landing in registered memory, and the atomics (original values
// returned, memory updated, atomic against each other across QPs).
#include <gtest/gtest.h>

#include "tests/fabric/model/rc_fixture.h"

namespace ibfab::fabric::testing {
namespace {

class RcRdmaTest : public RcFixture, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(RcRdmaTest, WriteLandsInTheTargetsMemory) {
  const uint32_t n = GetParam();
  connect();
  fill(a, 0x100, n, 9);
  ASSERT_EQ(post_send(a, 5, wr_opcode::kRdmaWrite, {sge(a, 0x100, n)}, send_flag::kSignaled, b.base() + 0x300, b.key),
            0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[0].opcode, wc_opcode::kRdmaWrite);
  EXPECT_EQ(a.rec.sends[0].wr_id, 5u);
  EXPECT_EQ(b.read(0x300, n), a.read(0x100, n));
  EXPECT_EQ(*b.at(0x300 + n), 0) << "nothing past the end";
  EXPECT_TRUE(b.rec.recvs.empty()) << "a WRITE consumes no receive";
}

TEST_P(RcRdmaTest, WriteWithImmediateConsumesAReceive) {
  const uint32_t n = GetParam();
  connect();
  fill(a, 0, n, 1);
  ASSERT_EQ(post_recv(b, 42, {}), 0);
  SendWr wr;
  wr.wr_id = 6;
  wr.opcode = wr_opcode::kRdmaWriteWithImm;
  wr.flags = send_flag::kSignaled;
  wr.imm_data = 0xCAFE0001;
  wr.remote_addr = b.base() + 8;
  wr.rkey = b.key;
  ASSERT_EQ(post(a, wr, {sge(a, 0, n)}), 0);
  sim.run();
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].status, wc_status::kSuccess);
  EXPECT_EQ(b.rec.recvs[0].opcode, wc_opcode::kRecvRdmaWithImm);
  EXPECT_EQ(b.rec.recvs[0].wr_id, 42u);
  EXPECT_EQ(b.rec.recvs[0].imm_data, 0xCAFE0001u);
  EXPECT_EQ(b.rec.recvs[0].wc_flags, wc_flag::kWithImm);
  EXPECT_EQ(b.rec.recvs[0].byte_len, n);
  EXPECT_EQ(b.read(8, n), a.read(0, n));
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
}

TEST_P(RcRdmaTest, ReadBringsTheRemoteBytes) {
  const uint32_t n = GetParam();
  connect();
  fill(b, 0x40, n, 77);
  // Into two local SGEs.
  const uint32_t half = n / 2;
  ASSERT_EQ(post_send(a, 8, wr_opcode::kRdmaRead, {sge(a, 0x10, half), sge(a, 0x200000, n - half)},
                      send_flag::kSignaled, b.base() + 0x40, b.key),
            0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 1u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[0].opcode, wc_opcode::kRdmaRead);
  EXPECT_EQ(a.rec.sends[0].byte_len, n);
  EXPECT_EQ(a.read(0x10, half) + a.read(0x200000, n - half), b.read(0x40, n));
}

INSTANTIATE_TEST_SUITE_P(Sizes, RcRdmaTest, ::testing::Values(1u, 1023u, 1024u, 1025u, 65536u, 1u << 20),
                         [](const auto& info) { return std::to_string(info.param) + "B"; });

class RcAtomicTest : public RcFixture {};

uint64_t word(Host& x, uint64_t offset) {
  uint64_t v;
  std::memcpy(&v, x.at(offset), 8);
  return v;
}
void set_word(Host& x, uint64_t offset, uint64_t v) { std::memcpy(x.at(offset), &v, 8); }

int post_atomic(RcFixture& t, Host& from, Host& to, uint64_t wr_id, uint8_t op, uint64_t local, uint64_t remote,
                uint64_t compare_add, uint64_t swap) {
  SendWr wr;
  wr.wr_id = wr_id;
  wr.opcode = op;
  wr.flags = send_flag::kSignaled;
  wr.remote_addr = to.base() + remote;
  wr.rkey = to.key;
  wr.compare_add = compare_add;
  wr.swap = swap;
  return t.post(from, wr, {t.sge(from, local, 8)});
}

TEST_F(RcAtomicTest, CompareAndSwapAndFetchAndAdd) {
  connect(8);
  set_word(b, 0x1000, 100);
  ASSERT_EQ(post_atomic(*this, a, b, 1, wr_opcode::kAtomicCmpAndSwp, 0, 0x1000, 99, 7), 0);   // no match
  ASSERT_EQ(post_atomic(*this, a, b, 2, wr_opcode::kAtomicCmpAndSwp, 8, 0x1000, 100, 7), 0);  // match
  ASSERT_EQ(post_atomic(*this, a, b, 3, wr_opcode::kAtomicFetchAndAdd, 16, 0x1000, 5, 0), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 3u);
  EXPECT_EQ(a.rec.sends[0].opcode, wc_opcode::kCompSwap);
  EXPECT_EQ(a.rec.sends[2].opcode, wc_opcode::kFetchAdd);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a.rec.sends[i].status, wc_status::kSuccess);
    EXPECT_EQ(a.rec.sends[i].wr_id, i + 1);
  }
  EXPECT_EQ(word(a, 0), 100u);
  EXPECT_EQ(word(a, 8), 100u);
  EXPECT_EQ(word(a, 16), 7u);
  EXPECT_EQ(word(b, 0x1000), 12u);
}

TEST_F(RcAtomicTest, TwoRequestersFetchAndAddOneCounterExactly) {
  // H1 and H8 each add to a counter on H2, 1000 times, through their own QP.
  QpOptions o;
  o.caps = QpCaps{1024, 16, 1, 1, 0};
  make_host(a, 1, 0x10000000);
  make_host(b, 2, 0x20000000);
  Host c, b2;
  make_host(c, 8, 0x30000000);
  b2.hca = b.hca;
  b2.pd = b.pd;
  b2.key = b.key;
  create_qp(a, o);
  create_qp(b, o);
  create_qp(c, o);
  create_qp(b2, o);
  bring_up(a, b, o);
  bring_up(b, a, o);
  bring_up(c, b2, o);
  bring_up(b2, c, o);
  b2.mem = nullptr;
  set_word(b, 0x800, 1'000'000);
  for (uint32_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(post_atomic(*this, a, b, i, wr_opcode::kAtomicFetchAndAdd, 8 * i, 0x800, 1, 0), 0);
    // c reaches b's memory through b2, a QP of the same HCA and PD.
    ASSERT_EQ(post_atomic(*this, c, b, i, wr_opcode::kAtomicFetchAndAdd, 8 * i, 0x800, 3, 0), 0);
  }
  sim.run();
  EXPECT_EQ(word(b, 0x800), 1'000'000u + 1000 * 1 + 1000 * 3);
  ASSERT_EQ(a.rec.sends.size(), 1000u);
  ASSERT_EQ(c.rec.sends.size(), 1000u);
  // Every original value is distinct across both requesters: no add was
  // lost or seen twice.
  std::vector<uint64_t> seen;
  for (uint32_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(a.rec.sends[i].status, wc_status::kSuccess);
    ASSERT_EQ(c.rec.sends[i].status, wc_status::kSuccess);
    seen.push_back(word(a, 8 * i));
    seen.push_back(word(c, 8 * i));
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());
  EXPECT_EQ(seen.front(), 1'000'000u);
}

TEST_F(RcAtomicTest, SendWithInvalidateRetiresATypeTwoWindow) {
  connect();
  // B: a window of type 2 over part of a region that allows binding,
  // bound to B's QP.
  const uint32_t mr = b.hca->memory().register_region(b.pd, *b.mem, b.base() + 0x8000, 0x1000, b.base() + 0x8000,
                                                      kAllAccess | access::kMwBind);
  ASSERT_NE(mr, 0u);
  const uint32_t window = b.hca->memory().allocate_window(b.pd, 2);
  uint32_t rkey = 0;
  ASSERT_EQ(b.hca->memory().bind_window(window, 0x42, mr, b.pd, b.qpn, b.base() + 0x8000, 0x1000,
                                        access::kRemoteWrite, rkey),
            MemoryFault::kNone);
  // A writes through the window, then sends with invalidate.
  fill(a, 0, 64, 5);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kRdmaWrite, {sge(a, 0, 64)}, send_flag::kSignaled, b.base() + 0x8000, rkey), 0);
  ASSERT_EQ(post_recv(b, 9, {sge(b, 0, 64)}), 0);
  SendWr wr;
  wr.wr_id = 2;
  wr.opcode = wr_opcode::kSendWithInv;
  wr.flags = send_flag::kSignaled;
  wr.invalidate_rkey = rkey;
  ASSERT_EQ(post(a, wr, {sge(a, 0, 16)}), 0);
  sim.run();
  EXPECT_EQ(b.read(0x8000, 64), a.read(0, 64));
  ASSERT_EQ(b.rec.recvs.size(), 1u);
  EXPECT_EQ(b.rec.recvs[0].wc_flags, wc_flag::kWithInv);
  EXPECT_EQ(b.rec.recvs[0].imm_data, rkey);
  EXPECT_EQ(b.rec.recvs[0].byte_len, 16u);
  // The window is gone: a WRITE through it now faults.
  ASSERT_EQ(post_send(a, 3, wr_opcode::kRdmaWrite, {sge(a, 0, 8)}, send_flag::kSignaled, b.base() + 0x8000, rkey), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 3u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[1].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[2].status, wc_status::kRemAccessErr);
}

TEST_F(RcAtomicTest, BindMwAndLocalInvalidateGoThroughTheSendQueue) {
  connect();
  const uint32_t mr = b.hca->memory().register_region(b.pd, *b.mem, b.base() + 0x8000, 0x1000, b.base() + 0x8000,
                                                      kAllAccess | access::kMwBind);
  const uint32_t window = b.hca->memory().allocate_window(b.pd, 2);
  SendWr bind;
  bind.wr_id = 10;
  bind.opcode = wr_opcode::kBindMw;
  bind.flags = send_flag::kSignaled;
  bind.bind = MwBind{window, 0x37, mr, b.base() + 0x8000, 0x100, access::kRemoteWrite};
  ASSERT_EQ(post(b, bind, {}), 0);
  sim.run();
  ASSERT_EQ(b.rec.sends.size(), 1u);
  EXPECT_EQ(b.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(b.rec.sends[0].opcode, wc_opcode::kBindMw);
  const uint32_t rkey = (window & ~0xFFu) | 0x37;
  fill(a, 0, 0x100, 8);
  ASSERT_EQ(post_send(a, 1, wr_opcode::kRdmaWrite, {sge(a, 0, 0x100)}, send_flag::kSignaled, b.base() + 0x8000, rkey),
            0);
  sim.run();
  EXPECT_EQ(b.read(0x8000, 0x100), a.read(0, 0x100));
  SendWr inv;
  inv.wr_id = 11;
  inv.opcode = wr_opcode::kLocalInv;
  inv.flags = send_flag::kSignaled;
  inv.invalidate_rkey = rkey;
  ASSERT_EQ(post(b, inv, {}), 0);
  sim.run();
  ASSERT_EQ(b.rec.sends.size(), 2u);
  EXPECT_EQ(b.rec.sends[1].status, wc_status::kSuccess);
  EXPECT_EQ(b.rec.sends[1].opcode, wc_opcode::kLocalInv);
  ASSERT_EQ(post_send(a, 2, wr_opcode::kRdmaWrite, {sge(a, 0, 8)}, send_flag::kSignaled, b.base() + 0x8000, rkey), 0);
  sim.run();
  ASSERT_EQ(a.rec.sends.size(), 2u);
  EXPECT_EQ(a.rec.sends[0].status, wc_status::kSuccess);
  EXPECT_EQ(a.rec.sends[1].status, wc_status::kRemAccessErr);
}

TEST_F(RcAtomicTest, BindMwOnARegionWithoutMwBindFails) {
  connect();
  const uint32_t window = b.hca->memory().allocate_window(b.pd, 2);
  SendWr bind;
  bind.wr_id = 10;
  bind.opcode = wr_opcode::kBindMw;
  bind.bind = MwBind{window, 0x37, b.key, b.base(), 0x100, access::kRemoteWrite};  // b.key lacks kMwBind
  ASSERT_EQ(post(b, bind, {}), 0);
  sim.run();
  ASSERT_EQ(b.rec.sends.size(), 1u);
  EXPECT_EQ(b.rec.sends[0].status, wc_status::kMwBindErr) << "unsignalled, but an error";
  EXPECT_EQ(b.hca->qp_state(b.qpn), QpState::kError);
}

}  // namespace
}  // namespace ibfab::fabric::testing
