// What posting to an RC QP costs while the engine sleeps (the in-process
// engine, on a thread of this process): a receive makes no system call,
// since the engine takes every QP's receives at the start of each round,
// before it moves any packet; a receive to a QP in error writes the
// doorbell, so that the engine wakes and flushes it.
//
// The verdict comes from the kernel's count of the posting thread's write
// system calls (/proc/thread-self/io, syscw), taken while the engine's
// thread sleeps in poll(2), which it does only with the "sleeping" flag of
// its page set. An attempt during which the engine's thread ran (it left
// poll: its voluntary context switches moved, or it no longer sleeps
// there) says nothing and is made again.
#include <dirent.h>
#include <sys/syscall.h>

#include <fstream>
#include <optional>
#include <string>

#include "api/client/verbs_rings.h"
#include "tests/api/blocked_call.h"
#include "tests/api/busy_processes.h"
#include "tests/api/verbs_fabric.h"

namespace ibfab::testing {
namespace {

// A "NAME: VALUE" field of a /proc file.
uint64_t proc_field(const std::string& path, const std::string& name) {
  std::ifstream in(path);
  std::string key;
  uint64_t value = 0;
  while (in >> key) {
    if (key == name + ":") {
      in >> value;
      return value;
    }
  }
  ADD_FAILURE() << "no " << name << " in " << path;
  return 0;
}

uint64_t write_calls() { return proc_field("/proc/thread-self/io", "syscw"); }

// The thread of this process other than the caller that sleeps in poll(2).
std::optional<pid_t> sleeping_in_poll() {
  const auto self = static_cast<pid_t>(::syscall(SYS_gettid));
  DIR* dir = ::opendir("/proc/self/task");
  std::optional<pid_t> found;
  while (dirent* e = dir ? ::readdir(dir) : nullptr) {
    const pid_t tid = std::atoi(e->d_name);
    if (tid <= 0 || tid == self) continue;
    const long nr = sleeping_in(tid);
    if (nr == SYS_poll || nr == SYS_ppoll) found = tid;
  }
  if (dir) ::closedir(dir);
  return found;
}

uint64_t switches(pid_t tid) {
  return proc_field("/proc/self/task/" + std::to_string(tid) + "/status", "voluntary_ctxt_switches");
}

// The engine's page (api/client/verbs_rings.h), as this process maps it
// ("ibfab-engine", its memfd's name); null if it is not mapped.
const api::rings::EnginePage* engine_page() {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find("/memfd:ibfab-engine ") != std::string::npos)
      return reinterpret_cast<const api::rings::EnginePage*>(std::stoull(line.substr(0, line.find('-')), nullptr, 16));
  return nullptr;
}

uint32_t engine_sleeps_as() {
  const api::rings::EnginePage* page = engine_page();
  return page ? page->sleeping.value.load() : 0;
}

// One attempt: the number of write system calls `post` made while the
// engine slept throughout (in poll(2), marked `how` on its page), or
// nullopt if it did not (it ran meanwhile).
template <class Post>
std::optional<uint64_t> writes_in(pid_t engine, uint32_t how, Post post) {
  const uint64_t before_switches = switches(engine);
  if (engine_sleeps_as() != how) return std::nullopt;
  const uint64_t before = write_calls();
  post();
  const uint64_t writes = write_calls() - before;
  const long nr = sleeping_in(engine);
  if (writes != 0 || ((nr == SYS_poll || nr == SYS_ppoll) && switches(engine) == before_switches)) return writes;
  return std::nullopt;
}

// The number of write system calls `post` made while the engine slept
// throughout, marked plainly asleep (not yielding: EnginePage::kSleeping),
// or nullopt when no attempt in `attempts` had it so.
template <class Post>
std::optional<uint64_t> writes_while_engine_sleeps(Post post, int attempts = 50) {
  for (int i = 0; i < attempts; ++i) {
    std::optional<pid_t> engine;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!((engine = sleeping_in_poll()) && engine_sleeps_as() == api::rings::EnginePage::kSleeping) &&
           std::chrono::steady_clock::now() < end)
      std::this_thread::yield();
    if (!engine) return std::nullopt;
    if (const std::optional<uint64_t> w = writes_in(*engine, api::rings::EnginePage::kSleeping, post)) return w;
  }
  return std::nullopt;
}

