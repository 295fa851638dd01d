// ProcessMemory: the engine's reach into a client process's memory, on a
// real child process: its registered buffer read and written, an unmapped
// address faulting (false, EFAULT) without harm, and a process of another
// user refused with EPERM.
#include "api/server/process_memory.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

namespace ibfab::api {
namespace {

struct Addresses {
  uint64_t buffer = 0;    // 3 pages of an mmap, bytes i % 251
  uint64_t stack = 0;     // 64 bytes on the child's stack, 0xA5
  uint64_t unmapped = 0;  // a page the child mapped and unmapped
};
constexpr std::size_t kBuffer = 3 * 4096;

// A child that maps its buffers, says where they are, waits for the word
// to check, and exits 0 when it finds the parent's writes (1 otherwise).
class Child {
 public:
  Child() {
    EXPECT_EQ(::pipe(to_parent_), 0);
    EXPECT_EQ(::pipe(to_child_), 0);
    pid_ = ::fork();
    if (pid_ == 0) run();
    ::close(to_parent_[1]);
    ::close(to_child_[0]);
    EXPECT_EQ(::read(to_parent_[0], &addresses_, sizeof addresses_), static_cast<ssize_t>(sizeof addresses_));
  }
  ~Child() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(to_parent_[0]);
    ::close(to_child_[1]);
  }
  pid_t pid() const { return pid_; }
  const Addresses& at() const { return addresses_; }
  // Lets the child check; its exit status.
  int finish() {
    const char go = 1;
    EXPECT_EQ(::write(to_child_[1], &go, 1), 1);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
  }

