// libibumad's MAD I/O through the built library on an in-process fabric
// (IBFAB_TOPOLOGY=fat-tree:2:4, this process on H3): what umad_recv returns
// and leaves in errno, that a blocking umad_recv is a cancellation point
// (OpenSM cancels its receive thread), and that threads sharing a port
// (OpenSM's SA answers while its SM thread sends SMPs) send and receive
// whole messages.
#include <gtest/gtest.h>
#include <infiniband/umad.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "fabric/wire/byte_cursor.h"
#include "tests/api/blocked_call.h"
#include "tests/api/embedded_port.h"

namespace {

class UmadIo : public ibfab::testing::EmbeddedPort {
 protected:
  void SetUp() override {
    EmbeddedPort::SetUp();
    agent_ = umad_register(fd_, 0x03, 2, 0, nullptr);
    ASSERT_GE(agent_, 0);
  }
  int agent_ = -1;
};

TEST_F(UmadIo, NothingQueuedIsEagainOrEtimedoutWithErrno) {
  std::vector<uint8_t> u(umad_size() + 256);
  int len = 256;
  errno = 0;
  EXPECT_EQ(umad_recv(fd_, u.data(), &len, 0), -EAGAIN);
  EXPECT_EQ(errno, EAGAIN);
  errno = 0;
  EXPECT_EQ(umad_recv(fd_, u.data(), &len, 20), -ETIMEDOUT);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_EQ(umad_poll(fd_, 0), -ETIMEDOUT);
}

TEST_F(UmadIo, SendRejectsWhatIsNoMadAndAgentsItDoesNotHave) {
  std::vector<uint8_t> u(umad_size() + 512, 0);
  EXPECT_EQ(umad_send(fd_, agent_, u.data(), 10, 100, 0), -EINVAL) << "shorter than a MAD header";
  EXPECT_EQ(umad_send(fd_, agent_, u.data(), 300, 100, 0), -EINVAL) << "longer than a MAD, no RMPP";
  EXPECT_EQ(umad_send(fd_, agent_ + 5, u.data(), 256, 100, 0), -EINVAL) << "not our agent";
}

struct BlockedRecv {
  int fd = -1;
  std::atomic<pid_t> tid{0};
  std::atomic<bool> returned{false};
};

void* blocked_recv(void* arg) {
  auto* r = static_cast<BlockedRecv*>(arg);
  r->tid = static_cast<pid_t>(::syscall(SYS_gettid));
  std::vector<uint8_t> u(umad_size() + 256);
  int len = 256;
  umad_recv(r->fd, u.data(), &len, -1);  // waits for ever
  r->returned = true;
  return nullptr;
}

TEST_F(UmadIo, ABlockingRecvIsACancellationPoint) {
  BlockedRecv r;
  r.fd = fd_;
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, nullptr, blocked_recv, &r), 0);
  while (r.tid.load() == 0) std::this_thread::yield();
  // Cancelled while it waits in umad_recv's poll, not before it gets there.
  EXPECT_TRUE(ibfab::testing::wait_until_asleep(r.tid.load(), {SYS_poll, SYS_ppoll}, r.returned));
  ASSERT_EQ(pthread_cancel(t), 0);
  void* result = nullptr;
  ASSERT_EQ(pthread_join(t, &result), 0);
  EXPECT_EQ(result, PTHREAD_CANCELED);
}