class VerbsDoorbell : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { use_embedded_fabric(); }
  void SetUp() override {
    ibv_device* d = device(0);
    ASSERT_NE(d, nullptr);
    ASSERT_NE(ctx_ = ibv_open_device(d), nullptr);
    ASSERT_NE(pd_ = ibv_alloc_pd(ctx_), nullptr);
    ASSERT_NE(cq_ = ibv_create_cq(ctx_, 256, nullptr, nullptr, 0), nullptr);
    constexpr int kLocal = IBV_ACCESS_LOCAL_WRITE;  // an int, as ibv_reg_mr's macro ORs it with another enum's
    ASSERT_NE(mr_ = ibv_reg_mr(pd_, buf_.data(), buf_.size(), kLocal), nullptr);
    ibv_qp_init_attr a{};
    a.send_cq = a.recv_cq = cq_;
    a.cap.max_send_wr = a.cap.max_recv_wr = 128;
    a.cap.max_send_sge = a.cap.max_recv_sge = 1;
    a.qp_type = IBV_QPT_RC;
    ASSERT_NE(qp_ = ibv_create_qp(pd_, &a), nullptr);
    ibv_qp_attr m{};
    m.qp_state = IBV_QPS_INIT;
    m.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(qp_, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
  }
  void TearDown() override {
    if (qp_) ibv_destroy_qp(qp_);
    if (mr_) ibv_dereg_mr(mr_);
    if (cq_) ibv_destroy_cq(cq_);
    if (pd_) ibv_dealloc_pd(pd_);
    if (ctx_) ibv_close_device(ctx_);
  }
  void post_recv() { ASSERT_EQ(post_one_recv(qp_, ++posted_, {addr(), 64, mr_->lkey}), 0); }
  uint64_t addr() { return reinterpret_cast<uint64_t>(buf_.data()); }

  std::vector<uint8_t> buf_ = std::vector<uint8_t>(4096);
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  ibv_qp* qp_ = nullptr;
  uint64_t posted_ = 0;
};

TEST_F(VerbsDoorbell, AReceiveWakesNoSleepingEngine) {
  const std::optional<uint64_t> writes = writes_while_engine_sleeps([&] { post_recv(); });
  ASSERT_TRUE(writes.has_value()) << "the engine never slept throughout a post";
  EXPECT_EQ(*writes, 0u);
}

TEST_F(VerbsDoorbell, AReceiveToAQpInErrorWakesTheEngineWhichFlushesIt) {
  ibv_qp_attr m{};
  m.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(qp_, &m, IBV_QP_STATE), 0);
  const std::optional<uint64_t> writes = writes_while_engine_sleeps([&] { post_recv(); });
  ASSERT_TRUE(writes.has_value()) << "the engine never slept throughout a post";
  EXPECT_EQ(*writes, 1u);  // the doorbell
  const std::vector<ibv_wc> wc = poll_for(cq_, posted_);
  ASSERT_EQ(wc.size(), posted_);
  EXPECT_EQ(wc.back().status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc.back().wr_id, posted_);
}

// Cores made scarce (a busy process on each): the engine's thread, which
// spins while messages flow, is descheduled and yields its core (Engine::
// drive, EnginePage::kYielding). A receive then posted to a QP in error is
// flushed by the posting thread itself: no doorbell, and the flush
// completes. Each attempt first sends a burst of UD messages, to have the
// engine spin, then waits for it to sleep, and posts if it yields. A post
// may still ring the doorbell when the round it ran leaves the engine's
// thread work due sooner than it planned to wake (slow builds: sanitizers);
// the attempts go on until one post needs none.
TEST_F(VerbsDoorbell, WhileTheEngineYieldsThePosterFlushesAQpInErrorWithoutTheDoorbell) {
  Host a(1), b(2);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a.to_rts(), 0);
  ASSERT_EQ(b.to_rts(), 0);
  ibv_ah* ah = a.ah_to(b.lid);
  ASSERT_NE(ah, nullptr);
  ibv_qp_attr m{};
  m.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(qp_, &m, IBV_QP_STATE), 0);
  BusyProcesses busy(BusyProcesses::cpus(), /*pinned=*/true);
  constexpr int kAttempts = 200, kBurst = 200;
  std::optional<uint64_t> writes;
  int yielded = 0;  // attempts that found the engine yielding
  for (int attempt = 0; attempt < kAttempts && !(writes && *writes == 0); ++attempt) {
    for (int i = 0; i < kBurst; ++i) {
      ASSERT_EQ(b.post_recv(1, 0, 256), 0);
      ASSERT_EQ(a.send(ah, b.qp->qp_num, 2, 0, 64), 0);
      ASSERT_EQ(poll_for(b.cq, 1).size(), 1u);
      ASSERT_EQ(poll_for(a.cq, 1).size(), 1u);
    }
    std::optional<pid_t> engine;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(engine = sleeping_in_poll()) && std::chrono::steady_clock::now() < end) std::this_thread::yield();
    ASSERT_TRUE(engine.has_value()) << "the engine never slept";
    if (engine_sleeps_as() != api::rings::EnginePage::kYielding) continue;
    ++yielded;
    writes = writes_in(*engine, api::rings::EnginePage::kYielding, [&] { post_recv(); });
  }
  ibv_destroy_ah(ah);
  ASSERT_TRUE(writes.has_value()) << "in " << kAttempts << " bursts, the engine was found yielding " << yielded
                                  << " times, and never stayed asleep throughout a post";
  EXPECT_EQ(*writes, 0u) << "every post while the engine yielded (" << yielded << ") rang the doorbell";
  const std::vector<ibv_wc> wc = poll_for(cq_, posted_);
  ASSERT_EQ(wc.size(), posted_);
  EXPECT_EQ(wc.back().status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc.back().wr_id, posted_);
}

}  // namespace
}  // namespace ibfab::testing