 private:
  [[noreturn]] void run() {
    std::array<uint8_t, 64> stack;
    stack.fill(0xA5);
    auto* buf = static_cast<uint8_t*>(::mmap(nullptr, kBuffer, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    for (std::size_t i = 0; i < kBuffer; ++i) buf[i] = static_cast<uint8_t>(i % 251);
    void* gone = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ::munmap(gone, 4096);
    Addresses a{reinterpret_cast<uint64_t>(buf), reinterpret_cast<uint64_t>(stack.data()),
                reinterpret_cast<uint64_t>(gone)};
    (void)!::write(to_parent_[1], &a, sizeof a);
    char go;
    (void)!::read(to_child_[0], &go, 1);
    // The parent wrote "engine" at buffer + 4000 (across the page boundary
    // at 4096 when longer) and 0x5A over the stack bytes' first 8.
    const bool ok = std::memcmp(buf + 4093, "engine", 6) == 0 && stack[0] == 0x5A && stack[7] == 0x5A &&
                    stack[8] == 0xA5;
    ::_exit(ok ? 0 : 1);
  }
  int to_parent_[2] = {-1, -1};
  int to_child_[2] = {-1, -1};
  pid_t pid_ = -1;
  bool waited_ = false;
  Addresses addresses_;
};

TEST(ProcessMemory, ReadsAndWritesAnotherProcess) {
  Child child;
  ProcessMemory mem(child.pid());
  std::vector<uint8_t> got(kBuffer);
  ASSERT_TRUE(mem.read(child.at().buffer, got));
  for (std::size_t i = 0; i < kBuffer; ++i) ASSERT_EQ(got[i], i % 251) << i;
  std::array<uint8_t, 64> stack{};
  ASSERT_TRUE(mem.read(child.at().stack, stack));
  EXPECT_EQ(stack[0], 0xA5);
  EXPECT_EQ(stack[63], 0xA5);
  const uint8_t word[] = {'e', 'n', 'g', 'i', 'n', 'e'};
  ASSERT_TRUE(mem.write(child.at().buffer + 4093, word));  // across a page boundary
  std::array<uint8_t, 8> mark;
  mark.fill(0x5A);
  ASSERT_TRUE(mem.write(child.at().stack, mark));
  EXPECT_EQ(mem.check_readable(child.at().buffer, kBuffer), 0);
  EXPECT_EQ(child.finish(), 0);
}

TEST(ProcessMemory, UnmappedAddressFaultsWithoutHarm) {
  Child child;
  ProcessMemory mem(child.pid());
  std::array<uint8_t, 16> out{};
  EXPECT_FALSE(mem.read(child.at().unmapped, out));
  EXPECT_FALSE(mem.write(child.at().unmapped, out));
  EXPECT_FALSE(mem.read(0, out));
  EXPECT_EQ(mem.check_readable(child.at().unmapped, 4096), EFAULT);
  EXPECT_EQ(mem.check_readable(0, 1), EFAULT);
  EXPECT_EQ(mem.check_readable(~0ull - 10, 100), EFAULT);  // wraps around
  // A range whose every page but the last is mapped: the last one counts.
  EXPECT_EQ(mem.check_readable(child.at().buffer, kBuffer + (1ull << 40)), EFAULT);
  // The child is unharmed and its memory still reachable.
  ASSERT_TRUE(mem.read(child.at().buffer, out));
  EXPECT_EQ(out[1], 1);
  const uint8_t word[] = {'e', 'n', 'g', 'i', 'n', 'e'};
  ASSERT_TRUE(mem.write(child.at().buffer + 4093, word));
  std::array<uint8_t, 8> mark;
  mark.fill(0x5A);
  ASSERT_TRUE(mem.write(child.at().stack, mark));
  EXPECT_EQ(child.finish(), 0);
}

TEST(ProcessMemory, RegionsOfManyPagesAreCheckedInBatches) {
  // More pages than one IOV_MAX batch, in this process (embedded mode).
  const std::size_t pages = 2500;
  void* m = ::mmap(nullptr, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  const auto base = reinterpret_cast<uint64_t>(m);
  ProcessMemory self(::getpid());
  EXPECT_EQ(self.check_readable(base + 100, pages * 4096 - 100), 0);
  ASSERT_EQ(::munmap(static_cast<uint8_t*>(m) + 2200 * 4096, 4096), 0);  // a hole in the third batch
  EXPECT_EQ(self.check_readable(base, pages * 4096), EFAULT);
  EXPECT_EQ(self.check_readable(base, 2200 * 4096), 0);
  const uint8_t in[3] = {1, 2, 3};
  ASSERT_TRUE(self.write(base + 5, in));
  EXPECT_EQ(static_cast<uint8_t*>(m)[6], 2);
  ::munmap(m, pages * 4096);
}

TEST(ProcessMemory, PostedWritesLandByTheFlushOrTheNextAccess) {
  // This process (embedded mode): a message's packets posted one after the
  // other land together at flush(), not before.
  std::vector<uint8_t> target(3 * ProcessMemory::kChunk, 0);
  const auto base = reinterpret_cast<uint64_t>(target.data());
  ProcessMemory self(::getpid());
  std::vector<uint8_t> packet(4096);
  for (std::size_t i = 0; i < 4; ++i) {
    std::fill(packet.begin(), packet.end(), static_cast<uint8_t>(i + 1));
    ASSERT_TRUE(self.write_posted(base + i * 4096, packet));
  }
  EXPECT_EQ(target[0], 0);  // held
  EXPECT_EQ(target[3 * 4096], 0);
  ASSERT_TRUE(self.flush());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(target[i * 4096 + 4095], i + 1) << i;
  EXPECT_TRUE(self.flush());  // nothing left: nothing to fail

  // A write elsewhere, or a read, writes out what was posted before it.
  std::fill(packet.begin(), packet.end(), 9);
  ASSERT_TRUE(self.write_posted(base + 8 * 4096, packet));
  std::array<uint8_t, 1> one{};
  ASSERT_TRUE(self.read(base + 8 * 4096 + 10, one));
  EXPECT_EQ(one[0], 9);
  ASSERT_TRUE(self.write_posted(base + 16 * 4096, packet));
  ASSERT_TRUE(self.write_posted(base + 40 * 4096, packet));  // not contiguous
  EXPECT_EQ(target[16 * 4096], 9);
  EXPECT_EQ(target[40 * 4096], 0);
  ASSERT_TRUE(self.flush());
  EXPECT_EQ(target[40 * 4096], 9);

  // More than a chunk of contiguous packets: each full chunk goes out, and
  // every byte lands in order.
  for (std::size_t i = 0; i < 2 * ProcessMemory::kChunk / 4096 + 3; ++i) {
    std::fill(packet.begin(), packet.end(), static_cast<uint8_t>(i * 7 + 1));
    ASSERT_TRUE(self.write_posted(base + i * 4096, packet));
  }
  ASSERT_TRUE(self.flush());
  for (std::size_t i = 0; i < 2 * ProcessMemory::kChunk / 4096 + 3; ++i)
    ASSERT_EQ(target[i * 4096 + 100], static_cast<uint8_t>(i * 7 + 1)) << i;
}

TEST(ProcessMemory, APostedWriteThatFaultsFailsItsFlush) {
  void* m = ::mmap(nullptr, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  const auto base = reinterpret_cast<uint64_t>(m);
  ASSERT_EQ(::munmap(static_cast<uint8_t*>(m) + 4096, 4096), 0);
  ProcessMemory self(::getpid());
  std::vector<uint8_t> packet(4096, 7);
  ASSERT_TRUE(self.write_posted(base, packet));
  ASSERT_TRUE(self.write_posted(base + 4096, packet));  // the unmapped page: found at the flush
  EXPECT_FALSE(self.flush());
  EXPECT_EQ(static_cast<uint8_t*>(m)[0], 7);  // the bytes before the fault were written
  // A failure written out by another access is reported by the next flush.
  ASSERT_TRUE(self.write_posted(base + 4096, packet));
  std::array<uint8_t, 1> one{};
  ASSERT_TRUE(self.read(base, one));
  EXPECT_FALSE(self.flush());
  EXPECT_TRUE(self.flush());
  ::munmap(m, 4096);
}

TEST(ProcessMemory, AnotherUsersProcessIsRefusedWithEperm) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  const passwd* nobody = ::getpwnam("nobody");
  if (!nobody) GTEST_SKIP() << "no user nobody";
  // The engine side runs as nobody; the process it reaches (this one) is root's.
  const pid_t target = ::getpid();
  const uint64_t addr = reinterpret_cast<uint64_t>(&target);
  const pid_t engine = ::fork();
  if (engine == 0) {
    if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(10);
    ProcessMemory mem(target);
    std::array<uint8_t, 4> out;
    const int e = mem.check_readable(addr, sizeof target);
    const bool read = mem.read(addr, out);
    ::_exit(e == EPERM && !read ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(engine, &status, 0), engine);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ibfab::api
