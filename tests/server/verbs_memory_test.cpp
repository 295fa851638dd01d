// VerbsMemory: what a verbs connection registers in its HCA's memory table
// over the client process's memory: keys that reach the bytes, the
// kernel's refusals (EFAULT for an unmapped page, EINVAL for remote write
// without local write, EPERM for a process the engine may not reach,
// logged once), EBUSY for a PD still in use, and nothing left behind.
#include "api/server/verbs_memory.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <string>
#include <vector>

#include "fabric/model/fabric.h"
#include "fabric/model/hca.h"
#include "fabric/topology/topology_spec.h"
#include "sim/simulator.h"

namespace ibfab::api {
namespace {

class VerbsMemoryTest : public ::testing::Test {
 protected:
  VerbsMemoryTest() : topo_(topo::load_topology("line:2:1")), fabric_(sim_, topo_) {
    hca_ = fabric_.find_hca("H1");
  }
  sim::Simulator sim_;
  topo::Topology topo_;
  fabric::Fabric fabric_;
  fabric::Hca* hca_ = nullptr;
};

RegMr region(uint32_t pd, const void* p, std::size_t n, uint32_t access) {
  RegMr r;
  r.addr = r.iova = reinterpret_cast<uint64_t>(p);
  r.length = n;
  r.pd = pd;
  r.access = access;
  return r;
}

TEST_F(VerbsMemoryTest, KeysReachTheProcessMemoryThroughTheTable) {
  std::vector<std::string> said;
  VerbsMemory mem(*hca_, ::getpid(), [&](const std::string& s) { said.push_back(s); });
  const int64_t pd = mem.alloc_pd();
  ASSERT_GT(pd, 0);
  std::array<uint8_t, 64> buf{};
  const int64_t key = mem.reg_mr(region(static_cast<uint32_t>(pd), buf.data(), buf.size(),
                                        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  ASSERT_GT(key, 0);
  fabric::DmaTarget t;
  ASSERT_EQ(hca_->memory().remote(static_cast<uint32_t>(key), static_cast<uint32_t>(pd), 0,
                                  reinterpret_cast<uint64_t>(buf.data()) + 8, 4, fabric::access::kRemoteWrite, t),
            fabric::MemoryFault::kNone);
  const uint8_t in[4] = {1, 2, 3, 4};
  ASSERT_TRUE(t.memory->write(t.addr, in));
  EXPECT_EQ(buf[8], 1);
  EXPECT_EQ(buf[11], 4);
  EXPECT_EQ(mem.dealloc_pd(static_cast<uint32_t>(pd)), -EBUSY);
  EXPECT_EQ(mem.dereg_mr(static_cast<uint32_t>(key)), 0);
  EXPECT_EQ(mem.dereg_mr(static_cast<uint32_t>(key)), -EINVAL);
  EXPECT_EQ(mem.dealloc_pd(static_cast<uint32_t>(pd)), 0);
  EXPECT_TRUE(said.empty());
}

TEST_F(VerbsMemoryTest, TheKernelsRefusals) {
  VerbsMemory mem(*hca_, ::getpid(), nullptr);
  const auto pd = static_cast<uint32_t>(mem.alloc_pd());
  void* map = ::mmap(nullptr, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  ::munmap(static_cast<uint8_t*>(map) + 4096, 4096);
  EXPECT_EQ(mem.reg_mr(region(pd, map, 2 * 4096, IBV_ACCESS_LOCAL_WRITE)), -EFAULT);
  EXPECT_EQ(mem.reg_mr(region(pd, map, 4096, IBV_ACCESS_REMOTE_WRITE)), -EINVAL);
  EXPECT_EQ(mem.reg_mr(region(pd, map, 4096, IBV_ACCESS_REMOTE_ATOMIC)), -EINVAL);
  RegMr shifted = region(pd, map, 4096, IBV_ACCESS_LOCAL_WRITE);
  shifted.iova += 8;  // another offset in the page than the address's
  EXPECT_EQ(mem.reg_mr(shifted), -EINVAL);
  EXPECT_EQ(mem.reg_mr(region(pd + 100, map, 4096, IBV_ACCESS_LOCAL_WRITE)), -EINVAL) << "no such PD";
  EXPECT_EQ(hca_->memory().regions(), 0u);
  ::munmap(map, 4096);
}

TEST_F(VerbsMemoryTest, EverythingGoesWithTheConnection) {
  std::array<uint8_t, 64> buf{};
  {
    VerbsMemory mem(*hca_, ::getpid(), nullptr);
    const auto pd = static_cast<uint32_t>(mem.alloc_pd());
    ASSERT_GT(mem.reg_mr(region(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE)), 0);
    ASSERT_GT(mem.reg_mr(region(pd, buf.data(), 8, 0)), 0);
    AllocMw mw;
    mw.pd = pd;
    mw.type = IBV_MW_TYPE_2;
    ASSERT_GT(mem.alloc_mw(mw), 0);
    EXPECT_EQ(hca_->memory().regions(), 2u);
    EXPECT_EQ(hca_->memory().windows(), 1u);
  }
  EXPECT_EQ(hca_->memory().regions(), 0u);
  EXPECT_EQ(hca_->memory().windows(), 0u);
  EXPECT_EQ(hca_->dealloc_pd(1), EINVAL) << "the PD went too";
}

TEST_F(VerbsMemoryTest, AProcessTheEngineMayNotReachIsEpermLoggedOnce) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  const passwd* nobody = ::getpwnam("nobody");
  if (!nobody) GTEST_SKIP() << "no user nobody";
  // The engine's side runs as nobody; the client (this process) is root's.
  static std::array<uint8_t, 64> buf{};
  const pid_t client = ::getpid();
  const pid_t engine = ::fork();
  if (engine == 0) {
    if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(10);
    int told = 0;
    std::string why;
    VerbsMemory mem(*hca_, client, [&](const std::string& s) {
      ++told;
      why = s;
    });
    const auto pd = static_cast<uint32_t>(mem.alloc_pd());
    const int64_t first = mem.reg_mr(region(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE));
    const int64_t second = mem.reg_mr(region(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE));
    const bool named = why.find("pid " + std::to_string(client)) != std::string::npos &&
                       why.find("ptrace") != std::string::npos;
    ::_exit(first == -EPERM && second == -EPERM && told == 1 && named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(engine, &status, 0), engine);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ibfab::api