// Message k of the concurrency test: an SA GetMulti (RMPP Active, so the
// RMPP layer segments it, and the receiver's ACKs find the sending agent by
// TID bits 63:32, as for any request) of 56 + data_size(k) bytes, with TID
// k and a data pattern of its own; every third one is longer than a
// fragment of the client protocol (96 KiB), so it leaves the library in
// several packets.
constexpr int kSenders = 4;
constexpr int kPerSender = 6;
std::size_t data_size(uint32_t k) { return k % 3 == 0 ? 150'000 + 37 * k : 200 + 97 * k; }
uint8_t pattern(uint32_t k, std::size_t i) { return static_cast<uint8_t>(k * 31 + i * 7); }

std::vector<uint8_t> get_multi(uint32_t k, uint16_t dlid) {
  std::vector<uint8_t> u(umad_size() + 56 + data_size(k), 0);
  umad_set_addr(u.data(), dlid, 1, 0, 0x80010000);
  auto* m = static_cast<uint8_t*>(umad_get_mad(u.data()));
  m[0] = 1;
  m[1] = 0x03;
  m[2] = 2;
  m[3] = 0x14;  // GetMulti
  ibfab::wire::store_be64(&m[8], k);
  ibfab::wire::store_be16(&m[16], 0x0038);  // MCMemberRecord
  m[24] = 1;     // RMPP version
  m[26] = 0x01;  // Active
  for (std::size_t i = 0; i < data_size(k); ++i) m[56 + i] = pattern(k, i);
  return u;
}

TEST_F(UmadIo, ThreadsSharingAPortSendAndReceiveWholeMessages) {
  const int sender = umad_register(fd_, 0x03, 2, 1, nullptr);
  ASSERT_GE(sender, 0);
  // The receiving end: host H4's port (ibfab3 in this embedded process),
  // taking GetMulti requests with kernel RMPP.
  const int rfd = umad_open_port("ibfab3", 1);
  ASSERT_GE(rfd, 0);
  umad_port_t p;
  ASSERT_EQ(umad_get_port("ibfab3", 1, &p), 0);
  const auto dlid = static_cast<uint16_t>(p.base_lid);
  umad_release_port(&p);
  long mask[16 / sizeof(long)] = {};
  mask[0] = 1L << 0x14;
  ASSERT_GE(umad_register(rfd, 0x03, 2, 1, mask), 0);

  std::vector<std::thread> threads;
  std::atomic<int> send_errors{0};
  for (int t = 0; t < kSenders; ++t)
    threads.emplace_back([&, t] {
      for (int j = 0; j < kPerSender; ++j) {
        const auto k = static_cast<uint32_t>(t * kPerSender + j + 1);
        std::vector<uint8_t> u = get_multi(k, dlid);
        if (umad_send(fd_, sender, u.data(), static_cast<int>(u.size() - umad_size()), 0, 0) != 0) ++send_errors;
      }
    });
  // Two readers share the receiving port; between them every message
  // arrives once, whole, within 30 s.
  std::atomic<int> received{0}, broken{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<std::atomic<int>> seen(kSenders * kPerSender + 1);
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&] {
      std::vector<uint8_t> u(umad_size() + 56 + data_size(kSenders * kPerSender) + 200'000);
      while (received.load() + broken.load() < kSenders * kPerSender && std::chrono::steady_clock::now() < deadline) {
        int len = static_cast<int>(u.size() - umad_size());
        const int got = umad_recv(rfd, u.data(), &len, 200);
        if (got == -ETIMEDOUT || got == -EAGAIN) continue;
        const auto* m = static_cast<const uint8_t*>(umad_get_mad(u.data()));
        const auto k = static_cast<uint32_t>(ibfab::wire::load_be64(&m[8]));
        bool whole = got >= 0 && k >= 1 && k < seen.size() && static_cast<std::size_t>(len) == 56 + data_size(k);
        for (std::size_t i = 0; whole && i < data_size(k); ++i) whole = m[56 + i] == pattern(k, i);
        if (whole && seen[k]++ == 0) ++received;
        else ++broken;
      }
    });
  for (std::thread& t : threads) t.join();
  umad_close_port(rfd);
  EXPECT_EQ(send_errors.load(), 0);
  EXPECT_EQ(broken.load(), 0) << "a message torn, mixed with another or received twice";
  EXPECT_EQ(received.load(), kSenders * kPerSender);
}

}  // namespace
