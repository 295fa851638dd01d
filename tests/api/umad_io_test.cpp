// libibumad's MAD I/O through the built library on an in-process fabric
// (IBFAB_TOPOLOGY=fat-tree:2:4, this process on H3): what umad_recv returns
// and leaves in errno, and that a blocking umad_recv is a cancellation
// point (OpenSM cancels its receive thread).
#include <gtest/gtest.h>
#include <infiniband/umad.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

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

void* blocked_recv(void* fd) {
  std::vector<uint8_t> u(umad_size() + 256);
  int len = 256;
  umad_recv(*static_cast<int*>(fd), u.data(), &len, -1);  // waits for ever
  return nullptr;
}

TEST_F(UmadIo, ABlockingRecvIsACancellationPoint) {
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, nullptr, blocked_recv, &fd_), 0);
  ::usleep(50'000);  // let it block in umad_recv
  ASSERT_EQ(pthread_cancel(t), 0);
  void* result = nullptr;
  ASSERT_EQ(pthread_join(t, &result), 0);
  EXPECT_EQ(result, PTHREAD_CANCELED);
}

}  // namespace
