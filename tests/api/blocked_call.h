#pragma once
// "A call blocks", shown without timing: a thread of the test makes the
// call; the test waits until the kernel says that thread sleeps in the
// system call the library blocks in (/proc/self/task/TID/syscall), acts,
// and then checks the order of events: the call returned only after the
// action that releases it. A wait has a deadline only to fail the test
// instead of hanging it.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <thread>

namespace ibfab::testing {

// The system call thread `tid` of this process sleeps in, or -1 when it
// runs or is not in one.
inline long sleeping_in(pid_t tid) {
  const std::string task = "/proc/self/task/" + std::to_string(tid);
  std::ifstream stat(task + "/stat");
  std::string line;
  std::getline(stat, line);
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'S') return -1;
  std::ifstream syscall(task + "/syscall");
  long nr = -1;
  return syscall >> nr ? nr : -1;
}

// Waits until thread `tid` sleeps in one of `calls` (SYS_ numbers), or
// `done` is set; whether it sleeps there.
inline bool wait_until_asleep(pid_t tid, std::initializer_list<long> calls, const std::atomic<bool>& done,
                              std::chrono::seconds deadline = std::chrono::seconds(60)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (!done.load() && std::chrono::steady_clock::now() < end) {
    const long nr = sleeping_in(tid);
    for (long c : calls)
      if (nr == c) return !done.load();
    std::this_thread::yield();
  }
  return false;
}

// Runs `call` on a thread of its own, expects it to block on a futex (a
// condition variable: the library's waits), runs `release`, and expects
// the call to return `want` after that, not before.
inline void expect_waits_for(const std::function<int()>& call, const std::function<void()>& release, int want = 0) {
  std::atomic<int> events{0}, released_at{0}, returned_at{0};
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::atomic<int> status{-2};
  std::thread t([&] {
    tid = static_cast<pid_t>(::syscall(SYS_gettid));
    status = call();
    returned_at = ++events;
    done = true;
  });
  while (tid.load() == 0) std::this_thread::yield();
  EXPECT_TRUE(wait_until_asleep(tid.load(), {SYS_futex}, done)) << "the call did not wait";
  released_at = ++events;
  release();
  t.join();
  EXPECT_LT(released_at.load(), returned_at.load()) << "the call returned before it was released";
  EXPECT_EQ(status.load(), want);
}

}  // namespace ibfab::testing
